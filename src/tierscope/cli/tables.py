"""Tables that read in an ordinary terminal, and the same result as JSON, CSV or Markdown.

A command describes its result once, as a :class:`Grid` of text cells (what a person reads) and
the records behind it (what a program reads), and :func:`emit` writes it in the ``--format``
asked for. The terminal layout follows ``kubectl get``, ``gh`` and ``docker ps``: no borders,
figures never cut, long names (run ids, paths) shortened in the middle, prose wrapped at
words, columns empty in every row left out, and when the terminal is still too narrow the
least needed columns left out with a note; ``--wide`` shows every column in full.

Imported by command bodies only (it loads rich).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import sys
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tierscope.cli.common import FormatChoice, err_console, out_console
from tierscope.cli.numbers import MISSING
from tierscope.cli.prose import prose_width, wrap
from tierscope.text import printable

#: ``name``: an identifier (run id, path, format), shortened in the middle when too long (only once
#: the prose beside it is as narrow as it goes), never wrapped; ``figure``: a number, right-aligned,
#: never cut; ``label``: a short word (a tier), never cut; ``phrase``: a few words (a status, ``no end
#: logged``) on one line where there is room, else wrapped between them, a word never cut; ``text``: prose
#: (a failure's reason), wrapped at words.
Kind = Literal["name", "figure", "label", "phrase", "text"]

#: Spaces at the end of a table's line, before the line's closing colour codes and its newline.
_TRAILING = re.compile(r" +((?:\x1b\[[0-9;]*m)*\n?)$")
#: The narrowest a name is shortened to, and a wrapped text column's narrowest width.
NAME_MIN = 12
TEXT_MIN = 16
#: Spaces between two columns.
GAP = 2
ELLIPSIS = "…"


@dataclass(frozen=True)
class Column:
    """A column: its header, what its cells are (:data:`Kind`), whether only ``--wide`` shows it,
    and ``drop``: the order in which a narrow terminal leaves it out (0: never; higher first)."""

    header: str
    kind: Kind = "figure"
    wide: bool = False
    drop: int = 0


@dataclass
class Grid:
    """A result as a person reads it: ``columns``, ``rows`` of text cells (:data:`MISSING` for a
    figure that is not there), an optional ``title`` and ``notes`` printed after the table."""

    columns: list[Column]
    rows: list[list[str]] = field(default_factory=list)
    title: str | None = None
    notes: list[str] = field(default_factory=list)
    #: A blank line between rows: for rows whose cells wrap onto several lines.
    spaced: bool = False

    def add(self, *cells: str) -> None:
        """One row; control characters in its cells (a run id is the user's) are shown escaped."""
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([printable(c) for c in cells])


def shorten_middle(text: str, width: int) -> str:
    """``text`` cut to ``width`` terminal cells by replacing its middle with an ellipsis, keeping more
    of the end (a file's name, a run id's distinguishing suffix): ``/a/long/path/x.log`` -> ``/a/…/x.log``.
    Widths are cells, not characters: a CJK character takes two (``rich.cells``)."""
    if cell_len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    head = _cells_from(text, (width - 1) // 3)
    tail = _cells_from(text[::-1], width - 1 - cell_len(head))[::-1]
    return head + ELLIPSIS + tail


#: The widest a name (a run id, a tier) is shown inside a sentence: a title or a note under a table.
NAME_IN_TEXT = 60


def named(name: str) -> str:
    """``name`` as a title or a note shows it: cut in the middle to :data:`NAME_IN_TEXT` cells, as a
    table cuts a long name (:func:`shorten_middle`), so a 10,000-character run id takes one line."""
    return shorten_middle(name, NAME_IN_TEXT)


def _cells_from(text: str, width: int) -> str:
    """The longest start of ``text`` that fits in ``width`` cells."""
    taken, used = [], 0
    for char in text:
        used += get_character_cell_size(char)
        if used > width:
            break
        taken.append(char)
    return "".join(taken)


def _header_min(header: str) -> int:
    return max((cell_len(word) for word in header.split()), default=0)


def _natural(column: Column, cells: list[str], whole_header: bool = False) -> int:
    """The cells ``cells`` need, with the header on one line (``whole_header``) or wrapped at words."""
    return max([cell_len(column.header) if whole_header else _header_min(column.header), *map(cell_len, cells)])


def _is_empty(cells: list[str]) -> bool:
    return all(c in (MISSING, "") for c in cells)


@dataclass
class Layout:
    """What fits: the indices of the columns shown, their widths, and the headers left out."""

    shown: list[int]
    widths: list[int]
    hidden: list[str]


def layout(grid: Grid, width: int | None, wide: bool) -> Layout:
    """Choose the columns and their widths for a terminal ``width`` characters wide (None or
    ``wide``: no limit, every column)."""
    columns = grid.columns
    cells = [[row[i] for row in grid.rows] for i in range(len(columns))]
    if wide:
        shown = list(range(len(columns)))
        return Layout(shown, [_natural(columns[i], cells[i], whole_header=True) for i in shown], [])
    shown = [i for i, c in enumerate(columns) if not c.wide and (c.kind == "name" or not _is_empty(cells[i]))]
    hidden: list[str] = []

    def floor(i: int) -> int:
        """The narrowest column ``i`` may become: a figure or label never narrower than its cells."""
        column, natural = columns[i], _natural(columns[i], cells[i])
        if column.kind == "name":
            return min(natural, max(NAME_MIN, _header_min(column.header)))
        if column.kind == "text":
            return min(natural, max(TEXT_MIN, _header_min(column.header)))
        if column.kind == "phrase":
            return max([_header_min(column.header), *(_header_min(cell) for cell in cells[i])])
        return natural

    def total(widths: list[int]) -> int:
        return sum(widths) + GAP * (len(widths) - 1)

    whole = [_natural(columns[i], cells[i], whole_header=True) for i in shown]
    if width is None or total(whole) <= width:
        return Layout(shown, whole, hidden)  # room for every header on one line
    while True:
        natural = [_natural(columns[i], cells[i]) for i in shown]
        floors = [floor(i) for i in shown]
        if width is None or total(natural) <= width:
            return Layout(shown, natural, hidden)
        droppable = [i for i in shown if columns[i].drop > 0]
        if total(floors) <= width or not droppable:
            break
        # Still too wide at the narrowest: leave out the least needed column and try again.
        gone = max(droppable, key=lambda i: (columns[i].drop, i))
        shown.remove(gone)
        hidden.append(columns[gone].header)
    # Give the room left to the names first, then to the text: a name cut short loses characters (a
    # run id's, the file:line an editor jumps to), prose wrapped onto one more line loses nothing.
    widths = floors[:]
    room = width - total(widths)
    for kind in ("name", "text", "phrase"):
        room = _widen(widths, natural, [k for k, i in enumerate(shown) if columns[i].kind == kind], room)
    return Layout(shown, widths, hidden)


def _widen(widths: list[int], natural: list[int], among: list[int], room: int) -> int:
    """Widen the columns ``among`` towards their ``natural`` widths by ``room`` characters at most,
    in proportion to what each lacks; return the room left."""
    lack = {k: natural[k] - widths[k] for k in among}
    wanted = sum(lack.values())
    if room <= 0 or wanted == 0:
        return max(room, 0)
    if wanted <= room:
        for k in among:
            widths[k] = natural[k]
        return room - wanted
    given = {k: room * lack[k] // wanted for k in among}
    # The characters the rounding down left, one each to the columns still lacking the most.
    for k in sorted(among, key=lambda k: lack[k] - given[k], reverse=True)[: room - sum(given.values())]:
        given[k] += 1
    for k in among:
        widths[k] += given[k]
    return 0


def rich_table(grid: Grid, width: int | None, wide: bool) -> tuple[Table, list[str]]:
    """The terminal table of ``grid`` for ``width`` columns, and the headers left out to fit."""
    fit = layout(grid, width, wide)
    table = Table(
        box=None,
        padding=(0, GAP // 2),
        pad_edge=False,
        header_style="bold",
        leading=1 if grid.spaced else 0,
    )
    for i, w in zip(fit.shown, fit.widths, strict=True):
        column = grid.columns[i]
        table.add_column(
            column.header,
            justify="right" if column.kind == "figure" else "left",
            width=w,
            overflow="fold",
        )
    for row in grid.rows:
        cells = []
        for i, w in zip(fit.shown, fit.widths, strict=True):
            cell = row[i]
            if grid.columns[i].kind == "name" and not wide:
                cell = shorten_middle(cell, w)
            cells.append(Text(cell))  # text, not markup: a run id may hold "[...]"
        table.add_row(*cells)
    return table, fit.hidden


def print_table(grid: Grid, wide: bool = False, console: Console | None = None) -> None:
    """``grid`` as a table on ``console`` (default: stdout), fitted to its width unless ``wide``;
    then its notes, and on stderr which columns a narrow terminal left out."""
    console = console or out_console()
    # prose at the terminal's width, else COLUMNS, else 80 (a piped table may be 200 wide)
    prose = console.width if console.is_terminal else prose_width(console.file)
    if not grid.rows:  # nothing to tabulate: the notes say so
        for note in grid.notes:
            console.print(Text(wrap(printable(note), prose)), soft_wrap=True)
        return
    width = None if wide else console.width
    table, hidden = rich_table(grid, width, wide)
    if wide:
        # As wide as the table needs, past the terminal's edge (kubectl's -o wide does the same).
        needed = sum(layout(grid, None, True).widths) + GAP * max(len(grid.columns) - 1, 0)
        console = Console(file=console.file, width=max(needed, console.width), force_terminal=console.is_terminal)
    if grid.title:
        # Above the table, wrapped at the terminal's width: a table's own title wraps at the
        # table's, three lines over a narrow table.
        console.print(Text(printable(grid.title), style="table.title"))
    with console.capture() as drawn:
        console.print(table)
    # rich pads every cell to its column's width: a line's trailing spaces go (a wrapped cell's line, the last
    # column's label), the colour codes after them stay
    console.file.write("".join(_TRAILING.sub(r"\1", line) for line in drawn.get().splitlines(keepends=True)))
    for note in grid.notes:  # wrapped at words, keeping a note's indent
        console.print(Text(wrap(printable(note), prose)), soft_wrap=True)
    if hidden:
        err_console().print(
            Text(f"note: left out to fit {console.width} columns: {', '.join(hidden)}; --wide shows every column"),
            soft_wrap=True,
        )


def markdown(grid: Grid, wide: bool = False) -> str:
    """``grid`` as a GitHub Markdown table (the columns a terminal of any width shows, or every
    one with ``wide``; nothing shortened), its title above in bold and its notes below."""
    fit = layout(grid, None, wide)

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(markdown_text(c) for c in cells) + " |"

    out = [f"**{markdown_text(grid.title)}**", ""] if grid.title else []
    out.append(line([grid.columns[i].header for i in fit.shown]))
    out.append("|" + "|".join("---:" if grid.columns[i].kind == "figure" else "---" for i in fit.shown) + "|")
    out += [line([row[i] for i in fit.shown]) for row in grid.rows]
    for note in grid.notes:  # a paragraph each
        out += ["", markdown_text(note)]
    return "\n".join(out)


#: Characters of Markdown's syntax written with a backslash: links and images (``[``, ``]``), code
#: spans, emphasis with ``*``, table cells, the backslash itself; ``<``, ``>`` and ``&`` become HTML
#: entities, since GitHub Markdown passes HTML through (a tag, or an autolink ``<javascript:...>``, is
#: then text). ``_`` is left: within a word it emphasises nothing, and run ids are full of it.
_MARKDOWN_SYNTAX = str.maketrans(
    {**{c: "\\" + c for c in "\\`*[]|"}, "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " "}
)


def markdown_text(text: str) -> str:
    """``text`` (a cell, a title, a note; from logs and the command line) as Markdown that shows it
    as written: control characters escaped (:func:`printable`), then every character Markdown or
    HTML would read as syntax escaped, so no link, image or tag can come from a run id or a log."""
    return printable(text).translate(_MARKDOWN_SYNTAX)


def _plain(value: object) -> object:
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(type(value).__name__)


def to_json(doc: object) -> str:
    """``doc`` as indented JSON, dates as ISO 8601 strings. A float that is not finite is null: JSON
    has no such number (Python would write ``Infinity``, which strict parsers refuse), and a figure
    that cannot be is withheld where it is computed, its reason beside it; this is the last guard."""
    return json.dumps(_finite(doc), indent=2, default=_plain, allow_nan=False)


def _finite(doc: object) -> object:
    """``doc`` with every float that is not finite, at any depth, as None."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: _finite(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [_finite(v) for v in doc]
    return doc


def to_csv(records: list[dict[str, Any]]) -> str:
    """``records`` as CSV: a header row of field names, then one row per record, the values as
    stored (full precision, no separators: for a spreadsheet), dates in ISO 8601, None empty, text
    made safe to open in a spreadsheet (:func:`csv_text`)."""
    buffer = io.StringIO()
    if records:
        writer = csv.DictWriter(buffer, fieldnames=[csv_text(k) for k in records[0]], lineterminator="\n")
        writer.writeheader()
        for record in records:
            writer.writerow({csv_text(k): _csv_value(v) for k, v in record.items()})
    return buffer.getvalue()


#: What a spreadsheet reads as the start of a formula in a cell (OWASP, "CSV Injection",
#: https://owasp.org/www-community/attacks/CSV_Injection, read 2026-12-06): ``=``, ``+``, ``-``,
#: ``@``, tab and carriage return; the fullwidth ``＝`` ``＋`` ``－`` ``＠`` too, which some
#: spreadsheets fold into them.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def csv_text(text: str) -> str:
    """A text cell as CSV writes it: control characters escaped (:func:`printable`: an ESC or OSC
    sequence reaches no terminal that shows the file), and a cell that would start a formula given
    a leading ``'``, as OWASP recommends (a spreadsheet shows it as text: ``'=HYPERLINK(...)``)."""
    shown = printable(text)
    return "'" + shown if text.startswith(_FORMULA_STARTS) else shown


def _csv_value(value: object) -> object:
    """A record's value as CSV writes it. Numbers stay numbers: a float or int is written as Python
    prints it (``-3.2``), which a spreadsheet reads as that number and never as a formula (a formula
    needs an operator after the sign), so a negative figure keeps its sign and its type; only text,
    which comes from logs and the command line, is neutralised."""
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, str):
        return csv_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None  # withheld, as in JSON: no figure can be infinite
    return value


def emit(
    fmt: FormatChoice,
    grid: Grid,
    records: list[dict[str, Any]],
    doc: object | None = None,
    wide: bool = False,
) -> None:
    """Write a result in ``fmt``: ``grid`` as a table or Markdown, ``records`` as CSV, ``doc`` (default:
    ``records``) as JSON."""
    if fmt is FormatChoice.table:
        print_table(grid, wide)
    elif fmt is FormatChoice.markdown:
        sys.stdout.write(markdown(grid, wide) + "\n")
    elif fmt is FormatChoice.csv:
        sys.stdout.write(to_csv(records))
    else:
        sys.stdout.write(to_json(records if doc is None else doc) + "\n")
