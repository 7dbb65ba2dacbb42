"""The hardware options of ``collect files``: ``--machine``, ``--accelerator``, ``--tpu``, ``--spot``,
``--region`` and ``--job-spec`` (a Vertex AI CustomJob as ``gcloud ai custom-jobs describe --format=json``
prints it), made into the runs' stored hardware (:mod:`tierscope.analysis.machines`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from tierscope.collector.manifest import RunSpec

MachineOpt = Annotated[
    str | None,
    typer.Option(
        "--machine", help="Machine type the run ran on (a2-highgpu-8g: its GPUs come with it).", metavar="TYPE"
    ),
]
# A list, so that a second --accelerator is refused rather than silently replacing the first.
AcceleratorOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--accelerator", help="GPUs attached to --machine, TYPE:COUNT (NVIDIA_TESLA_T4:1).", metavar="TYPE:COUNT"
    ),
]
TpuOpt = Annotated[str | None, typer.Option("--tpu", help="The TPU slice it ran on (v5litepod-8).", metavar="SLICE")]
SpotOpt = Annotated[bool, typer.Option("--spot", help="It ran on Spot VMs (priced at spot rows).")]
HwRegionOpt = Annotated[
    str | None, typer.Option("--region", help="The Google Cloud region it ran in (us-central1).", metavar="REGION")
]
JobSpecOpt = Annotated[
    Path | None,
    typer.Option(
        "--job-spec",
        help="Its Vertex AI CustomJob (gcloud ai custom-jobs describe --format=json), or the job's jobSpec: pools, "
        "accelerators, TPU topology, spot, region and date.",
        metavar="FILE",
        dir_okay=False,
    ),
]

ChangeHardwareOpt = Annotated[
    bool,
    typer.Option(
        "--change-hardware",
        help="Replace the machines the dataset holds for the run with the ones these options describe "
        "(without it, a different description of a run already described is an error).",
    ),
]


def check_held_hardware(dataset: Path, runs: list[RunSpec], said: str, change: bool) -> None:
    """Refuse to describe again, differently, a run the dataset at ``dataset`` already holds machines for:
    a second collect of a run with another ``--machine`` would reprice it without a word. ``runs``: the
    runs whose topology the options (``said``, as typed) gave; ``change``: ``--change-hardware`` was given,
    and the change is said on stderr instead. Raises :class:`tierscope.errors.UsageError` naming both
    descriptions and ``--change-hardware``."""
    import json

    import polars as pl

    from tierscope.analysis import machines
    from tierscope.dataset.store import Dataset
    from tierscope.errors import UsageError

    given = {r.run_id: r.topology for r in runs if r.topology}
    ds = Dataset(dataset)
    if not given or not (ds.root / "runs").is_dir() or not ds.files("runs"):
        return
    held = ds.read("runs", where=pl.col("run_id").is_in(list(given)), columns=["run_id", "topology", "collected_at"])
    newest = held.sort("collected_at").group_by("run_id", maintain_order=True).last()
    for run_id, topology in newest.select("run_id", "topology").iter_rows():
        if topology is None or json.loads(topology) == json.loads(given[run_id]):
            continue
        before = machines.from_topology(topology).describe()
        after = machines.from_topology(given[run_id]).describe()
        if before == after:  # the same machines said twice: what differs is where they ran
            before, after = before + _where(topology), after + _where(given[run_id])
        if not change:
            raise UsageError(
                f"run {run_id} is held as {before}; {said} describes {after}: add --change-hardware to change it "
                "on purpose, or give --run-id for another run"
            )
        from rich.text import Text

        from tierscope.cli.common import err_console

        err_console().print(Text(f"note: run {run_id}: its machines are now {after} (were {before})"), soft_wrap=True)


def _where(topology: str) -> str:
    """`` in us-central2`` (the regions a topology's pools name), or `` in no region named``."""
    from tierscope.analysis import machines

    regions = sorted({p.region for p in machines.from_topology(topology).pools if p.region})
    return f" in {', '.join(regions)}" if regions else " in no region named"


def one_accelerator(given: list[str] | None) -> str | None:
    """The one ``--accelerator`` given (None: none). Raises :class:`tierscope.errors.UsageError` for two or
    more: a machine takes one accelerator type, and the last would otherwise replace the others unsaid."""
    from tierscope.errors import UsageError

    if given and len(given) > 1:
        raise UsageError(
            f"--accelerator given {len(given)} times ({', '.join(given)}); a machine takes one accelerator type: "
            "give it once, as TYPE:COUNT"
        )
    return given[0] if given else None


def with_hardware(
    runs: list[RunSpec],
    machine: str | None,
    accelerator: str | None,
    tpu: str | None,
    spot: bool,
    region: str | None,
    job_spec: Path | None,
) -> list[RunSpec]:
    """``runs`` (the command line's) with the hardware the options give stored as their topology, and the job's
    date where a run has none. Unknown names are usage errors listing the nearest known ones; the job's fields
    tierscope does not read are said on stderr. Raises :class:`tierscope.errors.UsageError` for options that do
    not fit together."""
    if not (machine or accelerator or tpu or spot or region or job_spec):
        return runs
    from tierscope.analysis import machines
    from tierscope.analysis.regions import checked_region
    from tierscope.errors import UsageError

    if region is not None:
        checked_region(region)  # a typo is refused here, not met later as a run with no price row
    day = None
    if job_spec is not None:
        if machine or accelerator or tpu:
            raise UsageError("--job-spec names the machines already; leave --machine, --accelerator and --tpu out")
        from tierscope.analysis.jobspec import read_file

        job = read_file(job_spec)
        hardware, day = machines.with_region(job.hardware, region or job.region, True if spot else None), job.date
        if job.ignored:
            from rich.text import Text

            from tierscope.cli.common import err_console

            err_console().print(
                Text(f"note: {job_spec}: kept aside, not read: {', '.join(job.ignored)}"), soft_wrap=True
            )
    else:
        found = machines.from_options(machine, accelerator, tpu, spot, region)
        if found is None:
            raise UsageError("--spot and --region describe a machine: give --machine, --tpu or --job-spec too")
        hardware = found
    topology = hardware.to_json()
    return [replace(r, topology=topology, date=r.date or day) for r in runs]


def manifest_hardware(runs: list[RunSpec]) -> list[RunSpec]:
    """``runs`` of a manifest, or run directories with a ``run.json``, with their ``hardware`` keys (``machine``,
    ``accelerator``, ``tpu``, ``spot``, ``region``, ``job_spec``) made into their stored topology, as the
    command line's options are; an error names the run and its manifest or run.json."""
    from tierscope.errors import TierscopeError, UsageError

    out = []
    for run in runs:
        given = run.hardware or {}
        if not given:
            out.append(run)
            continue
        where = f"manifest {run.manifest}, run {run.run_id}" if run.manifest else f"run.json of run {run.run_id}"
        spot = given.get("spot", False)
        if not isinstance(spot, bool):
            raise UsageError(f"{where}: 'spot' must be true or false")
        texts = {k: given.get(k) for k in ("machine", "accelerator", "tpu", "region")}
        bad = [k for k, v in texts.items() if v is not None and not isinstance(v, str)]
        if bad:
            raise UsageError(f"{where}: {', '.join(bad)} must be strings")
        job = given.get("job_spec")
        try:
            (done,) = with_hardware(
                [run], texts["machine"], texts["accelerator"], texts["tpu"], spot, texts["region"],  # type: ignore[arg-type]
                Path(str(job)) if job is not None else None,
            )  # fmt: skip
        except TierscopeError as exc:
            raise type(exc)(f"{where}: {exc}") from None
        out.append(done)
    return out
