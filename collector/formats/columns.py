"""Reports printed as the rows of a table whose header row names the columns.

Some trainers print one header line naming their figures, then one row of bare numbers per report under it:
Chainer's ``PrintReport`` (``epoch  main/loss  validation/main/loss  elapsed_time`` then
``1  0.189677  0.105867  13.5156``), fastai's ``Learner`` table (``epoch  train_loss  valid_loss  accuracy  time``
then ``0  0.216  0.120  0.951  00:12``), ``|``-ruled tables of the same shape. A row alone says nothing the grammar
can read: its numbers are named by the header. :func:`tabulated` gives the grammar each row as the statements its
header makes of it, ``epoch: 1 | main/loss: 0.189677 | ...`` (the separator the grammar reads as any other), at the
row's own line number; the grammar then decides what it is, as for any line.

A header is a line of at least :data:`LEAST_COLUMNS` cells, each a name (a word, with the ``/``, ``_``, ``.``,
``-`` that figures' names use), one of which names a position the grammar reads (the ``statements`` handed in
decide that, so this module needs no import of the grammar). A row is a later line of the same task with as many
cells as its header, each a number (``0.18``, ``1e-3``, ``nan``, ``95.2%``) or a duration (``00:12``,
``1:02:03``), its position cell a whole number (a step's column before an epoch's). A table whose rows leave
cells blank (validation columns filled only on the rows that validated) is not split on blanks: the learned layout
reads it by the columns' places. Other lines may come between a header and its rows (a
progress bar, a warning); a new header replaces the old. A line of words that merely lists names (a config's
keys) names no position and is no header; a row of numbers under no header is left as written. A header a terminal
wrapped mid-name (its last cell ending in a joiner, ``elapsed_``, the rest alone on the next line) is read whole.

The last header of each task is kept in ``ParseContext.state`` (:data:`STATE_KEY`), so the rows of a later batch,
or of a later collect of a growing file, are read under it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import polars as pl

from tierscope.collector.formats.base import TAG, ParseContext
from tierscope.collector.formats.vocabulary import clock_seconds

#: The fewest columns a header names: a position and two figures (fewer is a ``key value`` line).
LEAST_COLUMNS: Final = 3
#: What a row's statements are joined with: a separator the grammar reads as any other.
SEPARATOR: Final = " | "
#: Where each task's last header (its cells) is kept in ``ParseContext.state``, by task tag (``""``: untagged).
STATE_KEY: Final = "grammar-table-header"
#: Where the headers whose rows leave cells blank are kept (their cells joined by ``\x1f``): left to the layout.
SPARSE_KEY: Final = "grammar-table-sparse"

#: A column's name: a word, with the separators figures' names use (``main/loss``, ``valid_loss``, ``top-1``).
_NAME: Final = r"^[A-Za-z][A-Za-z0-9_/.\-@#%]*(?:\([A-Za-z/%]+\))?$"
#: A cell of a row: a number (a sign, decimals, an exponent, a percent sign), NaN or infinity, or a duration.
_VALUE: Final = (
    r"^(?:[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?|[-+]?(?:nan|NaN|inf|Inf)|\d+:\d{2}(?::\d{2})?(?:\.\d+)?)$"
)
#: A ruled table's cell separator; a line with two of them is split on them, else on blanks.
_RULE: Final = "|"
#: Every character a header's or a row's line can hold: its cells' (:data:`_NAME`'s, :data:`_VALUE`'s), blanks and
#: :data:`_RULE`. A line with any other character is neither (cells are cut at blanks and rules only).
_TABLE_CHARS: Final = r"^[\sA-Za-z0-9_/.@#%()|:+-]*$"

#: ``statements(messages)``: the grammar's statements of each message of a String series, one row each.
Statements = Callable[[pl.Series], pl.DataFrame]


def _cells(line: pl.Expr) -> pl.Expr:
    """A line's cells (List of String): between ``|`` where it has two or more of them (the empty cells outside its
    outer rules dropped), else between runs of blanks."""
    text = line.str.strip_chars()
    ruled = text.str.count_matches(_RULE, literal=True) >= 2
    by_rule = text.str.strip_chars(_RULE).str.split(_RULE).list.eval(pl.element().str.strip_chars())
    by_blank = text.str.replace_all(r"\s+", " ").str.split(" ")
    return pl.when(ruled).then(by_rule).otherwise(by_blank)


def _all(cells: pl.Expr, pattern: str) -> pl.Expr:
    return cells.list.eval(pl.element().str.contains(pattern)).list.all()


def _cell(value: pl.Expr) -> pl.Expr:
    """A cell as its statement's value: a duration written as a clock (fastai's ``00:12``, ``1:12:49``) as its
    seconds with their unit (``12s``), which a clock after a bare ``time:`` on a line of its own is not (it may be a
    time of day); a table's column of them under a row's position is the rows' durations."""
    seconds = clock_seconds(value)
    return pl.when(seconds.is_not_null()).then(seconds.cast(pl.String) + "s").otherwise(value)


def _joined(header: list[str], cells: pl.Expr) -> pl.Expr:
    """A row's cells as its header's statements: ``name: value`` joined by :data:`SEPARATOR`."""
    return pl.concat_str(
        [pl.lit(f"{name}: ") + _cell(cells.list.get(i)) for i, name in enumerate(header)], separator=SEPARATOR
    )


#: The end of a name a terminal's width cut: a joiner its figures' names use, the rest of the name on the next line.
_CUT_NAME: Final = r"[_/.\-]$"


def _unwrapped(framed: pl.DataFrame) -> pl.DataFrame:
    """``framed`` (``_t``, ``_cells``) with a header line a terminal wrapped made whole: where a line's last cell ends
    in a joiner (:data:`_CUT_NAME`) and the task's next line is one name alone, that name ends the cell (Chainer's
    ``PrintReport`` at a terminal's width: ``... validation/main/VAE  elapsed_`` then ``time``, then the row of
    as many numbers as the whole header's columns: chainer/chainer issue 7591, 2019-06-24)."""
    following = pl.col("_cells").shift(-1).over("_t")
    cut = pl.col("_cells").list.last().str.contains(_CUT_NAME) & (following.list.len() == 1)
    rest = following.list.first()
    wrapped = (cut & rest.str.contains(_NAME) & ~rest.str.contains(r"\d")).fill_null(False)
    whole = pl.concat_list(
        pl.col("_cells").list.head(pl.col("_cells").list.len() - 1), pl.concat_list(pl.col("_cells").list.last() + rest)
    )
    return framed.with_columns(_cells=pl.when(wrapped).then(whole).otherwise("_cells"))


def _position_columns(headers: list[tuple[str, ...]], statements: Statements) -> dict[tuple[str, ...], int]:
    """Each of ``headers`` that names a position the grammar reads (a step, an iteration, an epoch), with that
    position's column: each name tried alone before a whole number, all the headers' names in one reading (a log's
    prose offers many lines of words that might be headers: one grammar call per line would cost seconds)."""
    names = sorted({name for header in headers for name in header})
    if not names:
        return {}
    said = statements(pl.Series([f"{name}: 1" for name in names], dtype=pl.String))
    steps = {n for n, found in zip(names, said.get_column("step").is_not_null().to_list(), strict=True) if found}
    epochs = {n for n, found in zip(names, said.get_column("epoch_only").is_not_null().to_list(), strict=True) if found}
    found: dict[tuple[str, ...], int] = {}
    for header in headers:
        # a step's column before an epoch's: a table of both (ESPnet's ``epoch  iteration ...``) reports iterations
        at = next((i for i, n in enumerate(header) if n in steps), None)
        at = next((i for i, n in enumerate(header) if n in epochs), None) if at is None else at
        if at is not None:
            found[header] = at
    return found


def tabulated(lines: pl.DataFrame, context: ParseContext, statements: Statements) -> pl.DataFrame:
    """``lines`` (``source_offset``, ``line``, the task tag) with each row of a table under a header row made the
    statements its header names (``name: value | ...``); every other line as it was. A batch's candidate headers
    are judged in one grammar reading; the last header of each task is kept in ``context`` for the next batch."""
    if lines.height == 0:
        return lines
    carried: dict[str, tuple[str, ...]] = context.state.get(STATE_KEY) or {}
    tag = pl.col(TAG).fill_null("") if TAG in lines.columns else pl.lit("")
    digits = pl.col("line").str.contains(r"\d")
    # only a line of a table's characters is cut into cells: on a log of other lines (nearly every one) cutting
    # each line cost 2.7 CPU-s in 2,000,000; the rest come out as before, since neither kind is among them
    framed = lines.filter(pl.col("line").str.contains(_TABLE_CHARS)).select(
        "source_offset",
        _t=tag,
        _cells=_cells(pl.col("line")),
        _maybe_header=pl.col("line").str.contains(r"[A-Za-z]"),
        _maybe_row=digits & ~pl.col("line").str.contains(r"[A-Za-z]{4}"),
    )
    framed = _unwrapped(framed).with_columns(_n=pl.col("_cells").list.len())
    header_like = framed.filter(
        pl.col("_maybe_header") & (pl.col("_n") >= LEAST_COLUMNS) & _all(pl.col("_cells"), _NAME)
    )
    candidates = [tuple(c) for c in header_like.get_column("_cells").unique().to_list()]
    # a name twice: a line of words, not a table's columns
    judged = _position_columns([h for h in candidates if len(set(h)) == len(h)], statements)
    if not judged and not carried:
        return lines
    headers = header_like.filter(
        pl.col("_cells").cast(pl.List(pl.String)).list.join("\x1f").is_in(["\x1f".join(h) for h in judged])
    )
    header_at = headers.select("source_offset", _h=pl.col("_cells").list.join("\x1f"))
    framed = framed.join(header_at, on="source_offset", how="left").with_columns(
        _under=pl.col("_h").forward_fill().over("_t")
    )
    if carried:
        framed = framed.with_columns(
            _under=pl.col("_under").fill_null(
                pl.col("_t").replace_strict({t: "\x1f".join(h) for t, h in carried.items()}, default=None)
            )
        )
    last = framed.filter(pl.col("_h").is_not_null()).group_by("_t").agg(pl.col("_h").last())
    for t, h in last.iter_rows():
        carried[t] = tuple(h.split("\x1f"))
    if carried:
        context.state[STATE_KEY] = carried
    numeric = framed.filter(
        pl.col("_h").is_null() & pl.col("_under").is_not_null() & pl.col("_maybe_row") & _all(pl.col("_cells"), _VALUE)
    )
    full = pl.col("_n") == pl.col("_under").str.count_matches("\x1f", literal=True) + 1
    # a table whose rows leave cells blank (ESPnet's validation columns, filled on the rows that validated) cannot be
    # split on blanks; the learned layout reads it by the columns' places (kept for the file: its later rows too)
    sparse = set(numeric.filter(~full).get_column("_under").unique().to_list())
    if sparse:
        context.state[SPARSE_KEY] = sorted(set(context.state.get(SPARSE_KEY, ())) | sparse)
    skipped = list(context.state.get(SPARSE_KEY, ()))
    rows = numeric.filter(full & ~pl.col("_under").is_in(skipped))
    if rows.height == 0:
        return lines
    under = [tuple(str(h).split("\x1f")) for h in rows.get_column("_under").unique().to_list()]
    judged = {**_position_columns([h for h in under if h not in judged], statements), **judged}
    parts = []
    for h, group in rows.group_by("_under"):
        header = str(h[0]).split("\x1f")
        at = judged.get(tuple(header))
        if at is None:
            continue
        whole = pl.col("_cells").list.get(at).str.contains(r"^\d+$")
        parts.append(group.filter(whole).select("source_offset", _joined=_joined(header, pl.col("_cells"))))
    if not parts:
        return lines
    joined = pl.concat(parts)
    return (
        lines.join(joined, on="source_offset", how="left", maintain_order="left")
        .with_columns(line=pl.coalesce("_joined", "line"))
        .drop("_joined")
    )
