"""``tierscope train local`` and ``tierscope spec``: thin wrappers over :mod:`tierscope.trainer`.

Importing this module imports neither TensorFlow nor numpy: the tasks the launcher starts do.
It reads only the trainer's standard-library modules (roles, tiers) for the help.
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from importlib.util import find_spec
from pathlib import Path
from typing import Annotated

import typer

from tierscope.cli.common import App, QuietOpt, check_out_dir, err_console, seconds_option
from tierscope.errors import TierscopeError, UsageError
from tierscope.trainer.roles import STRATEGIES
from tierscope.trainer.tiers import tiers

#: :data:`tierscope.trainer.data.DATASETS` and :data:`tierscope.trainer.steplog.LOG_FORMATS`, spelled
#: out so ``--help`` imports neither numpy nor the collector (tests/cli/test_startup.py checks them).
DATASETS = ("synthetic", "mnist")
LOG_FORMATS = ("json", "text", "off")

train_app = App(help="Run the reference TensorFlow trainer.", no_args_is_help=True)

StrategyChoice = Enum("StrategyChoice", {s: s for s in STRATEGIES}, type=str)  # type: ignore[misc]
DatasetChoice = Enum("DatasetChoice", {s: s for s in DATASETS}, type=str)  # type: ignore[misc]

#: ``--data`` of ``train local`` and of ``spec``: their defaults differ (a local run needs no download; a cloud
#: job runs the 2016 experiment's data), and each help says so.
LocalDataOpt = Annotated[
    DatasetChoice,
    typer.Option(
        "--data",
        help="The training data: synthetic, or mnist (downloaded once through Keras). Synthetic by default, "
        "which needs no download; `spec` defaults to mnist, the data of the 2016 experiment.",
    ),
]
SpecDataOpt = Annotated[
    DatasetChoice,
    typer.Option(
        "--data",
        help="The training data: mnist (default: the 2016 experiment's, as a cloud job can download it) or "
        "synthetic (the default of `train local`, which needs no download).",
    ),
]
FormatChoice = Enum("FormatChoice", {s: s for s in LOG_FORMATS}, type=str)  # type: ignore[misc]
TIER_NAMES = ", ".join(tiers())

#: ``--dataset`` of the trainer is ``--data`` since 0.x: everywhere else ``--dataset`` is the
#: Parquet directory. The old name works for one release, with this note.
DATASET_DEPRECATED = "Deprecated: the same as --data (--dataset is the Parquet directory everywhere else)."


def deprecated_dataset(dataset: DatasetChoice | None, data: DatasetChoice) -> DatasetChoice:
    """``--data``, or the deprecated ``--dataset`` with a note on stderr."""
    if dataset is None:
        return data
    err_console().print(
        f"note: --dataset {DatasetChoice(dataset).value} is now --data {DatasetChoice(dataset).value} "
        "(--dataset names the Parquet directory in every other command); the old name goes in the next release",
        highlight=False,
        soft_wrap=True,
    )
    return dataset


#: The trainer extra's TensorFlow (pyproject.toml, ``trainer``), by machine: a test checks they agree.
TENSORFLOW = {"x86_64": "tensorflow-cpu>=2.16"}
TENSORFLOW_ELSEWHERE = "tensorflow>=2.16"


def missing_tensorflow() -> str:
    """What to run when TensorFlow is missing: pip for this very interpreter, the extra's
    requirement by name, which works from a checkout and from an installed package alike."""
    import platform

    need = TENSORFLOW.get(platform.machine(), TENSORFLOW_ELSEWHERE)
    return f"TensorFlow is not installed (the core install leaves it out): {sys.executable} -m pip install '{need}'"


@train_app.command("local")
def local_cmd(
    tier: Annotated[
        str | None, typer.Option(help=f"Run a scale tier's topology: {TIER_NAMES}.", metavar="TIER")
    ] = None,
    workers: Annotated[
        int | None, typer.Option(help="Workers beside the chief (custom topology).", min=0, metavar="N")
    ] = None,
    ps: Annotated[int | None, typer.Option(help="Parameter servers (custom topology).", min=0, metavar="N")] = None,
    strategy: Annotated[
        StrategyChoice | None, typer.Option(help="Default: ps with parameter servers, mirrored with workers.")
    ] = None,
    steps: Annotated[int, typer.Option(help="Training steps.", min=1, metavar="N")] = 1000,
    batch_size: Annotated[int, typer.Option(help="Examples per step per worker.", min=1, metavar="N")] = 100,
    data: LocalDataOpt = "synthetic",  # type: ignore[assignment]
    dataset: Annotated[DatasetChoice | None, typer.Option("--dataset", hidden=True, help=DATASET_DEPRECATED)] = None,
    data_file: Annotated[
        Path | None,
        typer.Option(
            help="An .npz file with x_train (n, 28, 28) and y_train (n,); it overrides --data.", metavar="FILE"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic set, the weights and the shuffle.", metavar="N")] = 0,
    log_every_steps: Annotated[
        int, typer.Option(help="Write a record every N steps (0: off).", min=0, metavar="N")
    ] = 100,
    log_interval_secs: Annotated[
        float,
        seconds_option("Also a record every SECONDS seconds (0: off)."),
    ] = 0.0,
    log_format: Annotated[FormatChoice, typer.Option(help="json: structured; text: the 2016 line.")] = "json",  # type: ignore[assignment]
    checkpoint_every: Annotated[
        int,
        typer.Option(
            help="Save a checkpoint (RUN_DIR/model) every N global steps, and at the end.", min=0, metavar="N"
        ),
    ] = 100,
    eval_every: Annotated[
        int, typer.Option(help="Evaluate on held-out examples every N global steps (0: off).", min=0, metavar="N")
    ] = 100,
    resume: Annotated[
        bool, typer.Option(help="Continue the run in --out from its latest checkpoint (its logs are appended to).")
    ] = False,
    out: Annotated[
        Path | None, typer.Option(help="Run directory (default: runs/RUN_ID); must be empty.", metavar="DIR")
    ] = None,
    run_id: Annotated[
        str | None, typer.Option(help="Default: --out's name, else local-TIER-TIME", metavar="RUN_ID")
    ] = None,
    tensorboard: Annotated[
        Path | None,
        typer.Option(
            help="Also write TensorBoard event files (the scalars of Keras' TensorBoard callback) under "
            "DIR/<role>_<index>/train/; outside --out.",
            metavar="DIR",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        seconds_option("Stop every task after this many seconds."),
    ] = 3600.0,
    grace: Annotated[
        float,
        seconds_option("Seconds between SIGTERM and SIGKILL when stopping."),
    ] = 5.0,
    quiet: QuietOpt = False,
) -> None:
    """Run the trainer as a local cluster (one process per task) and write a run directory.

    While it runs, stderr shows each training task's global step and steps/s and the time elapsed,
    and the first line of a task's failure as soon as it fails; at the end one line gives the run's
    steady-state global steps/s (as `summary` computes it). --quiet shows neither (errors still).

    Exit status: 0 finished, 1 failed, 124 timed out, 130 interrupted.
    """
    if out is not None:
        check_out_dir(out, "--out")
    if find_spec("tensorflow") is None:
        # Each task would fail on its own import, leaving the reason in chief-0.jsonl only.
        raise TierscopeError(missing_tensorflow())
    data = deprecated_dataset(dataset, data)
    from rich.console import Console

    from tierscope.cli.train_progress import ProgressView
    from tierscope.trainer.launch import train_local

    view = ProgressView(err_console(), steps, enabled=not quiet)
    try:
        with view:
            run = train_local(
                tier=tier,
                workers=workers,
                ps=ps,
                strategy=strategy.value if strategy else None,  # type: ignore[arg-type]
                steps=steps,
                batch_size=batch_size,
                dataset=DatasetChoice(data).value,
                data_file=data_file,
                seed=seed,
                log_every_steps=log_every_steps,
                log_interval_secs=log_interval_secs,
                log_format=FormatChoice(log_format).value,
                checkpoint_every=checkpoint_every,
                eval_every=eval_every,
                resume=resume,
                out=out,
                run_id=run_id,
                timeout=timeout,
                grace=grace,
                launcher_argv=["tierscope", *sys.argv[1:]],
                on_progress=view.update,
                tensorboard=tensorboard,
            )
    except ValueError as exc:  # a tier, topology, data file or run directory that cannot be used
        raise UsageError(str(exc)) from None
    codes = ", ".join(f"{name} {code}" for name, code in run.exit_codes.items())
    if run.status == "finished":
        if not quiet:
            Console().print(
                f"run {run.run_id} ({run.tier}) finished in {run.wall_s:.1f} s: {steady_line(run.out)}; {run.out}\n"
                f"collect it with: tierscope collect files {run.out}",
                highlight=False,
                soft_wrap=True,
            )
    else:
        err_console().print(
            f"[bold red]run {run.run_id} {run.status}:[/] {run.reason}. Exit codes: {codes}. Logs in {run.out}",
            highlight=False,
            soft_wrap=True,
        )
    raise typer.Exit(run.exit_code)


def steady_line(out: Path) -> str:
    """``steady state 123.4 global steps/s``: the run's steady-state rate as ``summary`` would give it after
    ``collect files OUT`` (the run is collected into a throw-away dataset), or why there is none."""
    import tempfile

    from tierscope.analysis import analyze
    from tierscope.collector.collect import collect_runs, runs_from_paths
    from tierscope.dataset.store import Dataset

    with tempfile.TemporaryDirectory(prefix="tierscope-steady-") as tmp:
        dataset = Dataset(Path(tmp) / "ds")
        collect_runs(dataset, runs_from_paths([out], None, None, None))
        rates = analyze(dataset).summary["steady_global_steps_per_s"].drop_nulls()
    if rates.len() == 0:
        return "no steady state (too few step records: log more often with --log-every-steps)"
    return f"steady state {rates[0]:,.1f} global steps/s"


def spec_cmd(
    tier: Annotated[str | None, typer.Argument(help=f"Scale tier: {TIER_NAMES} (default BASIC: one replica).")] = None,
    run_id: Annotated[
        str, typer.Option(help="Job name / id, also the records' run_id.", metavar="RUN_ID")
    ] = "tierscope-run",
    steps: Annotated[int, typer.Option(min=1, metavar="N", help="Training steps.")] = 1000,
    batch_size: Annotated[int, typer.Option(min=1, metavar="N", help="Examples per step per worker.")] = 100,
    data: SpecDataOpt = "mnist",  # type: ignore[assignment]
    dataset: Annotated[DatasetChoice | None, typer.Option("--dataset", hidden=True, help=DATASET_DEPRECATED)] = None,
    log_every_steps: Annotated[
        int, typer.Option(min=0, help="Write a record every N steps (0: off).", metavar="N")
    ] = 100,
    machine_type: Annotated[
        str, typer.Option(help="Vertex AI machine type of every pool.", metavar="TYPE")
    ] = "n1-standard-4",
    image: Annotated[
        str | None,
        typer.Option(
            help="The trainer's container image, built from trainer/Dockerfile and pushed (see above).", metavar="IMAGE"
        ),
    ] = None,
    region: Annotated[str | None, typer.Option(help="AI Platform region.", metavar="REGION")] = None,
    service: Annotated[str, typer.Option(help="vertex, ai-platform or both.", metavar="SERVICE")] = "both",
    machine: Annotated[
        str | None,
        typer.Option("--machine", help="Vertex AI machine type with its bundled GPUs (a2-highgpu-8g).", metavar="TYPE"),
    ] = None,
    accelerator: Annotated[
        str | None,
        typer.Option(
            "--accelerator", help="GPUs attached to --machine, TYPE:COUNT (NVIDIA_TESLA_T4:1).", metavar="TYPE:COUNT"
        ),
    ] = None,
    tpu: Annotated[
        str | None,
        typer.Option("--tpu", help="A TPU slice (v5litepod-8): its machine type and topology.", metavar="SLICE"),
    ] = None,
    spot: Annotated[bool, typer.Option("--spot", help="Run on Spot VMs (scheduling strategy SPOT).")] = False,
) -> None:
    """Print the cloud job request (JSON) that runs the trainer on a scale tier.

    Every replica runs one container image: trainer/Dockerfile, Python 3.11 with the tierscope wheel and
    TensorFlow (the package needs Python 3.11 or later; the prebuilt TensorFlow images run 3.10). Build
    and upload it from the repository, then pass its name with --image:

    \b
    pip wheel --no-deps --wheel-dir dist .
    docker build -f trainer/Dockerfile -t us-central1-docker.pkg.dev/YOUR_PROJECT/tierscope/trainer:latest .
    docker push us-central1-docker.pkg.dev/YOUR_PROJECT/tierscope/trainer:latest
    """
    from tierscope.trainer.spec import spec
    from tierscope.trainer.train import TrainConfig

    data = deprecated_dataset(dataset, data)
    options: dict[str, object] = {"machine_type": machine_type, "image": image, "region": region}
    if machine or accelerator or tpu or spot:
        from tierscope.analysis.machines import from_options, machine_spec

        hardware = from_options(machine or (machine_type if accelerator else None), accelerator, tpu, spot)
        if hardware is not None:
            options["machine_spec"] = machine_spec(hardware.pools[0])
        options["spot"] = spot
        if service == "ai-platform":
            raise UsageError(
                "--machine, --accelerator, --tpu and --spot describe a Vertex AI job; use --service vertex"
            )
        service = "vertex"  # the legacy service's scale tiers have no such machines
    elif machine_type:
        import contextlib

        from tierscope.analysis.machines import UnknownMachineError, machine_spec, pool

        # a machine type bundling GPUs needs them named too, or Vertex AI attaches none; one the table does
        # not know yet goes as given
        with contextlib.suppress(UnknownMachineError):
            options["machine_spec"] = machine_spec(pool("chief", machine_type))
    tier = tier or "BASIC"
    try:
        config = TrainConfig(
            run_id=run_id,
            tier=tier,
            steps=steps,
            batch_size=batch_size,
            dataset=DatasetChoice(data).value,  # type: ignore[arg-type]
            log_every_steps=log_every_steps,
        )
        doc = spec(tier, config, **{k: v for k, v in options.items() if v is not None})
    except ValueError as exc:  # an unknown tier, a bad option value
        raise UsageError(str(exc)) from None
    picked = {"vertex": doc.get("vertex_ai"), "ai-platform": doc.get("ai_platform"), "both": doc}.get(service)
    if picked is None:
        raise UsageError(f"--service must be vertex, ai-platform or both, not {service!r}")
    print(json.dumps(picked, indent=2))


def register(app: App) -> None:
    """Add the trainer's commands to ``app``. TensorFlow is imported only when they run."""
    app.add_typer(train_app, name="train")
    app.command("spec")(spec_cmd)
