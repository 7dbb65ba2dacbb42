"""``tierscope formats``: what tierscope reads, and (``--try FILE``) how it reads a given file."""

from __future__ import annotations

import contextlib
import dataclasses
import re
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tierscope.cli.common import App, FormatsFileOpt, LogFormatOpt, OldLogFormatOpt, WideOpt, log_format

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from tierscope.collector.explain import Explanation, FileVerdict, LineReading
    from tierscope.collector.formats import FormatInfo, LineFormat

#: :data:`tierscope.collector.explain.DEFAULT_LINES`, spelled out so ``--help`` need not import
#: the collector (tests/cli/test_startup.py checks it).
DEFAULT_LINES = 20

_OUTCOME_STYLE = {"record": "green", "event": "yellow", "reject": "red", "skipped": "dim"}


def parse_window(text: str) -> tuple[int, int]:
    """``"A-B"`` (or ``"A"``) as 1-based inclusive line numbers; raises :class:`typer.BadParameter`."""
    got = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    first, last = (int(got.group(1)), int(got.group(2) or got.group(1))) if got else (0, 0)
    if not got or first < 1 or last < first:
        raise typer.BadParameter(f"--lines {text!r}: give A-B with 1 <= A <= B, e.g. --lines 40-60")
    return first, last


def formats_cmd(
    files: Annotated[
        list[Path] | None,
        typer.Argument(metavar="FILE...", help="Log files to try (with --try); - reads one from standard input."),
    ] = None,
    try_: Annotated[
        bool, typer.Option("--try", help="Show how each FILE is read: per line, then a verdict per file.")
    ] = False,
    lines: Annotated[
        str | None,
        typer.Option("--lines", help=f"Lines A-B to show (default: the first {DEFAULT_LINES}).", metavar="A-B"),
    ] = None,
    formats: FormatsFileOpt = None,
    fmt: LogFormatOpt = None,
    old_fmt: OldLogFormatOpt = None,
    year: Annotated[
        int | None, typer.Option(min=1, max=9999, help="The year of glog/absl timestamps.", metavar="YEAR")
    ] = None,
    wide: WideOpt = False,
) -> None:
    """List the step-log formats tierscope reads, one example line each; with --try FILE, how FILE is read.

    --try shows for each line of the window which envelope/prefix was stripped, which format read
    the line and the fields it got (rates in steps/s, times in s), or why it has no metric or
    was rejected; then one verdict per file: format, records, roles, status.
    """
    if files and not try_:
        raise typer.BadParameter("to see how files are read, give --try: tierscope formats --try FILE")
    if try_ and not files:
        raise typer.BadParameter(
            "--try needs a log file, or - for standard input: tierscope formats --try FILE, "
            "kubectl logs POD | tierscope formats --try -"
        )
    window = parse_window(lines) if lines is not None else None
    from rich.console import Console

    from tierscope.collector.explain import explain_file
    from tierscope.collector.formats import describe_formats
    from tierscope.collector.formats.declared import load_format_files
    from tierscope.collector.sources.tfevents import is_event_file

    declared = load_format_files(formats or [])
    if not try_:
        print_formats(describe_formats(declared), wide)
        return
    console = Console()
    for path in files or []:
        with _spooled_stdin() if path == STDIN else contextlib.nullcontext(path) as readable:
            if is_event_file(readable):
                print_event_tags(console, readable, declared)
                continue
            shown = explain_file(readable, window, only=log_format(fmt, old_fmt), formats=declared, year=year)
        if path == STDIN:
            shown = dataclasses.replace(shown, verdict=dataclasses.replace(shown.verdict, path=STDIN_NAME))
        print_explanation(console, shown)


#: The FILE that is standard input (``kubectl logs POD | tierscope formats --try -``), and its name in the verdict.
STDIN = Path("-")
STDIN_NAME = "stdin"


@contextlib.contextmanager
def _spooled_stdin() -> Iterator[Path]:
    """Standard input copied to a private file (removed after), read as ``collect`` reads a file: in batches,
    its head sniffed, a gzip stream opened as one. On a terminal it first says how to end the input."""
    import shutil

    from tierscope.cli.common import err_console
    from tierscope.tempdirs import owned_dir

    if sys.stdin.isatty():
        err_console().print("reading a log from standard input: paste its lines, then Ctrl-D", highlight=False)
    with owned_dir("tierscope-try-") as folder:
        spooled = folder / STDIN_NAME
        with spooled.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out)
        yield spooled


def print_event_tags(console: Console, path: Path, declared: tuple[LineFormat, ...]) -> None:
    """``formats --try`` of a TensorBoard event file: each scalar tag, its events, the field it is read as."""
    from rich.markup import escape

    from tierscope.collector.errors import InputError
    from tierscope.collector.manifest import RunSpec
    from tierscope.collector.readers.eventfiles import tag_table
    from tierscope.errors import TierscopeError

    try:
        rows = tag_table(path, RunSpec(run_id="try", tier=None, files=[path], formats=declared))
    except InputError as exc:
        raise TierscopeError(str(exc)) from None
    console.print(
        f"{escape(str(path))}: a TensorBoard event file, {len(rows)} scalar tags", highlight=False, soft_wrap=True
    )
    for tag, n, field in rows:
        read = f"read as {field}" if field else "not read (declare it: [tensorboard.tags] in --formats)"
        console.print(f"  {escape(tag)}  {n} events  {escape(read)}", highlight=False, soft_wrap=True)


def print_formats(rows: list[FormatInfo], wide: bool = False) -> None:
    """The table of ``tierscope formats``: name, kind, example line, what step and seconds mean."""
    from rich.text import Text

    from tierscope.cli.common import out_console
    from tierscope.cli.tables import Column, Grid, print_table

    grid = Grid(
        [Column("name", "label"), Column("kind", "label"), Column("example", "text"),
         Column("step and seconds", "text")],
        spaced=True,
    )  # fmt: skip
    for info in rows:
        grid.add(info.name, info.kind, info.example, info.meaning)
    print_table(grid, wide)
    out_console().print(
        Text(
            "Sniffing puts the format matching most of a file's first lines first; every format still reads "
            "the lines it recognises (mixed files). --log-format NAME reads with that format alone. Declared "
            "formats (--formats FILE.toml) run first. `tierscope formats --try FILE` shows how a file is read."
        )
    )


def print_explanation(console: Console, shown: Explanation) -> None:
    """The per-line table (80 columns: cells wrap, nothing is cut) and the file's verdict."""
    from rich.table import Table
    from rich.text import Text

    verdict = shown.verdict
    if shown.note:
        console.print(Text(f"{verdict.path}: {shown.note}"))
    else:
        # the lines shown, not the range asked for: a 7-line file's window is lines 1-7
        last = max((r.line for r in shown.readings), default=shown.last)
        title = Text(f"{verdict.path}, lines {shown.first}-{last}")
        table = Table("line", "format", "envelope, message and what was read", title=title)
        table.columns[0].justify = "right"
        table.columns[0].no_wrap = True
        for column in table.columns[1:]:
            column.overflow = "fold"
        for reading in shown.readings:
            table.add_row(str(reading.line), reading.format or "-", _read_cell(reading))
        if not shown.readings:
            table.add_row("-", "", Text(f"the file has no line {shown.first}-{shown.last}"))
        console.print(table)
    console.print(verdict_line(verdict))


def verdict_line(verdict: FileVerdict) -> Text:
    """``PATH: format F, N records (per format) [and D duplicates], roles ..., status S; R rejected, K with no
    metric, of L lines``."""
    from rich.text import Text

    from tierscope.cli.numbers import plural

    per = ", ".join(f"{name} {n}" for name, n in verdict.by_format.items())
    status = verdict.status + (f" ({verdict.failure_reason})" if verdict.failure_reason else "")
    return Text.assemble(
        (f"{verdict.path}: ", "bold"),
        f"format {verdict.format or 'none'}, {plural(verdict.records, 'record')}"
        + (f" ({per})" if len(verdict.by_format) > 1 else "")
        # as collect counts them: a record read again with the same values is stored once
        + (f" and {plural(verdict.duplicates, 'duplicate')}" if verdict.duplicates else ""),
        f", {plural(verdict.events, 'event')}, roles {', '.join(verdict.roles) or 'none'}, status ",
        (status, "red" if verdict.status == "failed" else "green" if verdict.status == "ok" else "yellow"),
        f"; {verdict.rejects:,} rejected, {verdict.skipped:,} with no metric, of {plural(verdict.lines, 'line')}",
    )


def _read_cell(reading: LineReading) -> Text:
    """The envelope and what it gave, the message, the outcome and each record's fields."""
    from rich.text import Text

    cell = Text()
    # an indentation stripped (a log pasted indented, a tqdm bar's leading space) is no envelope to name
    if reading.envelope.strip() or reading.envelope_gave:
        cell.append("envelope ", style="cyan")
        cell.append(reading.envelope.strip())
        if reading.envelope_gave:
            cell.append(f" -> {reading.envelope_gave}", style="cyan")
        cell.append("\n")
    # a progress bar's updates, one \r apart, each on a line of its own (a terminal drew them over each other,
    # and shown as spaces they ran together: "0.8100/100")
    first, *updates = reading.text[len(reading.envelope) :].split("\r")
    cell.append(first, style="dim")
    for update in updates:
        cell.append("\n\\r ", style="cyan")
        cell.append(update, style="dim")
    cell.append(f"\n{reading.outcome}", style=_OUTCOME_STYLE[reading.outcome])
    if reading.why:
        cell.append(f": {reading.why}")
    fields = [" ".join(f"{k}={_value(v)}" for k, v in record.items() if v is not None) for record in reading.records]
    if len(fields) == 1:
        cell.append(f": {fields[0]}")
    else:
        cell.append("".join(f"\n  {f}" for f in fields))
    return cell


def _value(value: object) -> str:
    """A field's value as a person reads it: a float to 6 significant digits (``0.30000000000000004`` is
    0.3; a value of a million and more whole, never in exponent form), a time in ISO 8601."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, float):
        if value != value or abs(value) == float("inf"):  # NaN, infinities: as Python writes them
            return str(value)
        return f"{value:.0f}" if abs(value) >= 1e6 else f"{value:.6g}"
    return str(value)


def register(app: App) -> None:
    app.command("formats")(formats_cmd)
