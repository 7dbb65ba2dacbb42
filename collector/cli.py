"""``tierscope collect ...`` and ``tierscope rejects``: thin wrappers over :mod:`collector`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from collector.collect import CollectResult, collect_runs, runs_from_paths
from collector.dataset import Dataset
from collector.errors import EXIT_BUSY, CollectorError, DatasetBusyError
from collector.formats import FORMATS, describe_formats
from collector.manifest import load_manifest
from collector.sources.console_csv import CONSOLE_CSV, describe_console_csv

collect_app = typer.Typer(help="Collect step logs into a dataset.", no_args_is_help=True)
err = Console(stderr=True)

DatasetOpt = Annotated[Path, typer.Option("--dataset", "-d", help="Dataset directory (created if missing).")]


def out_console() -> Console:
    """A console for stdout; cron and pipes have no terminal width, so tables get a wide one."""
    return Console(width=None if sys.stdout.isatty() else 200)


def fail(exc: Exception) -> typer.Exit:
    """Print ``exc`` on one line to stderr and return the exit to raise (75 when busy, else 1)."""
    # Text, not markup: a message may quote a log line such as "Train [worker/3]".
    err.print(Text.assemble(("error: ", "bold red"), str(exc)), soft_wrap=True)
    return typer.Exit(EXIT_BUSY if isinstance(exc, DatasetBusyError) else 1)


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
    rejected = result.total("rejects")
    print(
        f"read {result.total('lines')} lines: stored {result.total('steps')} step records and "
        f"{result.total('events')} events, skipped {result.total('duplicates')} duplicates, "
        f"kept aside {rejected} rejected lines" + (" (see `tierscope rejects`)" if rejected else ""),
    )


@collect_app.command("files")
def collect_files_cmd(
    paths: Annotated[list[Path] | None, typer.Argument(help="Log files or run directories.")] = None,
    dataset: DatasetOpt = Path("dataset"),
    run_id: Annotated[
        str | None, typer.Option(help="Run id for these files (default: from the records or file name).")
    ] = None,
    tier: Annotated[str | None, typer.Option(help="Scale tier of the run (BASIC, STANDARD_1, ...).")] = None,
    manifest: Annotated[Path | None, typer.Option(help="A runs.toml naming each run's id, tier and files.")] = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help=f"Skip sniffing: one of {', '.join([*FORMATS, CONSOLE_CSV])}."),
    ] = None,
    year: Annotated[
        int | None, typer.Option(help="Year of glog/absl timestamps (default: each file's modification year).")
    ] = None,
    lock_timeout: Annotated[float, typer.Option(help="Seconds to wait for another collect to finish.")] = 60.0,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success (for cron).")] = False,
) -> None:
    """Read step logs from files and append them to the dataset."""
    if not paths and manifest is None:
        raise typer.BadParameter("give log files or run directories, or --manifest runs.toml")
    try:
        runs = load_manifest(manifest) if manifest else []
        if paths:
            runs += runs_from_paths(paths, run_id, tier, fmt)
        result = collect_runs(Dataset(dataset), runs, lock_timeout=lock_timeout, year=year)
    except CollectorError as exc:
        raise fail(exc) from None
    print_counts(result, quiet)


def rejects_cmd(
    dataset: DatasetOpt = Path("dataset"),
    run_id: Annotated[str | None, typer.Option(help="Only this run.")] = None,
    limit: Annotated[int, typer.Option(help="Show at most this many.")] = 50,
) -> None:
    """List the lines kept aside as rejects: file, line number, reason and the raw text."""
    try:
        frame = Dataset(dataset).read("rejects", run_id)
    except CollectorError as exc:
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
    for info in [*describe_formats(), describe_console_csv()]:
        table.add_row(info.name, info.kind, escape(info.example), escape(info.meaning))
    Console().print(table)
    print(
        "Sniffing puts the format matching most of a file's first lines first; every format still reads "
        "the lines it recognises (mixed files). --format NAME reads with that format alone.",
        file=sys.stdout,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(collect_app, name="collect")
    app.command("rejects")(rejects_cmd)
    app.command("formats")(formats_cmd)
