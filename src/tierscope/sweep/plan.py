"""A sweep's plan: ``plan.toml``, read into a :class:`Plan` whose configurations each carry the Vertex AI
CustomJob body that runs them and the hardware it describes.

The keys (``docs/sweep.md`` shows them with an example)::

    id = "calibration-1"            # the sweep's id; default: the file's stem and 8 hex digits of its bytes
    project = "my-project"           # Google Cloud project (Vertex AI)
    region = "us-central1"           # where the jobs run and which price rows apply
    staging_bucket = "gs://b/sweeps" # Vertex AI's staging bucket
    dataset = "tierscope-data"       # the dataset the runs are collected into (relative: to the plan's folder)
    work_dir = "runs/sweeps"         # local runs and failure logs (relative: to the plan's folder)
    budget = 25.0                    # USD; --budget overrides it
    prices = ["my-prices.csv"]       # price files over the shipped rows

    [job]                            # the reference trainer (default) ...
    batch_size = 100
    image = "us-central1-docker.pkg.dev/P/tierscope/trainer:latest"
    # ... or a container of your own: image = "...", args = ["--epochs", "1"]

    [run]                            # each calibration run
    steps = 300                      # the reference trainer stops there
    minutes = 20                     # every run's time cap; the estimate prices this long

    [[configuration]]                # a scale tier's topology on Vertex AI machines ...
    tier = "STANDARD_1"
    machine_type = "n1-standard-4"
    [[configuration]]                # ... or machines described
    name = "3-workers-t4"
    machine_type = "n1-standard-8"
    workers = 3
    accelerator = "NVIDIA_TESLA_T4:1"

A configuration may also be a bare tier name in ``configuration = ["BASIC", "STANDARD_1"]``. Errors are one
line naming the file, the line where it can be found, and the key.
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tierscope.analysis import jobspec, machines
from tierscope.errors import UsageError
from tierscope.sweep.errors import SweepError
from tierscope.sweep.launchers import label_value, swept_run_id

#: Defaults (each a key of the plan).
REGION = "us-central1"
MACHINE_TYPE = "n1-standard-4"
DATASET = "tierscope-data"
WORK_DIR = "runs/sweeps"
BATCH_SIZE = 100
#: The reference trainer logs a record this often (global steps) in a sweep's runs: short calibration runs
#: need enough records for a steady rate.
LOG_EVERY_STEPS = 10
#: The longest ``[run] minutes`` a plan may give: 7 days, Vertex AI's default (and longest usual) running time
#: of a CustomJob (``scheduling.timeout``, https://cloud.google.com/vertex-ai/docs/reference/rest/v1/
#: CustomJobSpec#scheduling, read 2026-12-06). A calibration run is minutes long; a week or more is a typo, and
#: would be priced (and put in the budget) as that long.
MAX_MINUTES = 7 * 24 * 60

_TOP_KEYS = {"id", "project", "region", "staging_bucket", "dataset", "work_dir", "budget", "prices", "job", "run",
             "configuration"}  # fmt: skip
_JOB_KEYS = {"trainer", "image", "args", "batch_size", "log_every_steps", "data"}
_RUN_KEYS = {"steps", "minutes"}
_CONFIG_KEYS = {"name", "tier", "machine_type", "workers", "ps", "ps_machine_type", "accelerator", "tpu", "spot"}
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")


class PlanError(SweepError, UsageError):
    """A plan that does not parse or names what does not exist: ``file:line: what; what to do``."""


@dataclass(frozen=True)
class Configuration:
    """One configuration of a sweep: its ``name`` (its run's ``config`` fact), the ``tier`` it was given as
    (None: machines described), the ``hardware`` its job runs on, ``job``, the Vertex AI CustomJob body
    (``displayName``, ``jobSpec``) without labels (the launcher adds them), and ``run_id``, the id of its run
    (:func:`~tierscope.sweep.launchers.swept_run_id`: unique per sweep and configuration)."""

    name: str
    tier: str | None
    hardware: machines.Hardware
    job: dict[str, Any]
    workers: int = 0
    ps: int = 0
    run_id: str = ""


@dataclass(frozen=True)
class Plan:
    """A parsed plan; paths resolved against the plan's folder. ``minutes``: every run's time cap (None: none
    given); ``steps``: the reference trainer's steps (None for a container of the user's own)."""

    path: Path
    sweep_id: str
    configurations: tuple[Configuration, ...]
    region: str = REGION
    project: str | None = None
    staging_bucket: str | None = None
    dataset: Path = Path(DATASET)
    work_dir: Path = Path(WORK_DIR)
    budget: float | None = None
    prices: tuple[Path, ...] = ()
    steps: int | None = None
    minutes: float | None = None
    reference_trainer: bool = True
    image: str = ""
    batch_size: int = BATCH_SIZE
    extra: dict[str, Any] = field(default_factory=dict)

    def configuration(self, name: str) -> Configuration:
        for c in self.configurations:
            if c.name == name:
                return c
        raise KeyError(name)


class _Where:
    """Line numbers of keys in the plan's text (tomllib gives none): the first line setting ``key`` after the
    ``n``-th header of ``section`` (or at the top)."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()

    def line(self, key: str | None, section: str | None = None, index: int = 0) -> int | None:
        start = 0
        if section is not None:
            header = re.compile(rf"^\s*\[\[?\s*{re.escape(section)}\s*\]\]?\s*(#.*)?$")
            found = [i for i, text in enumerate(self.lines) if header.match(text)]
            if index < len(found):
                start = found[index]
            elif key is None:
                return None
        if key is None:
            return start + 1
        setting = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for i in range(start, len(self.lines)):
            if i > start and section is not None and self.lines[i].lstrip().startswith("["):
                break
            if setting.match(self.lines[i]) or re.search(rf"[{{,]\s*{re.escape(key)}\s*=", self.lines[i]):
                return i + 1
        return None

    def error(self, message: str, key: str | None = None, section: str | None = None, index: int = 0) -> PlanError:
        line = self.line(key, section, index)
        return PlanError(f"{self.path}{f':{line}' if line else ''}: {message}")


def load_plan(path: Path) -> Plan:
    """The plan in ``path``. Raises :class:`PlanError` (one line: file, line, key) for a file that cannot be
    read or parsed, an unknown key or configuration, or values that do not fit together."""
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
        doc = tomllib.loads(text)
    except OSError as exc:
        raise PlanError(f"cannot read the plan {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text; save the plan as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        line = re.search(r"line (\d+)", str(exc))
        raise PlanError(f"{path}{f':{line[1]}' if line else ''}: not valid TOML ({exc})") from None
    where = _Where(path, text)
    return parse_plan(doc, where, hashlib.sha256(data).hexdigest()[:8])


def _unknown(doc: dict[str, Any], known: set[str], where: _Where, section: str | None, index: int = 0) -> None:
    for key in doc:
        if key not in known:
            inside = f" in [{section}]" if section else ""
            raise where.error(
                f"unknown key {key!r}{inside}; known: {', '.join(sorted(known))} (see docs/sweep.md)",
                key,
                section,
                index,
            )


def _number(
    value: object, key: str, where: _Where, section: str | None, low: float, whole: bool = False,
    high: float | None = None,
) -> float:  # fmt: skip
    """``value`` if it is a finite number (a whole one if ``whole``) from ``low`` to ``high``, else a
    :class:`PlanError` at its line (TOML's ``inf`` and ``nan`` are numbers too)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or (whole and not isinstance(value, int)):
        kind = "a whole number" if whole else "a number"
        raise where.error(f"{key} must be {kind}, got {value!r}", key, section)
    if not math.isfinite(value):
        raise where.error(f"{key} must be a finite number, got {value!r}", key, section)
    if not value >= low:
        raise where.error(f"{key} must be at least {low:g}, got {value!r}", key, section)
    if high is not None and value > high:
        raise where.error(f"{key} must be at most {high:g}, got {value!r}", key, section)
    return value


def _text(value: object, key: str, where: _Where, section: str | None = None, index: int = 0) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(f"{key} must be a non-empty string, got {value!r}", key, section, index)
    return value.strip()


def parse_plan(doc: dict[str, Any], where: _Where, digest: str) -> Plan:
    """A :class:`Plan` from the parsed TOML ``doc`` (see :func:`load_plan`)."""
    from tierscope.trainer import spec

    _unknown(doc, _TOP_KEYS, where, None)
    folder = where.path.parent
    sweep_id = doc.get("id", f"{where.path.stem}-{digest}")
    if not isinstance(sweep_id, str) or not _ID.match(sweep_id):
        raise where.error(
            f"id {sweep_id!r} must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit", "id"
        )
    job = doc.get("job", {})
    if not isinstance(job, dict):
        raise where.error("job must be a table: [job]", "job")
    _unknown(job, _JOB_KEYS, where, "job")
    run = doc.get("run", {})
    if not isinstance(run, dict):
        raise where.error("run must be a table: [run]", "run")
    _unknown(run, _RUN_KEYS, where, "run")
    trainer = job.get("trainer", "reference" if "args" not in job else None)
    if trainer not in ("reference", None):
        raise where.error(f"job.trainer {trainer!r}: the only trainer shipped is 'reference'", "trainer", "job")
    reference = trainer == "reference"
    if not reference and "image" not in job:
        raise where.error('job.args run a container of your own: name it with job.image = "..."', "args", "job")
    image = job.get("image", spec.IMAGE if reference else None)
    image = _text(image, "image", where, "job") if image is not None or not reference else spec.IMAGE
    args = job.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise where.error("job.args must be a list of strings", "args", "job")
    if reference and args:
        raise where.error("job.args are for a container of your own; the reference trainer takes [run] steps and "
                          "[job] batch_size (or drop trainer = 'reference')", "args", "job")  # fmt: skip
    steps = run.get("steps")
    if steps is not None:
        steps = int(_number(steps, "steps", where, "run", 1, whole=True))
    if reference and steps is None:
        raise where.error("[run] needs steps: how many steps each run of the reference trainer trains", "run", None)
    minutes = run.get("minutes")
    if minutes is not None:
        minutes = float(_number(minutes, "minutes", where, "run", 0.1, high=MAX_MINUTES))
    if not reference and minutes is None:
        raise where.error("[run] needs minutes for a container of your own: each run's time cap", "run", None)
    batch_size = int(_number(job.get("batch_size", BATCH_SIZE), "batch_size", where, "job", 1, whole=True))
    log_every = int(_number(job.get("log_every_steps", LOG_EVERY_STEPS), "log_every_steps", where, "job", 1, True))
    budget = doc.get("budget")
    if budget is not None:
        budget = float(_number(budget, "budget", where, None, 0))
    region = _text(doc.get("region", REGION), "region", where)
    prices = doc.get("prices", [])
    if isinstance(prices, str):
        prices = [prices]
    if not isinstance(prices, list) or not all(isinstance(p, str) for p in prices):
        raise where.error("prices must be a file name or a list of them", "prices")
    base = Plan(
        path=where.path,
        sweep_id=sweep_id,
        configurations=(),
        region=region,
        project=_text(doc["project"], "project", where) if "project" in doc else None,
        staging_bucket=_text(doc["staging_bucket"], "staging_bucket", where) if "staging_bucket" in doc else None,
        dataset=folder / _text(doc.get("dataset", DATASET), "dataset", where),
        work_dir=folder / _text(doc.get("work_dir", WORK_DIR), "work_dir", where),
        budget=budget,
        prices=tuple(folder / p for p in prices),
        steps=steps,
        minutes=minutes,
        reference_trainer=reference,
        image=image,
        batch_size=batch_size,
        extra={"args": list(args), "log_every_steps": log_every, "data": _data(job, reference, where)},
    )
    if inside(base.work_dir, base.dataset):
        key = "dataset" if "dataset" in doc else "work_dir"
        raise where.error(
            f"work_dir {base.work_dir} lies inside the dataset {base.dataset}: the local jobs, failure notes and "
            "the report would be written into the dataset; give each a folder of its own "
            f"(dataset = {DATASET!r}, work_dir = {WORK_DIR!r})",
            key,
        )
    return replace(base, configurations=_configurations(doc.get("configuration"), base, where))


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or lies under it (both resolved: ``.`` and ``..`` and links count)."""
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _data(job: dict[str, Any], reference: bool, where: _Where) -> str:
    """``[job] data``: the reference trainer's data set, one it knows (:data:`tierscope.trainer.data.DATASETS`)."""
    from tierscope.trainer.data import DATASETS

    if "data" not in job:
        return DATASETS[0]
    if not reference:
        raise where.error("job.data is the reference trainer's data set; a container of your own takes job.args",
                          "data", "job")  # fmt: skip
    data = job["data"]
    if not isinstance(data, str) or data not in DATASETS:
        raise where.error(f"job.data must be one of {', '.join(map(repr, DATASETS))}, got {data!r}", "data", "job")
    return data


def _configurations(raw: object, plan: Plan, where: _Where) -> tuple[Configuration, ...]:
    if raw is None or (isinstance(raw, list) and not raw):
        raise where.error("the plan names no configuration: add [[configuration]] tables (tier = 'BASIC', ...)")
    items = raw if isinstance(raw, list) else [raw]
    found: list[Configuration] = []
    labels: dict[str, str] = {}
    for index, item in enumerate(items):
        conf = _configuration(item, index, plan, where)
        if any(c.name == conf.name for c in found):
            raise where.error(f"configuration {conf.name!r} is named twice; give each a name", "name",
                              "configuration", index)  # fmt: skip
        label = label_value(conf.name)
        if label in labels:
            raise where.error(
                f"configurations {labels[label]!r} and {conf.name!r} get the same Vertex AI label {label!r} "
                "(lowercase, other characters as '-'); rename one", "name", "configuration", index
            )  # fmt: skip
        labels[label] = conf.name
        found.append(conf)
    return tuple(found)


def _configuration(item: object, index: int, plan: Plan, where: _Where) -> Configuration:
    section = "configuration"
    if isinstance(item, str):
        item = {"tier": item}
    if not isinstance(item, dict):
        raise where.error(f"configuration {index + 1} must be a tier name or a table", section, None)
    for key in item:
        if key not in _CONFIG_KEYS:
            raise where.error(
                f"configuration {index + 1}: unknown key {key!r}; known: {', '.join(sorted(_CONFIG_KEYS))} "
                "(see docs/sweep.md)", key, section, index
            )  # fmt: skip
    tier = item.get("tier")
    if tier is not None and ({"workers", "ps"} & set(item)):
        raise where.error(f"configuration {index + 1}: a tier fixes workers and ps; give one or the other", "tier",
                          section, index)  # fmt: skip
    try:
        return _build(item, index, plan)
    except (ValueError, SweepError) as exc:  # the trainer's and the machines table's errors are ValueErrors
        named = re.search(r"^(\w+) must be", str(exc))  # a key's own check names it: point at its line
        keys = ("tier", "accelerator", "tpu", "machine_type", "workers", "ps")
        key = named[1] if named and named[1] in item else next((k for k in keys if k in item), None)
        raise where.error(f"configuration {index + 1}: {exc}", key, section, index) from None


def _build(item: dict[str, Any], index: int, plan: Plan) -> Configuration:
    from tierscope.trainer.tiers import get_tier

    tier = item.get("tier")
    if tier is not None:
        if not isinstance(tier, str):
            raise ValueError(f"tier must be a string, got {tier!r}")
        known = get_tier(tier)
        tier, workers, ps = known.name, known.topology.workers, known.topology.ps
    else:
        workers, ps = item.get("workers", 0), item.get("ps", 0)
        for key, value in (("workers", workers), ("ps", ps)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{key} must be a whole number >= 0, got {value!r}")
        if ps and not workers:
            raise ValueError("parameter servers need at least one worker (workers = N)")
    name = item.get("name", tier)
    if name is None:
        raise ValueError("machines described need a name, the run's id: name = 'four-t4'")
    if not isinstance(name, str) or not _ID.match(name):
        raise ValueError(f"name {name!r} must be 1-63 letters, digits, '.', '_' or '-' (it names the run)")
    spot = item.get("spot", False)
    if not isinstance(spot, bool):
        raise ValueError(f"spot must be true or false, got {spot!r}")
    machine = item.get("machine_type", MACHINE_TYPE)
    accelerator, tpu = item.get("accelerator"), item.get("tpu")
    for key, value in (("machine_type", machine), ("accelerator", accelerator), ("tpu", tpu)):
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{key} must be a string, got {value!r}")
    one = machines.from_options(None if tpu and "machine_type" not in item else machine, accelerator, tpu, spot)
    assert one is not None  # a machine type is always given (the default's)
    chief = one.pools[0]
    pools = [chief]
    if workers:
        pools.append(replace(chief, role="worker", replicas=workers))
    if ps:
        ps_machine = item.get("ps_machine_type", MACHINE_TYPE if tpu or accelerator else chief.machine_type)
        if not isinstance(ps_machine, str):
            raise ValueError(f"ps_machine_type must be a string, got {ps_machine!r}")
        pools.append(machines.check_pool(machines.pool("ps", ps_machine, ps, spot=spot)))
    hardware = machines.Hardware(tuple(pools))
    run_id = swept_run_id(plan.sweep_id, name)
    job = job_body(plan, run_id, tier, hardware, workers, ps)
    jobspec.read(job, f"configuration {name}")  # the body reads back as the hardware (raises if it cannot)
    return Configuration(name=name, tier=tier, hardware=hardware, job=job, workers=workers, ps=ps, run_id=run_id)


def job_body(
    plan: Plan, run_id: str, tier: str | None, hardware: machines.Hardware, workers: int, ps: int
) -> dict[str, Any]:
    """The CustomJob body of one configuration: one pool per role of ``hardware`` (chief, workers, parameter
    servers, in Vertex AI's order), each running the plan's image with the reference trainer's arguments (its
    run id ``run_id``) or the plan's own; ``scheduling.timeout`` the run's time cap, ``SPOT`` when
    the hardware is spot. For a tier, the body is :func:`tierscope.trainer.spec.vertex_job`'s."""
    from tierscope.trainer import spec
    from tierscope.trainer.task import task_args
    from tierscope.trainer.tiers import CUSTOM
    from tierscope.trainer.train import TrainConfig

    args = list(plan.extra.get("args", []))
    config = None
    if plan.reference_trainer:
        config = TrainConfig(
            run_id=run_id,
            tier=tier or CUSTOM,
            steps=plan.steps or 1,
            batch_size=plan.batch_size,
            dataset=plan.extra.get("data", "synthetic"),
            log_every_steps=plan.extra.get("log_every_steps", LOG_EVERY_STEPS),
        )
        args = task_args(config)
    if tier is not None and config is not None:
        body = spec.vertex_job(
            tier, config, image=plan.image, machine_spec=machines.machine_spec(hardware.pools[0]), spot=hardware.spot
        )
    else:
        pools = [
            {
                "machineSpec": machines.machine_spec(p),
                "replicaCount": str(p.replicas),
                "containerSpec": {"imageUri": plan.image, "args": args},
            }
            for p in hardware.pools
        ]
        if ps and not workers:  # unreachable (checked), kept so Vertex's pool order is never silently wrong
            raise ValueError("parameter servers need a worker pool before them")
        body = {"displayName": run_id, "jobSpec": {"workerPoolSpecs": pools}}
        if hardware.spot:
            body["jobSpec"]["scheduling"] = {"strategy": "SPOT"}
    if plan.minutes is not None:
        scheduling = body["jobSpec"].setdefault("scheduling", {})
        scheduling["timeout"] = f"{round(plan.minutes * 60)}s"
    return body
