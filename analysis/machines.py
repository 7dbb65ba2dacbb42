"""What a run ran on: its worker pools, and what every machine type, accelerator and TPU slice is.

A run's hardware is a tuple of :class:`Pool` (one per role: Vertex AI's worker pools, the legacy
tiers' master/worker/ps): a machine type times replicas, each replica with a number of accelerators
of one type (GPUs, or the TPU chips of a TPU VM), spot or on-demand, in a region.

What each name means is one table shipped as data, ``data/machines.csv`` (columns ``name, kind,
vcpus, memory_gb, accelerator, accelerator_count, chips, topology, host, source``), every row citing
where its facts come from. ``kind``:

- ``machine``: a Vertex AI / Compute Engine machine type; ``accelerator`` and ``accelerator_count``
  are the GPUs it bundles (a2, a3, g2) or, for a TPU VM (ct5lp-...), its TPU generation and chips.
- ``legacy``: an AI Platform machine type of the scale-tier era (``standard``, ``complex_model_s``...).
- ``gpu`` / ``tpu``: an accelerator by its Vertex AI ``AcceleratorType`` name; ``memory_gb`` per device.
- ``tpu_slice``: a TPU slice by its Cloud TPU name (``v5litepod-8``): its chips, topology and the machine
  type that hosts it on Vertex AI (``host``); ``accelerator_count`` what Vertex AI's acceleratorCount is
  for it (TensorCores for v2/v3), empty where the machine type says it all.

A device is a GPU or a TPU chip. Vertex AI counts TPU v2 and v3 in TensorCores, two a chip
(:data:`CORES_PER_CHIP`): ``acceleratorCount: 8`` on ``cloud-tpu`` is a v2-8, four chips.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
from dataclasses import asdict, dataclass, replace
from functools import cache
from importlib.resources import files

from tierscope.analysis.errors import AnalysisError
from tierscope.dataset.schema import TRAINING_ROLES
from tierscope.errors import UsageError

#: The machines table (module doc).
MACHINES_CSV = files("tierscope.analysis") / "data" / "machines.csv"
KINDS = ("machine", "legacy", "gpu", "tpu", "tpu_slice")
#: TPU generations Vertex AI counts in TensorCores (acceleratorCount), two a chip.
CORES_PER_CHIP = {"TPU_V2": 2, "TPU_V3": 2}
#: What a role of Vertex AI's worker pools is, by position: workerPoolSpecs[0] is the chief.
POOL_ROLES = ("chief", "worker", "ps", "evaluator")


class UnknownMachineError(AnalysisError, UsageError, ValueError):
    """A machine type, accelerator or TPU slice the machines table does not know; the message lists the
    nearest known names."""


class HardwareError(AnalysisError, UsageError, ValueError):
    """A pool that cannot be: a negative count, an accelerator count without a type, a TPU generation
    given as a GPU."""


@dataclass(frozen=True)
class Spec:
    """One row of the machines table (see the module doc)."""

    name: str
    kind: str
    vcpus: int | None
    memory_gb: float | None
    accelerator: str | None
    accelerator_count: int | None
    chips: int | None
    topology: str | None
    host: str | None
    source: str


def _number(text: str, kind: type) -> int | float | None:
    return kind(text) if text.strip() else None


@cache
def catalog() -> dict[str, Spec]:
    """Every row of the machines table by name (machine types lower case, accelerators upper case)."""
    rows = csv.DictReader(io.StringIO(MACHINES_CSV.read_text(encoding="utf-8")))
    out: dict[str, Spec] = {}
    for row in rows:
        out[row["name"]] = Spec(
            name=row["name"],
            kind=row["kind"],
            vcpus=_number(row["vcpus"], int),  # type: ignore[arg-type]
            memory_gb=_number(row["memory_gb"], float),
            accelerator=row["accelerator"] or None,
            accelerator_count=_number(row["accelerator_count"], int),  # type: ignore[arg-type]
            chips=_number(row["chips"], int),  # type: ignore[arg-type]
            topology=row["topology"] or None,
            host=row["host"] or None,
            source=row["source"],
        )
    return out


def names(*kinds: str) -> list[str]:
    """The known names of these kinds (all kinds: none given), in table order."""
    return [s.name for s in catalog().values() if not kinds or s.kind in kinds]


def _unknown(what: str, name: str, kinds: tuple[str, ...]) -> UnknownMachineError:
    known = names(*kinds)
    by_lower = {k.lower(): k for k in known}
    # a substring first (``A100`` -> NVIDIA_TESLA_A100), then spelling
    near = [k for k in known if name.strip().lower() in k.lower()][:4] or [
        by_lower[k] for k in difflib.get_close_matches(name.strip().lower(), list(by_lower), n=4, cutoff=0.5)
    ]
    hint = f"nearest known: {', '.join(near)}" if near else f"known: {', '.join(known[:12])}, ..."
    return UnknownMachineError(f"unknown {what} {name!r}; {hint} (`tierscope machines` lists them all)")


def machine(name: str) -> Spec:
    """The machine type ``name`` (a Vertex AI one or a legacy one). Raises :class:`UnknownMachineError`."""
    spec = catalog().get(name.strip().lower()) or catalog().get(name.strip())
    if spec is None or spec.kind not in ("machine", "legacy"):
        raise _unknown("machine type", name, ("machine", "legacy"))
    return spec


def accelerator(name: str) -> Spec:
    """The accelerator ``name`` (Vertex AI's AcceleratorType, e.g. ``NVIDIA_TESLA_T4``; case and ``-`` are
    forgiven). Raises :class:`UnknownMachineError`."""
    key = name.strip().upper().replace("-", "_")
    spec = catalog().get(key)
    if spec is None or spec.kind not in ("gpu", "tpu"):
        raise _unknown("accelerator", name, ("gpu", "tpu"))
    return spec


def tpu_slice(name: str) -> Spec:
    """The TPU slice ``name`` (``v5litepod-8``; ``v5e-8`` is taken for it). Raises :class:`UnknownMachineError`."""
    key = name.strip().lower().replace("v5e-", "v5litepod-")
    spec = catalog().get(key)
    if spec is None or spec.kind != "tpu_slice":
        raise _unknown("TPU slice", name, ("tpu_slice",))
    return spec


@dataclass(frozen=True)
class Pool:
    """``replicas`` machines of ``machine_type`` in ``role`` (chief/master, worker, ps, evaluator), each with
    ``accelerator_count`` accelerators of type ``accelerator`` (Vertex AI's count: TensorCores for TPU v2/v3,
    chips for a TPU VM), TPU ``tpu_topology`` (``2x4``), ``spot`` or on-demand, in ``region`` (None: the
    analysis' region)."""

    role: str
    machine_type: str
    replicas: int = 1
    accelerator: str | None = None
    accelerator_count: int = 0
    tpu_topology: str | None = None
    spot: bool = False
    region: str | None = None

    @property
    def devices_per_replica(self) -> int:
        """GPUs or TPU chips on one replica."""
        if self.accelerator is None:
            return 0
        return self.accelerator_count // CORES_PER_CHIP.get(self.accelerator, 1)

    @property
    def devices(self) -> int:
        """GPUs or TPU chips of the pool."""
        return self.replicas * self.devices_per_replica

    @property
    def legacy(self) -> bool:
        return catalog()[self.machine_type].kind == "legacy"


def pool(
    role: str,
    machine_type: str,
    replicas: int = 1,
    accelerator_type: str | None = None,
    accelerator_count: int | None = None,
    tpu_topology: str | None = None,
    spot: bool = False,
    region: str | None = None,
) -> Pool:
    """A checked :class:`Pool`: the machine type and accelerator known, a machine's bundled accelerators
    filled in when not given (``a2-highgpu-8g``: 8 x NVIDIA_TESLA_A100; ``ct5lp-hightpu-8t``: 8 TPU v5e
    chips, topology 2x4). Raises :class:`UnknownMachineError` or :class:`HardwareError`."""
    spec = machine(machine_type)
    if replicas < 0 or (accelerator_count is not None and accelerator_count < 0):
        raise HardwareError(f"{role}: replica and accelerator counts must be >= 0, got {replicas}, {accelerator_count}")
    if accelerator_type is None and accelerator_count:
        raise HardwareError(f"{role}: {accelerator_count} accelerators of no type; give their type too")
    kind = accelerator(accelerator_type).name if accelerator_type else None
    if kind is None and spec.accelerator:
        kind, accelerator_count = spec.accelerator, spec.accelerator_count
        tpu_topology = tpu_topology or spec.topology
    elif kind is not None and spec.accelerator and kind != spec.accelerator:
        raise HardwareError(f"{role}: {spec.name} comes with {spec.accelerator_count} x {spec.accelerator}, not {kind}")
    count = accelerator_count if accelerator_count is not None else (1 if kind else 0)
    return Pool(role, spec.name, replicas, kind, count, tpu_topology, spot, region)


def slice_pool(name: str, spot: bool = False, region: str | None = None, role: str = "chief") -> Pool:
    """The pool a TPU slice runs on in Vertex AI (``v5litepod-8``: one ct5lp-hightpu-8t, 8 chips, 2x4)."""
    spec = tpu_slice(name)
    assert spec.host is not None and spec.accelerator is not None  # every slice row names both
    count = spec.accelerator_count or spec.chips or 0
    return pool(role, spec.host, 1, spec.accelerator, count, spec.topology, spot, region)


@dataclass(frozen=True)
class Hardware:
    """A run's worker pools, chief first."""

    pools: tuple[Pool, ...]

    @property
    def training(self) -> tuple[Pool, ...]:
        """The pools that compute steps (chief/master and workers)."""
        return tuple(p for p in self.pools if p.role in TRAINING_ROLES)

    @property
    def device_type(self) -> str | None:
        """The accelerator type of the training pools; ``mixed`` for more than one; None: CPUs only."""
        kinds = {p.accelerator for p in self.training if p.devices}
        return None if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"

    @property
    def devices(self) -> int:
        """GPUs or TPU chips of the training pools (0: CPUs only)."""
        return sum(p.devices for p in self.training)

    @property
    def legacy(self) -> bool:
        """Every pool is of the scale-tier era's machine types (priced in ML units)."""
        return bool(self.pools) and all(p.legacy for p in self.pools)

    @property
    def spot(self) -> bool:
        return any(p.spot for p in self.pools)

    def describe(self) -> str:
        """One line: ``1 x n1-standard-8 + 1 x NVIDIA_TESLA_T4`` per pool, pools joined by ``; ``."""
        parts = []
        for p in self.pools:
            text = f"{p.replicas} x {p.machine_type}"
            if p.accelerator:
                text += f" ({p.accelerator_count} x {p.accelerator}"
                text += f", {p.tpu_topology})" if p.tpu_topology else ")"
            if p.spot:
                text += " spot"
            parts.append(f"{p.role} {text}" if len(self.pools) > 1 else text)
        return "; ".join(parts)

    def to_json(self) -> str:
        """The runs table's ``topology`` JSON: ``{role: {"machine_type", "count", ...}}`` (only what is set)."""
        doc: dict[str, dict[str, object]] = {}
        for p in self.pools:
            entry: dict[str, object] = {"machine_type": p.machine_type, "count": p.replicas}
            if p.accelerator:
                entry |= {"accelerator_type": p.accelerator, "accelerator_count": p.accelerator_count}
            if p.tpu_topology:
                entry["tpu_topology"] = p.tpu_topology
            if p.spot:
                entry["spot"] = True
            if p.region:
                entry["region"] = p.region
            doc[p.role] = entry
        return json.dumps(doc, sort_keys=False)


def from_topology(text: str) -> Hardware:
    """The hardware of a runs-table ``topology`` JSON (:meth:`Hardware.to_json`; the older form with only
    ``machine_type`` and ``count`` too). Raises :class:`UnknownMachineError`, :class:`HardwareError`."""
    pools = []
    for role, entry in json.loads(text).items():
        pools.append(
            pool(
                role,
                entry["machine_type"],
                int(entry.get("count", 1)),
                entry.get("accelerator_type"),
                entry.get("accelerator_count"),
                entry.get("tpu_topology"),
                bool(entry.get("spot", False)),
                entry.get("region"),
            )
        )
    return Hardware(tuple(pools))


def from_tier(rows: list[tuple[str, int, str]]) -> Hardware:
    """A legacy tier's pools from its composition rows ``(role, count, machine_type)`` (:mod:`tierscope.tiertable`)."""
    return Hardware(tuple(pool(role, machine_type, count) for role, count, machine_type in rows if count))


def with_region(hardware: Hardware, region: str | None, spot: bool | None = None) -> Hardware:
    """``hardware`` with every pool's region (where it has none) and spot flag (where given) set."""
    pools = tuple(replace(p, region=p.region or region, spot=p.spot if spot is None else spot) for p in hardware.pools)
    return Hardware(pools)


def as_rows(spec: Spec) -> dict[str, object]:
    """A spec as a plain dict (JSON output)."""
    return asdict(spec)


def parse_accelerator(text: str) -> tuple[str, int]:
    """``--accelerator TYPE[:COUNT]`` (``NVIDIA_TESLA_T4:1``; count 1 when left out) -> ``(type, count)``.
    Raises :class:`UnknownMachineError`, :class:`HardwareError`."""
    name, _, count = text.partition(":")
    if count and not count.strip().isdigit():
        raise HardwareError(
            f"--accelerator {text!r}: the count after ':' must be a whole number, e.g. NVIDIA_TESLA_T4:1"
        )
    return accelerator(name).name, int(count) if count else 1


def from_options(
    machine_type: str | None = None,
    accelerator_text: str | None = None,
    tpu: str | None = None,
    spot: bool = False,
    region: str | None = None,
) -> Hardware | None:
    """The one-pool hardware of ``--machine``, ``--accelerator TYPE:COUNT``, ``--tpu SLICE``, ``--spot`` and
    ``--region`` (None: none of the first three given). Raises :class:`UnknownMachineError`, :class:`HardwareError`."""
    if tpu is not None:
        if accelerator_text is not None:
            raise HardwareError("--tpu names its chips already; leave --accelerator out")
        chosen = slice_pool(tpu, spot, region)
        if machine_type is not None and machine(machine_type).name != chosen.machine_type:
            raise HardwareError(f"--tpu {tpu} runs on {chosen.machine_type}, not --machine {machine_type}")
        return Hardware((chosen,))
    if machine_type is None:
        if accelerator_text is not None:
            raise HardwareError("--accelerator needs --machine, the machine type it is attached to (n1-standard-8)")
        return None
    kind, count = parse_accelerator(accelerator_text) if accelerator_text else (None, None)
    return Hardware((pool("chief", machine_type, 1, kind, count, spot=spot, region=region),))


def machine_spec(p: Pool) -> dict[str, object]:
    """Vertex AI's ``machineSpec`` of a pool: ``machineType``, and ``acceleratorType``/``acceleratorCount`` for
    GPUs (bundled ones too: Vertex AI asks for them) and TPU v2/v3, ``tpuTopology`` for a TPU VM."""
    spec: dict[str, object] = {"machineType": p.machine_type}
    tpu_vm = catalog()[p.machine_type].chips is not None
    if p.accelerator and not tpu_vm:
        spec |= {"acceleratorType": p.accelerator, "acceleratorCount": p.accelerator_count}
    if p.tpu_topology and tpu_vm:
        spec["tpuTopology"] = p.tpu_topology
    return spec
