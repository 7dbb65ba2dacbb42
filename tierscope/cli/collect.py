"""``tierscope collect ...`` and ``tierscope rejects``: thin wrappers over :mod:`collector`."""

from __future__ import annotations

import contextlib
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from tierscope.cli.common import EXIT_BUSY, EXIT_ERROR
from tierscope.collector.collect import DEFAULT_SETTLE_S, CollectResult, collect_runs, runs_from_paths
from tierscope.collector.errors import CollectorError
from tierscope.collector.formats import describe_formats, format_names
from tierscope.collector.manifest import load_manifest
from tierscope.collector.sources.files import DEFAULT_BATCH_BYTES
from tierscope.dataset.compact import compact
from tierscope.dataset.doctor import doctor
from tierscope.dataset.errors import DatasetBusyError
from tierscope.dataset.store import Dataset
from tierscope.errors import TierscopeError

collect_app = typer.Typer(help="Collect step logs into a dataset.", no_args_is_help=True)
err = Console(stderr=True)

DatasetOpt = Annotated[Path, typer.Option("--dataset", "-d", help="Dataset directory (created if missing).")]
LockTimeoutOpt = Annotated[
    float,
    typer.Option(min=0, help="Seconds to wait for another collect to finish, then exit 75 (0: do not wait)."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success (for cron).")]


def out_console() -> Console:
    """A console for stdout; cron and pipes have no terminal width, so tables get a wide one."""
    return Console(width=None if sys.stdout.isatty() else 200)


def interrupted() -> typer.Exit:
    """Ctrl-C during a collect: say that nothing is lost, and return exit 130."""
    # Every write is atomic and offsets are saved after the data they cover.
    err.print("interrupted: what was stored so far is kept; run the same collect again to carry on", soft_wrap=True)
    return typer.Exit(130)


def fail(exc: Exception) -> typer.Exit:
    """Print ``exc`` on one line to stderr and return the exit to raise (75 when busy, else 1)."""
    if isinstance(exc, OSError) and not isinstance(exc, TierscopeError):
        # Disk full, permissions: say which file and why, not a traceback.
        where = f" {exc.filename}" if exc.filename else ""
        exc = CollectorError(f"cannot write or read{where}: {exc.strerror or exc}")
    # Text, not markup: a message may quote a log line such as "Train [worker/3]".
    err.print(Text.assemble(("error: ", "bold red"), " ".join(str(exc).split())), soft_wrap=True)
    return typer.Exit(EXIT_BUSY if isinstance(exc, DatasetBusyError) else EXIT_ERROR)


def existing_dataset(dataset: Path) -> Dataset:
    """The dataset at ``dataset``; raises :class:`CollectorError` when there is none (nothing is created)."""
    ds = Dataset(dataset)
    if not ds.exists():
        raise CollectorError(f"{dataset} holds no tierscope dataset; run `tierscope collect files` first")
    return ds


def print_counts(result: CollectResult, quiet: bool) -> None:
    if quiet:
        return
    out = out_console()
    table = Table("source", "run", "lines", "stored", "events", "duplicates", "rejected", "skipped")
    for s in result.sources:
        table.add_row(
            s.source, s.run_id, *(str(v) for v in (s.lines, s.steps, s.events, s.duplicates, s.rejects, s.skipped))
        )
    out.print(table)
    for s in result.sources:
        if s.notes:
            print(f"{s.source}: {'; '.join(s.notes)}")
        if s.lines and not (s.steps or s.events or s.rejects or s.duplicates):
            err.print(
                Text(
                    f"warning: {s.source}: none of its {s.lines} lines is a step record, a run event or a "
                    "broken record: is it a step log? `tierscope formats` lists what tierscope reads"
                    + (f" (--format {s.format} was given)" if s.format else "")
                ),
                soft_wrap=True,
            )
    rejected = result.total("rejects")
    print(
        f"read {result.total('lines')} lines: stored {result.total('steps')} step records and "
        f"{result.total('events')} events, skipped {result.total('duplicates')} duplicates, "
        f"kept aside {rejected} rejected lines"
        + (" (see `tierscope rejects`)" if rejected else "")
        # The lines with no metric close the sum: every line read is one of the five.
        + f", {result.total('skipped')} lines had no metric",
    )


@collect_app.command("files")
def collect_files_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(help="Log files or run directories.")] = None,
    dataset: DatasetOpt = Path("dataset"),
    run_id: Annotated[
        str | None,
        typer.Option(
            help="Run id of records that do not name their own (structured records and job logs do; "
            "default: the run directory's run.json, else the first file's name)."
        ),
    ] = None,
    tier: Annotated[str | None, typer.Option(help="Scale tier of the run (BASIC, STANDARD_1, ...).")] = None,
    manifest: Annotated[Path | None, typer.Option(help="A runs.toml naming each run's id, tier and files.")] = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help=f"Skip sniffing: one of {', '.join(format_names())}."),
    ] = None,
    year: Annotated[
        int | None,
        typer.Option(min=1, max=9999, help="Year of glog/absl timestamps (default: each file's modification year)."),
    ] = None,
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: QuietOpt = False,
    settle: Annotated[
        float, typer.Option(min=0, help="Seconds a file must be unchanged before its unterminated last line is read.")
    ] = DEFAULT_SETTLE_S,
    reread: Annotated[
        bool, typer.Option("--reread", help="Read every file from its start (records already stored are skipped).")
    ] = False,
    batch_bytes: Annotated[int, typer.Option(hidden=True, help="Bytes read per batch.")] = DEFAULT_BATCH_BYTES,
) -> None:
    """Read what is new in step logs (files, run directories) and append it to the dataset.

    Each file is read from where the last collect stopped; a rotated or truncated file from
    its start. Exit codes: 0 success, 1 error, 2 usage error, 75 dataset busy.
    """
    if not paths and manifest is None:
        raise typer.BadParameter("give log files or run directories, or --manifest runs.toml")
    try:
        runs = load_manifest(manifest) if manifest else []
        if paths:
            runs += runs_from_paths(paths, run_id, tier, fmt)
        result = collect_runs(
            Dataset(dataset),
            runs,
            lock_timeout=lock_timeout,
            year=year,
            settle_s=settle,
            reread=reread,
            batch_bytes=batch_bytes,
        )
    except (TierscopeError, OSError) as exc:
        raise fail(exc) from None
    except KeyboardInterrupt:
        raise interrupted() from None
    print_counts(result, quiet)
    if result.errors:
        for error in result.errors[:-1]:
            fail(error)
        raise fail(result.errors[-1])


@collect_app.command("cloud")
def collect_cloud_cmd(
    job_id: Annotated[list[str], typer.Option("--job-id", "-j", help="Training job id (repeat for several jobs).")],
    project: Annotated[
        str | None, typer.Option(help="Google Cloud project (default: GOOGLE_CLOUD_PROJECT, else the ADC project).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Read entries from this time (ISO 8601, UTC if no zone); default: resume.")
    ] = None,
    last: Annotated[
        str | None, typer.Option(help="Read entries of the last DURATION (24h, 7d): --since now-DURATION.")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Read entries before this time (ISO 8601).")] = None,
    tier: Annotated[str | None, typer.Option(help="Scale tier of records that do not name theirs.")] = None,
    manifest: Annotated[Path | None, typer.Option(help="A runs.toml giving each job id's tier and facts.")] = None,
    dataset: DatasetOpt = Path("dataset"),
    endpoint: Annotated[
        str | None,
        typer.Option(envvar="TIERSCOPE_LOGGING_ENDPOINT", help="Logging API URL (emulator); anonymous credentials."),
    ] = None,
    requests_per_minute: Annotated[
        int, typer.Option(min=0, help="Client-side rate limit on API requests (0: none); the quota is 60.")
    ] = 55,
    retry_deadline: Annotated[float, typer.Option(help="Seconds to keep retrying one request on 429/5xx.")] = 300.0,
    overlap: Annotated[
        str, typer.Option(help="Re-read this much before the time of the last read (late entries).")
    ] = "5m",
    ignore_watermark: Annotated[
        bool, typer.Option("--ignore-watermark", help="Start at --since/--last, not where the last collect stopped.")
    ] = False,
    pages_per_append: Annotated[int, typer.Option(min=1, help="Pages (1000 entries) read between two appends.")] = 5,
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar, print nothing on success.")] = False,
) -> None:
    """Read training-job step logs from Cloud Logging and append them to the dataset, resuming where the last
    collect stopped."""
    from tierscope.collector.collect_cloud import CollectStopped, collect_cloud, parse_duration, parse_when
    from tierscope.collector.sources.cloud_logging import RetryPolicy, backoff_note

    if since and last:
        raise typer.BadParameter("give --since or --last, not both")
    try:
        start = parse_when(since) if since else None
        if last:
            start = datetime.now(UTC) - parse_duration(last)
        end = parse_when(until) if until else None
        overlap_td = parse_duration(overlap)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    progress = None if quiet else cloud_progress()
    try:
        runs = load_manifest(manifest) if manifest else []
        with progress or contextlib.nullcontext():
            task = progress.add_task("reading Cloud Logging", total=None) if progress else None
            result = collect_cloud(
                Dataset(dataset),
                job_id,
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
                on_progress=(lambda p: progress.update(task, completed=p.entries)) if progress else None,  # type: ignore[arg-type]
            )
    except CollectStopped as exc:
        print_counts(exc.result, quiet)
        raise fail(exc) from None
    except TierscopeError as exc:
        raise fail(exc) from None
    except KeyboardInterrupt:
        raise interrupted() from None
    print_counts(result, quiet)
    if not quiet:
        Console().print(backoff_note(result.stats), highlight=False)


class _RateColumn(ProgressColumn):
    """Entries per second, from rich's own speed estimate."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} entries/s")


def cloud_progress() -> Progress:
    """A progress bar for an open-ended count of entries, on stderr."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.completed:,.0f} entries"),
        _RateColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=False,
    )


def rejects_cmd(
    dataset: DatasetOpt = Path("dataset"),
    run_id: Annotated[str | None, typer.Option(help="Only this run.")] = None,
    limit: Annotated[int, typer.Option(min=0, help="Show at most this many.")] = 50,
) -> None:
    """List the lines kept aside as rejects: file, line number, reason and the raw text."""
    try:
        frame = existing_dataset(dataset).read("rejects", run_id)
    except TierscopeError as exc:
        raise fail(exc) from None
    frame = frame.sort("run_id", "source", "source_offset")
    # One compiler-style line per reject (file:line: reason), so editors and grep can jump to it.
    for row in frame.head(limit).iter_rows(named=True):
        print(f"{row['source']}:{row['source_offset']}: [{row['run_id']}] {row['reason']}\n    {row['raw'][:200]!r}")
    shown = f" (first {limit} shown; --limit to see more)" if frame.height > limit else ""
    print(f"{frame.height} rejected lines{shown}")


def formats_cmd() -> None:
    """List the step-log formats tierscope reads, one example line each, and what their step and seconds mean."""
    table = Table("name", "kind", "example", "step and seconds", show_lines=True)
    for info in describe_formats():
        table.add_row(info.name, info.kind, escape(info.example), escape(info.meaning))
    Console().print(table)
    print(
        "Sniffing puts the format matching most of a file's first lines first; every format still reads "
        "the lines it recognises (mixed files). --format NAME reads with that format alone.",
        file=sys.stdout,
    )


def doctor_cmd(
    dataset: DatasetOpt = Path("dataset"),
    fix: Annotated[bool, typer.Option("--fix", help="Move each corrupt file to quarantine/.")] = False,
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: QuietOpt = False,
) -> None:
    """Check every data file's footer, schema and pages and every state file; name each corrupt one.

    Exit 0 if the dataset reads cleanly (after --fix), 1 if a corrupt file is left, 75 busy.
    """
    ds = Dataset(dataset)
    if not ds.root.is_dir():
        raise fail(CollectorError(f"{dataset} is not a directory"))
    try:
        report = doctor(ds, fix=fix, lock_timeout=lock_timeout)
    except (TierscopeError, OSError) as exc:
        raise fail(exc) from None
    for problem in report.problems:
        moved = f" -> moved to {problem.moved_to}" if problem.moved_to else ""
        err.print(Text(f"corrupt: {problem.path}: {problem.problem}{moved}"), soft_wrap=True)
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
    dataset: DatasetOpt = Path("dataset"),
    lock_timeout: LockTimeoutOpt = 60.0,
    quiet: QuietOpt = False,
) -> None:
    """Merge each partition's small files into one (atomically; readers see every record once)."""
    try:
        result = compact(existing_dataset(dataset), lock_timeout=lock_timeout)
    except (TierscopeError, OSError) as exc:
        raise fail(exc) from None
    if not quiet:
        print(
            f"compacted {result.partitions} partitions: {result.files_before} files -> {result.files_after} "
            f"({result.rows} rows)"
        )


def register(app: typer.Typer) -> None:
    app.add_typer(collect_app, name="collect")
    app.command("rejects")(rejects_cmd)
    app.command("formats")(formats_cmd)
    app.command("doctor")(doctor_cmd)
    app.command("compact")(compact_cmd)
