"""``tierscope collect ...``, ``rejects``, ``doctor`` and ``compact``: thin wrappers
over :mod:`tierscope.collector` and :mod:`tierscope.dataset`, which each body imports when it runs."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from tierscope.cli.common import (
    DEFAULT_DATASET,
    App,
    DatasetOpt,
    FormatChoice,
    FormatOpt,
    FormatsFileOpt,
    JsonOpt,
    LockTimeoutOpt,
    LogFormatOpt,
    NewDatasetOpt,
    OldLogFormatOpt,
    QuietOpt,
    RunsOpt,
    WideOpt,
    err_console,
    finite,
    log_format,
    new_dataset,
    no_dataset,
    open_dataset,
    output_format,
    print_error,
    run_list,
    seconds_option,
)
from tierscope.cli.hardware import (
    AcceleratorOpt,
    ChangeHardwareOpt,
    HwRegionOpt,
    JobSpecOpt,
    MachineOpt,
    SpotOpt,
    TpuOpt,
    check_held_hardware,
    manifest_hardware,
    with_hardware,
)
from tierscope.exits import EXIT_ERROR

if TYPE_CHECKING:
    from rich.progress import Progress

    from tierscope.dataset.store import Dataset

#: :data:`tierscope.collector.collect.DEFAULT_SETTLE_S`, for the help (tests/cli/test_startup.py checks it).
DEFAULT_SETTLE_S = 300.0
#: :data:`tierscope.collector.limits.DEFAULT_EXPAND_RATIO`, for the help (tests/cli/test_startup.py checks it).
DEFAULT_EXPAND_RATIO = 100.0

T = TypeVar("T")

collect_app = App(help="Collect step logs into a dataset.", no_args_is_help=True)


@collect_app.command("files", interruptible=True)
def collect_files_cmd(
    paths: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="PATH...",
            help="Log files or run directories; gs://bucket/prefix/ URLs and globs for Cloud Storage.",
        ),
    ] = None,
    dataset: NewDatasetOpt = Path(DEFAULT_DATASET),
    run_id: Annotated[
        str | None,
        typer.Option(
            help="Run id of the records read, whatever run they name themselves (without it: a record's own, "
            "else the run directory's run.json, else the first file's name).",
            metavar="RUN_ID",
        ),
    ] = None,
    tier: Annotated[
        str | None, typer.Option(metavar="TIER", help="Scale tier of the run (BASIC, STANDARD_1, ...).")
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            metavar="NAME",
            help="The configuration the runs repeat (one job on the same tier or machines): runs of one NAME are "
            "one row of the summary and the report, their spread between runs. Without it a run is its own.",
        ),
    ] = None,
    manifest: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="A runs.toml naming each run's id, tier and files (a path or a gs:// URL)."),
    ] = None,
    fmt: LogFormatOpt = None,
    old_fmt: OldLogFormatOpt = None,
    formats: FormatsFileOpt = None,
    year: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=9999,
            help="Year of glog/absl timestamps (default: each file's modification year).",
            metavar="YEAR",
        ),
    ] = None,
    olddir: Annotated[
        list[Path] | None,
        typer.Option(
            "--olddir",
            help="A folder the logs' rotated copies are moved to (logrotate's olddir), besides each log's own; "
            "repeat for several.",
            metavar="DIR",
        ),
    ] = None,
    max_expand: Annotated[
        float,
        typer.Option(
            min=1,
            callback=finite,
            help="A gzip file may decompress to this many times its size (at least 64 MiB, at most 20 GiB); "
            "a larger one is refused, one reject naming it.",
            metavar="RATIO",
        ),
    ] = DEFAULT_EXPAND_RATIO,
    max_seconds: Annotated[
        float | None,
        seconds_option(
            "Stop after this many seconds, at the next safe point (what was read is stored; the next collect "
            "goes on): bounds how long the dataset's lock is held."
        ),
    ] = None,
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: QuietOpt = False,
    settle: Annotated[
        float,
        seconds_option(
            "Seconds a file must be unchanged before its last lines that more may still complete are read: a "
            "line without its newline, and, once a collect has read the file before, a report whose next line is "
            "not written yet (an event file: its last step's events); 0 for a job that has ended."
        ),
    ] = DEFAULT_SETTLE_S,
    reread: Annotated[
        bool,
        typer.Option(
            "--reread",
            help="Read every file from its start (records already stored are duplicates: not stored again).",
        ),
    ] = False,
    batch_bytes: Annotated[
        int | None, typer.Option(hidden=True, help="Bytes read per batch (default: the collector's).")
    ] = None,
    wide: WideOpt = False,
    machine: MachineOpt = None,
    accelerator: AcceleratorOpt = None,
    tpu: TpuOpt = None,
    spot: SpotOpt = False,
    region: HwRegionOpt = None,
    job_spec: JobSpecOpt = None,
    change_hardware: ChangeHardwareOpt = False,
) -> None:
    """Read what is new in step logs (files, run directories) and append it to the dataset.

    Each file is read from where the last collect stopped; a rotated or truncated file from
    its start. Exit codes: 0 success, 1 error, 2 usage error, 75 dataset busy, 130 interrupted
    (Ctrl-C), 143 stopped by SIGTERM (what was stored is kept either way).
    """
    from tierscope.cli.hardware import one_accelerator

    accelerator = one_accelerator(accelerator)  # type: ignore[assignment]  # the option is a list: see AcceleratorOpt
    if not paths and manifest is None:
        raise typer.BadParameter("give log files or run directories, or --manifest runs.toml")
    if config is not None:
        from tierscope.collector.manifest import config_name

        try:
            config = config_name(config)
        except ValueError as bad:
            raise typer.BadParameter(f"the configuration's name {bad}", param_hint="--config") from None
    if run_id is not None and not run_id.strip():
        raise typer.BadParameter("a run id cannot be empty; leave --run-id out to name the run after its file")
    from tierscope.collector.manifest import load_manifest
    from tierscope.collector.runs import missing_input, runs_from_paths
    from tierscope.collector.unchanged import collect_unchanged

    runs = manifest_hardware(load_manifest(manifest)) if manifest else []
    chosen = log_format(fmt, old_fmt)
    absent: list[Exception] = []  # paths not there, named with the others' errors once those are collected
    if paths:
        from tierscope.gcs import is_url

        inputs = [p if is_url(p) else Path(p) for p in paths]
        # One mistyped path among several must not stop the others (as in a manifest); all of them, or a
        # lone one, is the error it was, before anything is read.
        gone = [p for p in inputs if isinstance(p, Path) and not p.exists() and not p.is_symlink()]
        if gone and len(gone) < len(inputs):
            absent = [missing_input(p) for p in gone]
            inputs = [p for p in inputs if p not in gone]
        from dataclasses import replace

        # run.json's machines first, the command line's options over them; what the user typed wins over
        # what the records carry (collector.manifest.RunSpec.run_id_given)
        given = [
            replace(r, run_id_given=run_id is not None, tier_given=tier is not None, config=config or r.config)
            for r in runs_from_paths(inputs, run_id, checked_tier(tier), chosen)
        ]
        found = with_hardware(manifest_hardware(given), machine, accelerator, tpu, spot, region, job_spec)
        options = {"--machine": machine, "--accelerator": accelerator, "--tpu": tpu, "--job-spec": job_spec,
                   "--region": region}  # fmt: skip
        said = " ".join([*(f"{k} {v}" for k, v in options.items() if v), *(["--spot"] if spot else [])])
        if said:
            check_held_hardware(dataset, found, said, change_hardware)
        if run_id is None and not quiet:
            say_grouping(found, inputs)
        from tierscope.collector.runs import unread_in_folders, unread_note

        if not quiet and (skipped := unread_note(unread_in_folders(inputs))):
            from rich.text import Text

            err_console().print(Text(f"note: {skipped}"), soft_wrap=True)
        runs += found
    if olddir:
        from dataclasses import replace

        runs = [replace(r, olddirs=(*r.olddirs, *olddir)) for r in runs]
    if formats:
        from dataclasses import replace

        from tierscope.collector.formats.declared import load_format_files, merge_formats

        declared = load_format_files(formats)
        runs = [replace(r, formats=merge_formats(r.formats, declared)) for r in runs]
    if chosen is not None and paths and runs:
        from tierscope.collector.formats import check_format

        # A misspelt --log-format is a usage error before anything is read or any run's facts recorded
        # (the last run is the paths', with the declared formats as collect_runs reads them).
        check_format(chosen, runs[-1].formats)
    if not (formats or fmt or old_fmt or absent) and (
        unchanged := collect_unchanged(dataset, runs, lock_timeout, reread=reread, settle_s=settle)
    ):
        # Nothing new (a cron job's usual run): told from the state, without loading polars, and
        # under --quiet without rich's tables (0.1 s of its start-up).
        if not quiet:
            from tierscope.cli.output import print_counts

            print_counts(unchanged, quiet, wide)
        return
    if not (formats or fmt or old_fmt or absent or max_seconds is not None or batch_bytes is not None):
        from tierscope.cli.allocator import command
        from tierscope.collector.small_collect import collect_small_append

        # A few thousand lines added to a 2016-format log (a cron job's usual run with work): stored without
        # polars, exactly as the full collect stores them, or declined with nothing written.
        own = command(sys.argv) == "collect"
        small = collect_small_append(dataset, runs, lock_timeout, reread=reread, without_numpy=own)
        if small is not None:
            if not quiet:
                from tierscope.cli.output import print_counts

                print_counts(small, quiet, wide)
            return
    from tierscope.cli.allocator import command
    from tierscope.collector.collect import collect_runs
    from tierscope.dataset.store import import_writer_without_numpy

    if command(sys.argv) == "collect":  # this process is the collect's own, not a caller's (tests)
        import_writer_without_numpy()

    # What the imports made (polars, typer, the collector: 45,000 tracked objects) outlives the
    # collect: left out of the garbage collector's passes meanwhile, it is no longer walked by the
    # full pass that fell during the first batches, holding the GIL (on the 240 MB log the collect's
    # CPU time in the garbage collector 41-46 ms -> 21-22 ms, the full pass's 16-20 ms gone). Put
    # back afterwards: a caller running the command in its own process (tests) keeps its collector.
    gc.freeze()
    ds = new_dataset(dataset)
    try:
        result = collect_runs(
            ds,
            runs,
            lock_timeout=lock_timeout,
            year=year,
            settle_s=settle,
            reread=reread,
            max_expand=max_expand,
            max_seconds=max_seconds,
            **({"batch_bytes": batch_bytes} if batch_bytes is not None else {}),
        )
    finally:
        gc.unfreeze()
        if ds.notices:  # rich's import (0.03 CPU-s) only where something is printed
            from tierscope.cli.output import print_notices

            print_notices(ds)
    if not quiet:
        from tierscope.cli.output import print_counts

        print_counts(result, quiet, wide)
    if result.stopped:  # even under --quiet: cron mails it
        err_console().print(f"note: {result.stopped}", soft_wrap=True, highlight=False)
    suggest_compact(ds, [r.run_id for r in runs])
    result.errors[:0] = absent
    if result.errors:
        # A file that failed does not stop the others: each gets its line, the last one the exit code.
        for error in result.errors[:-1]:
            print_error(error)
        raise result.errors[-1]


@collect_app.command("cloud", interruptible=True)
def collect_cloud_cmd(
    job_id: Annotated[
        list[str], typer.Option("--job-id", "-j", metavar="JOB_ID", help="Training job id (repeat for several jobs).")
    ],
    project: Annotated[
        str | None,
        typer.Option(
            help="Google Cloud project (default: GOOGLE_CLOUD_PROJECT, else the ADC project).", metavar="PROJECT"
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(metavar="TIME", help="Read entries from this time (ISO 8601, UTC if no zone); default: resume."),
    ] = None,
    last: Annotated[
        str | None,
        typer.Option(metavar="DURATION", help="Read entries of the last DURATION (24h, 7d): --since now-DURATION."),
    ] = None,
    until: Annotated[str | None, typer.Option(metavar="TIME", help="Read entries before this time (ISO 8601).")] = None,
    tier: Annotated[
        str | None, typer.Option(metavar="TIER", help="Scale tier of records that do not name theirs.")
    ] = None,
    manifest: Annotated[
        str | None,
        typer.Option(metavar="PATH", help="A runs.toml giving each job id's tier and facts (a path or a gs:// URL)."),
    ] = None,
    dataset: NewDatasetOpt = Path(DEFAULT_DATASET),
    endpoint: Annotated[
        str | None,
        typer.Option(
            envvar="TIERSCOPE_LOGGING_ENDPOINT",
            help="Logging API URL (emulator); anonymous credentials.",
            metavar="URL",
        ),
    ] = None,
    requests_per_minute: Annotated[
        int, typer.Option(min=0, help="Client-side rate limit on API requests (0: none); the quota is 60.", metavar="N")
    ] = 55,
    retry_deadline: Annotated[
        float,
        seconds_option("Seconds to keep retrying one request on 429/5xx."),
    ] = 300.0,
    overlap: Annotated[
        str, typer.Option(metavar="DURATION", help="Re-read this much before the time of the last read (late entries).")
    ] = "5m",
    ignore_watermark: Annotated[
        bool, typer.Option("--ignore-watermark", help="Start at --since/--last, not where the last collect stopped.")
    ] = False,
    pages_per_append: Annotated[
        int, typer.Option(min=1, help="Pages (1000 entries) read between two appends.", metavar="N")
    ] = 5,
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, print nothing on success.")] = False,
) -> None:
    """Read training-job step logs from Cloud Logging and append them to the dataset, resuming where the last
    collect stopped."""
    from datetime import UTC, datetime

    from tierscope.cli.durations import parse_duration, parse_when
    from tierscope.cli.output import ENTRIES, print_counts, print_notices
    from tierscope.collector.cloud import CloudOptions, CollectStopped, collect_cloud
    from tierscope.collector.manifest import load_manifest
    from tierscope.collector.sources.cloud_logging import RetryPolicy, backoff_note

    if since and last:
        raise typer.BadParameter("give --since or --last, not both")
    start = _parsed(parse_when, since, "--since") if since else None
    if last:
        try:
            start = datetime.now(UTC) - _parsed(parse_duration, last, "--last")
        except OverflowError:
            raise typer.BadParameter(
                f"{last!r} reaches back before year 1; give a shorter one, like 7d", param_hint="--last"
            ) from None
    end = _parsed(parse_when, until, "--until") if until else None
    overlap_td = _parsed(parse_duration, overlap, "--overlap")
    tier = checked_tier(tier)  # its warning before the progress bar starts
    progress = None if quiet else cloud_progress()
    runs = load_manifest(manifest) if manifest else []
    ds = new_dataset(dataset)
    try:
        with progress or contextlib.nullcontext():
            task = progress.add_task("reading Cloud Logging", total=None) if progress else None
            options = CloudOptions(
                project=project,
                since=start,
                until=end,
                tier=tier,
                runs=runs,
                endpoint=endpoint,
                requests_per_minute=requests_per_minute or None,
                retry=RetryPolicy(deadline_s=retry_deadline),
                overlap=overlap_td,
                ignore_watermark=ignore_watermark,
                pages_per_append=pages_per_append,
                lock_timeout=lock_timeout,
            )
            result = collect_cloud(
                ds,
                job_id,
                options,
                on_progress=(lambda p: progress.update(task, completed=p.entries)) if progress else None,  # type: ignore[arg-type]
            )
    except CollectStopped as exc:
        print_notices(ds)
        print_counts(exc.result, quiet, unit=ENTRIES)  # what was read is stored: say how much, then why it stopped
        raise
    except BaseException:
        print_notices(ds)
        raise
    print_notices(ds)
    print_counts(result, quiet, unit=ENTRIES)
    if not quiet:
        from rich.console import Console

        Console().print(backoff_note(result.stats), highlight=False)


def suggest_compact(ds: Dataset, run_ids: list[str]) -> None:
    """A note on stderr, even under --quiet (a cron job's mail is where it is read), for each of
    ``run_ids`` whose data files pass :data:`~tierscope.dataset.compact.SUGGEST_COMPACT_FILES`."""
    from tierscope.dataset.compact import SUGGEST_COMPACT_FILES, crowded_runs

    crowded = crowded_runs(ds, run_ids)
    if not crowded:
        return
    from rich.text import Text

    from tierscope.cli.tables import named
    from tierscope.text import printable

    for run, count in crowded.items():
        err_console().print(
            Text(
                printable(
                    f"note: run {named(run)} is stored in {count:,} data files (more than "
                    f"{SUGGEST_COMPACT_FILES:,}): every reader opens each of them; merge them with "
                    f"`tierscope compact -d {ds.root}`"
                )
            ),
            soft_wrap=True,
        )


def checked_tier(tier: str | None) -> str | None:
    """``--tier`` as the tier table spells it (``standard_1`` is ``STANDARD_1``). A tier the table
    does not know is kept as given, with a warning naming the known ones and the table's file;
    CUSTOM (no replicas on the command line) with a warning saying what cannot be priced. An empty
    or blank tier is a usage error: a tier given replaces the run's known one, and "" would erase it."""
    from tierscope import tiertable
    from tierscope.contract import is_local_tier

    if tier is not None and not tier.strip():
        raise typer.BadParameter(
            "an empty tier names no scale tier; give one (BASIC, STANDARD_1, ...) or leave --tier out "
            "to keep the run's known tier",
            param_hint="--tier",
        )
    if tier is None or is_local_tier(tier):
        return tier
    known = list(tiertable.by_tier(tiertable.load()))
    upper = tier.upper()
    if upper not in known and upper != "CUSTOM" and _machine_or_label(tier, known):
        return tier  # a machine type: one machine of that type, priced as one
    if upper == "CUSTOM":
        warning = (
            "CUSTOM without a topology: its ML units and price cannot be computed (they are the sum over "
            "its replicas' machine types); give machine_types, workers and ps in a manifest (runs.toml)"
        )
    elif upper in known:
        return upper
    else:
        warning = (
            f"{tier!r} is not a tier of tierscope's tier table, tierscope/data/{tiertable.TIERS_CSV.name} "
            f"({', '.join(known)}, or CUSTOM): its runs are "
            "stored under that name but get no ML units, price or topology (a run on today's machines: "
            "--machine TYPE, --accelerator TYPE:N, --tpu SLICE)"
        )
    from rich.text import Text  # only to warn: a known tier (a cron job's) loads no rich

    err_console().print(Text(f"warning: --tier {warning}"), soft_wrap=True)
    return upper if upper == "CUSTOM" else tier


def _machine_or_label(tier: str, known: list[str]) -> bool:
    """True if ``tier`` is a machine type (``--tier n1-standard-8``: one machine of that type,
    docs/machines-and-prices.md); False for a label of the user's own, far from every known name (kept,
    unpriced, with a warning). A near miss of a tier or machine type (``STANDRD_1``) is a usage error naming
    the nearest: a typo stored as a run's tier left it unpriced with only a warning."""
    import difflib

    from tierscope.analysis import machines

    types = machines.names("machine")
    if tier.lower() in types:
        return True
    near = difflib.get_close_matches(tier.upper(), [*known, "CUSTOM"], n=3, cutoff=0.8)
    near += difflib.get_close_matches(tier.lower(), types, n=3 - len(near), cutoff=0.8) if len(near) < 3 else []
    if near:
        raise typer.BadParameter(
            f"unknown tier {tier!r}; nearest known: {', '.join(near)} (the tier table "
            f"tierscope/data/{_tiers_csv()}, a machine type; a label of your own far from these is kept, unpriced)",
            param_hint="--tier",
        )
    return False


def _tiers_csv() -> str:
    from tierscope import tiertable

    return tiertable.TIERS_CSV.name


def _parsed(parse: Callable[[str], T], text: str, option: str) -> T:
    """``parse(text)``, its ValueError a usage error naming ``option`` (exit 2)."""
    try:
        return parse(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


def cloud_progress() -> Progress:
    """A progress bar for an open-ended count of entries (and their rate), on stderr."""
    from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Entries per second, from rich's own speed estimate."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.0f} entries/s")

    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.completed:,.0f} entries"),
        RateColumn(),
        TimeElapsedColumn(),
        console=err_console(),
        transient=False,
    )


def rejects_cmd(
    dataset: DatasetOpt = Path(DEFAULT_DATASET),
    runs: RunsOpt = None,
    run_id: Annotated[str | None, typer.Option("--run-id", hidden=True, help="The former --runs of one run.")] = None,
    limit: Annotated[
        int, typer.Option(min=0, help="Show at most this many lines (CSV and JSON: all).", metavar="N")
    ] = 50,
    fmt: FormatOpt = FormatChoice.table,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """List the lines kept aside as rejects: the file, the line number, the run, the reason and the raw text."""
    from tierscope.cli import numbers as n
    from tierscope.cli.output import shown_path
    from tierscope.cli.tables import Column, Grid, emit

    fmt = output_format(fmt, as_json)
    chosen = list(run_list(runs)) + ([run_id] if run_id else [])
    import polars as pl

    where = pl.col("run_id").is_in(chosen) if chosen else None
    frame = open_dataset(dataset).read("rejects", where=where).sort("run_id", "source", "source_offset")
    grid = Grid(
        [Column("file:line", "name"), Column("run", "name"), Column("reason", "text"),
         Column("raw text", "text", wide=True)],
    )  # fmt: skip
    for row in frame.head(limit).iter_rows(named=True):
        # file:line, as compilers print it: editors and grep jump to it
        # A Cloud Logging entry has no line number: its reason names the entry (insertId, time).
        line = "" if row["source_offset"] is None else f":{row['source_offset']}"
        grid.add(f"{shown_path(row['source'], wide)}{line}", row["run_id"], row["reason"],
                 repr(row["raw"][:200]))  # fmt: skip
    shown = f" (the first {n.count(limit)} shown; --limit to see more)" if frame.height > limit else ""
    grid.notes.append(f"{n.plural(frame.height, 'rejected line')}{shown}")
    emit(fmt, grid, frame.to_dicts(), wide=wide)


def doctor_cmd(
    dataset: DatasetOpt = Path(DEFAULT_DATASET),
    fix: Annotated[bool, typer.Option("--fix", help="Move each corrupt file to quarantine/.")] = False,
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: QuietOpt = False,
) -> None:
    """Check every data file's footer, schema and pages and every state file; name each corrupt one.

    Exit 0 if the dataset reads cleanly (after --fix), 1 if a corrupt file is left, 75 busy.
    """
    from rich.text import Text

    from tierscope.collector.collect import STATE_CHECKS
    from tierscope.dataset.doctor import doctor
    from tierscope.dataset.errors import DatasetError
    from tierscope.dataset.store import Dataset
    from tierscope.sweep.ledger import check_ledgers

    ds = Dataset(dataset)
    if not ds.root.is_dir():
        what = "is not a directory" if ds.root.exists() else "does not exist"
        raise DatasetError(
            f"{ds.root} {what}; give --dataset the folder a collect wrote (doctor checks a dataset in place)"
        )
    if not ds.exists():  # a folder, but none of a dataset's tables: "0 corrupt" would read as a clean bill
        raise DatasetError(no_dataset(ds, dataset))
    report = doctor(ds, fix=fix, lock_timeout=lock_timeout, state_checks=(*STATE_CHECKS, check_ledgers))
    for problem in report.problems:
        moved = f" -> moved to {problem.moved_to}" if problem.moved_to else ""
        err_console().print(Text(f"corrupt: {problem.path}: {problem.problem}{moved}"), soft_wrap=True)
    if not quiet or not report.healthy:
        for note in report.notes:
            print(f"note: {note}")
        bad = len(report.problems)
        print(
            f"checked {report.checked} files: {bad} corrupt"
            + (", moved to quarantine" if bad and fix else ", run with --fix to move them to quarantine" if bad else "")
        )
    if not report.healthy:
        raise typer.Exit(EXIT_ERROR)


def compact_cmd(
    dataset: DatasetOpt = Path(DEFAULT_DATASET),
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: QuietOpt = False,
) -> None:
    """Merge each partition's small files into one (atomically; readers see every record once)."""
    from tierscope.cli.output import print_notices
    from tierscope.dataset.compact import compact

    ds = open_dataset(dataset)
    try:
        result = compact(ds, lock_timeout=lock_timeout)
    finally:
        print_notices(ds)
    if not quiet:
        print(
            f"compacted {result.partitions} partitions: {result.files_before} files -> {result.files_after} "
            f"({result.rows} rows)"
        )


def say_grouping(runs: list, inputs: list) -> None:
    """On stderr, how loose files (not run directories) were grouped into runs, when into more than one
    (:func:`tierscope.collector.runs.loose_runs`): a run each for files whose names name no task, one run for
    files named after one run's tasks."""
    named = {str(p) for p in inputs}
    loose = [r for r in runs if r.files and all(str(f) in named for f in r.files)]
    folders: dict[str, list] = {}
    for r in runs:
        if r.split_from is not None:
            folders.setdefault(r.split_from, []).append(r)
    if len(loose) > 1:
        _say_runs_by_name(loose, f"{sum(len(r.files) for r in loose)} files", None)
    for folder, split in folders.items():
        # a folder of logs not named as one job's tasks, no run.json: read as the glob of its logs would be
        said = f"folder {folder} (its logs not all named as one job's tasks, no run.json)"
        _say_runs_by_name(split, said, folder.rstrip("/").rsplit("/", 1)[-1])


def _say_runs_by_name(runs: list, what: str, folder: str | None) -> None:
    """One note: ``what`` (the files or folder given) read as ``runs``, a run each, some of several files: a
    job's tasks' (all of loose files', a split ``folder``'s run named after it) or one log's rotations."""
    from rich.text import Text

    from tierscope.text import printable

    every = [str(f).rstrip("/").rsplit("/", 2) for r in runs for f in r.files]
    shared = len({p[-1] for p in every}) < len(every)  # one name in folders of their own: their folders tell them

    def names(files: list) -> str:
        return ", ".join("/".join(str(f).rstrip("/").rsplit("/", 2)[-2 if shared else -1 :]) for f in files)

    parts = []
    singles = [r for r in runs if len(r.files) == 1]
    if singles:
        parts.append(f"a run each for {names([r.files[0] for r in singles])}")
    parts += [
        f"run {r.run_id} for {names(r.files)}"
        + (" (named after one run's tasks)" if r.run_id == folder or not folder else "")
        for r in runs
        if len(r.files) > 1
    ]
    err_console().print(
        Text(
            printable(
                f"note: {what} read as {len(runs)} runs by their names: {'; '.join(parts)}; "
                "--run-id ID reads them as one run"
            )
        ),
        soft_wrap=True,
    )


def register(app: App) -> None:
    app.add_typer(collect_app, name="collect")
    app.command("rejects")(rejects_cmd)
    app.command("doctor")(doctor_cmd)
    app.command("compact")(compact_cmd)
