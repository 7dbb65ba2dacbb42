"""Python tracebacks: the run failed, with the exception's line as the reason.

``Traceback (most recent call last):``, then indented frame lines, then the exception
line (``ValueError: ...``, the first line that is not indented). The traceback's lines
carry no metric: they are skipped. The exception line becomes a ``failed`` event whose
reason is that line; :func:`tierscope.collector.formats.parse_lines` keeps the event when a step
record came before it in the file (a traceback logged before training started is a
warning, not a failed run), or, in a settled log with no step record at all, the last one (the program died
before its first step). In a chained traceback (``During handling of the above
exception...``) only the last exception counts; one Python says it ignored (``Exception ignored in: ...``) is
no failure. A ``KeyboardInterrupt`` (the user's Ctrl-C, whose ``^C`` echo may
open the traceback's first line) fails the run too: it did not finish the work it announced.

IPython (Jupyter, Colab) prints its own traceback: a rule of dashes, then the exception's class and
``Traceback (most recent call last)`` on one line (no colon), then frames that are not indented
(``Cell In[6], line 11``, ``[<ipython-input-41-e0fb761c012f>](https://localhost:8080/#) in <cell line: 0>()``,
``2 frames``, numbered source lines with ``---> 27``). Its exception line is the first one that starts with the
class its first line named, then a colon (``NotFoundError: Graph execution error:``, googlecolab/colabtools issue
5124; keras-team/keras issue 19448).
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import TAG, AlwaysTried, ParseContext, Parsed, empty_parsed
from tierscope.collector.formats.status import INTERRUPTED, RECOVERABLE_DETAIL
from tierscope.dataset.schema import CUT_TRACEBACK_ENDING, CUT_TRACEBACK_REASON

#: (the terminal's ``^C`` may be glued before it: the Ctrl-C that raised a ``KeyboardInterrupt``)
_START = r"^(?:\^C)?Traceback \(most recent call last\):\s*$"
#: Text every ``_START`` line holds: a literal search over a whole batch is several times cheaper
#: than the pattern, and nearly every batch has no traceback.
_START_TEXT = "Traceback (most recent call last):"
#: IPython's first line: the exception's class (group 1), padding, then the words without a colon.
_IPYTHON_START = r"^([A-Za-z_][\w.]*)\s+Traceback \(most recent call last\)\s*$"
#: Text every ``_IPYTHON_START`` line holds.
_IPYTHON_TEXT = "Traceback (most recent call last)"
#: The exception line: its class, a colon and the message, or the class alone. A wrapper may name the class it wraps in
#: parentheses: Ray's ``ray.exceptions.RayTaskError(ValueError): ray::TaskRunner.run() (pid=...)`` (a remote task's
#: error re-raised by ``ray.get``, as verl, MindSpeed-RL and TinyZero logs quote it), its remote frames after it.
_EXCEPTION = r"^[A-Za-z_][\w.]*(?:\([A-Za-z_][\w.]*\))?(?::|\s*$)"
#: Lines at the batch's end first looked at for its last line that is not indented.
_TAIL_LINES = 64
_CHAINED = r"^(?:During handling of the above exception|The above exception was the direct cause)"
#: Python's report of an exception it could not raise (in a ``__del__``, at interpreter exit): printed and ignored,
#: the traceback after it ends nothing.
_IGNORED = r"^Exception ignored in\b"


class PythonTraceback(AlwaysTried):
    name: ClassVar[str] = "traceback"
    example: ClassVar[str] = "Traceback (most recent call last):"
    meaning: ClassVar[str] = (
        "no step: after a step record, the run failed with the exception line as reason; "
        "tried after every format (also with --log-format)"
    )

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        """The batch's last traceback start if every line after it is indented (its exception line
        may come in the next batch), else None. That start is the last line not indented, so only
        the batch's tail is read, however many lines it holds (an indent-only run is read whole)."""
        line = lines.get_column("line")
        window = _TAIL_LINES
        while True:
            tail = line.tail(window)
            flush = (~tail.str.contains(r"^\s")).arg_true()
            if flush.len() or window >= line.len():
                break
            window *= 4
        if flush.len() == 0:
            return None
        last = line.len() - tail.len() + int(flush[-1])
        if not line.slice(last, 1).str.contains(_START).item():
            return None
        return int(lines.get_column("source_offset")[last])

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        ipython_class = pl.col("line").str.extract(_IPYTHON_START, 1)
        start = pl.col("line").str.contains(_START) | ipython_class.is_not_null()
        line = lines.get_column("line")
        if not (_has_start(line) and lines.select(start.any()).item()):
            return _open_frames(lines, self.name) if context.end is None else empty_parsed(lines)
        blank = pl.col("line").str.strip_chars() == ""
        # the line before a start (blanks aside) that says Python ignored the exception
        said_before = pl.when(~blank).then(pl.col("line")).shift(1).forward_fill().over(TAG)
        frame = (
            lines.with_columns(start=start, indented=pl.col("line").str.contains(r"^\s"))
            .with_columns(
                tb=pl.col("start").cast(pl.Int64).cum_sum().over(TAG),
                ignored=pl.col("start") & said_before.str.contains(_IGNORED).fill_null(False),
            )
            .with_columns(
                ignored=pl.col("ignored").max().over(TAG, "tb"),
                # an IPython traceback's class, for its lines: its frames are not indented, its exception line
                # starts with that class
                ipython=ipython_class.first().over(TAG, "tb"),
            )
            .with_columns(
                brk=~pl.col("start")
                & ~blank
                & pl.when(pl.col("ipython").is_null())
                .then(~pl.col("indented"))
                .otherwise(pl.col("line").str.starts_with(pl.concat_str(pl.col("ipython"), pl.lit(":"))))
            )
            .with_columns(n_brk=pl.col("brk").cast(pl.Int64).cum_sum().over(TAG, "tb"))
        )
        # The next non-blank line of the same task, to see whether a chained traceback follows.
        nxt = pl.col("line").shift(-1).over(TAG)
        nxt2 = pl.col("line").shift(-2).over(TAG)
        following = pl.when(nxt.str.strip_chars() == "").then(nxt2).otherwise(nxt)
        in_tb = pl.col("tb") > 0
        frame = frame.with_columns(
            body=in_tb & (pl.col("n_brk") == 0),
            exc=in_tb & pl.col("brk") & (pl.col("n_brk") == 1) & pl.col("line").str.contains(_EXCEPTION),
            chained=following.str.contains(_CHAINED).fill_null(False),
        )
        events = frame.filter(pl.col("exc") & ~pl.col("chained") & ~pl.col("ignored")).select(
            "source_offset",
            pl.lit("failed").alias("event"),
            _reason(pl.col("line").str.strip_chars()).alias("reason"),
            pl.lit(self.name).alias("format"),
        )
        if context.end is None:
            # The log ends inside a traceback (its exception line cut off, or never written): a failure all the
            # same, the program stopped there.
            # Said on the traceback's last line (a frame: no outcome of its own), not on its first, which may be
            # a progress bar's line with the traceback glued to its end (that line's outcome is its record).
            tails = frame.group_by(TAG).agg(
                pl.col("source_offset").filter(pl.col("start")).last().alias("_start"),
                pl.col("source_offset").last(),
                pl.col("body").last().alias("_open"),
                pl.col("ignored").last().alias("_ignored"),
                pl.col("ipython").last().alias("_class"),
            )
            open_end = tails.filter(
                pl.col("_open").fill_null(False)
                & ~pl.col("_ignored").fill_null(False)
                & pl.col("_start").is_not_null()
                & (pl.col("source_offset") > pl.col("_start"))
            )
            ended = open_end.select(
                "source_offset",
                pl.lit("failed").alias("event"),
                # IPython names the exception on the traceback's first line: that is the cause
                pl.when(pl.col("_class").is_not_null())
                .then(_reason(pl.col("_class")) + pl.lit(CUT_TRACEBACK_ENDING))
                .otherwise(pl.lit(CUT_TRACEBACK_REASON))
                .alias("reason"),
                # a step record after it shows the log went on: then it is dropped (drop_recovered)
                pl.lit(RECOVERABLE_DETAIL).alias("detail"),
                pl.lit(self.name).alias("format"),
            )
            # a task whose frames follow a start line read under another tag (glued to an untagged bar's end)
            started = frame.filter(pl.col("start")).get_column(TAG).fill_null("").unique()
            orphans = lines.filter(~pl.col(TAG).fill_null("").is_in(started.implode()))
            events = pl.concat([events, ended, _open_frames(orphans, self.name).events], how="diagonal_relaxed")
            events = events.sort("source_offset")
        # The exception lines of a chain and the "During handling..." lines between them are
        # part of the traceback too.
        rest = frame.filter(~(pl.col("body") | pl.col("exc") | (in_tb & pl.col("line").str.contains(_CHAINED))))
        return Parsed(
            steps=pl.DataFrame(),
            events=events,
            rejects=pl.DataFrame(),
            rest=rest.select(lines.columns),
        )


def _reason(exception: pl.Expr) -> pl.Expr:
    """The exception line as the cause; a ``KeyboardInterrupt`` said in words (:data:`INTERRUPTED`)."""
    return (
        pl.when(exception.str.contains(r"^KeyboardInterrupt\b"))
        .then(pl.format(f"{INTERRUPTED} ({{}})", exception))
        .otherwise(exception)
    )


#: A traceback's frame line: ``  File "path", line N`` (``, in name`` may follow).
_FRAME = r'^\s+File "[^"]*", line \d+'


def _open_frames(lines: pl.DataFrame, fmt: str) -> Parsed:
    """The log's last lines of a task are a traceback's frames whose start line no format handed on (glued to
    the end of a progress bar's record, ``...264.19s/it][rank1]: Traceback (most recent call last):``) and whose
    exception line is missing: a failure all the same, said on the task's last line (recoverable: a step record
    after it shows the log went on). ``lines`` are the final batch's lines no format read."""
    line = pl.col("line")
    if lines.height == 0 or not lines.get_column("line").str.contains(_FRAME).any():
        return empty_parsed(lines)
    filled = lines.filter(line.str.strip_chars() != "")
    tails = (
        filled.with_columns(_flush=~line.str.contains(r"^\s"), _frame=line.str.contains(_FRAME))
        # the task's trailing run of indented lines: after its last flush line
        .with_columns(_run=pl.col("_flush").cast(pl.Int64).cum_sum().over(TAG))
        .filter(pl.col("_run") == pl.col("_run").max().over(TAG))
        .filter(~pl.col("_flush"))
        .group_by(TAG)
        .agg(pl.col("source_offset").last(), pl.col("_frame").any())
        .filter(pl.col("_frame"))
    )
    if tails.height == 0:
        return empty_parsed(lines)
    events = tails.select(
        "source_offset",
        pl.lit("failed").alias("event"),
        pl.lit(CUT_TRACEBACK_REASON).alias("reason"),
        pl.lit(RECOVERABLE_DETAIL).alias("detail"),
        pl.lit(fmt).alias("format"),
    ).sort("source_offset")
    return Parsed(steps=pl.DataFrame(), events=events, rejects=pl.DataFrame(), rest=lines)


def _has_start(line: pl.Series) -> bool:
    """Whether any of ``line`` may open a traceback (holds :data:`_START_TEXT` or IPython's
    :data:`_IPYTHON_TEXT`)."""
    return bool(line.str.contains(_IPYTHON_TEXT, literal=True).any())
