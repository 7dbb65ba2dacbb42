"""A file's step-line layout learned from its own repetition: the lines no word of the vocabulary reads.

A training log repeats itself: the same message every N steps, the same words in the same places,
only its numbers changing. Where the families and the grammar (:mod:`~tierscope.collector.formats.grammar`)
left such lines unread (a position or a measure in words the vocabulary lacks), this format learns,
per file, the *template* of the message (after its envelope), its numbers made *slots*, and what each
slot is from how it behaves across the repetitions:

- the *position*: a whole number that only grows (``grows by 10 each line``); where it goes back and
  starts again it counts within its epoch, and its step is the epochs begun x its length + itself (the
  grammar's rule for a batch counter that restarts: its length is the total beside it, ``N/M``'s ``M``,
  else the largest value shown);
- a *measure*: what the vocabulary names on the line (a rate, a step time, examples/s, seconds), else a
  slot that tracks the line clock (the envelope's time, :data:`~tierscope.collector.formats.base.STAMP`):
  its value near Δposition/Δtime is a rate (steps/s), near Δtime/Δposition a time per step (in seconds
  or milliseconds), near Δtime with a stride over one the interval since the previous report, and one
  whose growth is the clock's the seconds since the start; with no clock, a time printed with its unit
  (``1.36s``) that grows with the position is the seconds since the start, and one that does not, on
  lines one step apart, the step's time;
- the *loss*: a number after a word naming it (the grammar's reading).

The template is one whose message repeats at least :data:`MIN_REPEATS` times in the lines the chain left
unread in the file's head (up to :data:`LEARN_LINES`); a line of it with a position and a measure is a
step record; a line that says the same up to the last slot read is one of its lines, whatever follows (an ETA
printed with fewer units). It is learned once per file and kept in the
:class:`~tierscope.collector.formats.base.ParseContext` for every later batch, and saved with the file's position
(:func:`carried_layout`) for a later collect that goes on from there.

Refused, whatever repeats: numbers that do not grow (a config dump), a counter that grows with no measure
(with a line clock alone it is no record: the project's count of records), a dataset listing, a
download's or an extraction's bar in bytes, an evaluation's lines (the grammar's
:data:`~tierscope.collector.formats.vocabulary.NOT_TRAINING` words before the position, as a bar's description, and
its statements of evaluation), a step time from a unit or a word that the lines' clock contradicts (a server's
request milliseconds), a message repeated fewer times than :data:`MIN_REPEATS`. Of two interleaved templates
(training and evaluation), only the training one is read. A line of the template whose slot does not read as a
number (``nan``, a position too large) is a reject with its reason.

Cost: on a file the chain reads, nothing but a look at the lines it left; on a file no format reads, one
pass over the head's lines to learn and one over each batch's unread lines to match (polars
expressions; Python per record only for a counter that restarts each epoch).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import polars as pl

from tierscope.collector.formats.base import STAMP, TAG, ParseContext, Parsed, empty_parsed, numbered, reject_frame
from tierscope.collector.formats.statements import statements, with_statements
from tierscope.collector.formats.templates import NUMBER, SLOT, WHOLE_SLOT, number_starts, numbers, numbers_in, template
from tierscope.collector.formats.templates import value as slot_value
from tierscope.collector.formats.vocabulary import (
    BARE_TIMES,
    METRIC_KEYS,
    NOT_TRAINING,
    PHRASES,
    SCORE_KEYS,
    STEP_WORDS,
    UNITS_PER_SECOND,
    WHOLE_MAX,
    stepless_position,
)

#: The fewest repetitions of a message, in the file's head, for its template to be learned.
MIN_REPEATS = 4
#: The unread lines of a file's head a template is learned from.
LEARN_LINES = 2000
#: How near a slot's value must be to what the clock says (a tenth, as the grammar's bare times).
CLOCK_TOLERANCE = 0.1
#: The fewest clock seconds the template's lines must span for a slot to be compared with the clock
#: (a clock printed to the second is too coarse below that).
MIN_CLOCK_SPAN_S = 5.0
#: Where :class:`~tierscope.collector.formats.base.ParseContext` keeps the file's learned layout.
STATE = "layout"
#: Set by the format chain when a format before the layout read step records from a batch of the file.
OTHERS_READ = "layout-others-read"
#: ... and how many unread lines it has learned from so far.
_SEEN = "layout-seen"

#: A slot of a template (:mod:`~tierscope.collector.formats.templates`: what a slot is, a sign, a clock, thousands).
_MARK = SLOT
#: The version of the template saved with a layout (:meth:`Layout.to_json`): a layout saved with another one's slots
#: is dropped and taught again by the lines (its key and slot numbers may differ from what the lines give now).
TEMPLATE_VERSION = 4
#: A template naming bytes (a download's or an extraction's bar: ``12.5MB/s``, ``1024/4096 bytes``).
_BYTES = r"(?i)\b(?:bytes?|[KMGT]i?B(?:/s)?)\b|#\s*[KMGT]i?B\b"
#: A size in bytes a step line states of the memory it holds, named so by a word before it (``memory: 39.95GiB``,
#: ``max_mem: 1234MB``) or after it (tinygrad's ``1454.57 GB used``, its MLPerf llama3 trainer's step line quoted in
#: tinygrad/tinygrad PR 13803, 2025-12-22): a figure of the step beside its time, not bytes counted by a bar.
_MEMORY_SIZE = (
    r"(?i)\b(?:mem(?:ory)?|vram|max_mem|allocated|reserved)(?:[ _-][a-z]+){0,2}\W{0,3}#\s*[KMGT]i?B\b"
    r"|#\s*[KMGT]i?B\s+(?:used|allocated|reserved|in use|free)\b"
)
#: A template naming a file or a path (a dataset listing): ``img_0001.jpg 3 KB``, ``/data/train/0001``.
_LISTING = r"(?i)\.(?:jpe?g|png|wav|txt|json|csv|tfrecords?|parquet|npy|h5|bin)\b|(?:^|\s)\.{0,2}/[A-Za-z_][\w.-]*/"
#: A word before a slot that makes it a metric, never a measure.
_METRIC_WORD = rf"(?i)(?:{METRIC_KEYS}|{SCORE_KEYS})\W*$"
#: The word before a position that makes it an epoch's, not a step's.
_EPOCH_WORD = r"(?i)\bepoch\W*$"
#: A time printed with its unit after the slot: seconds or milliseconds.
_SECONDS_AFTER = r"^\s*(?:s|sec|secs|seconds)\b"
_MS_AFTER = r"^\s*ms\b"
#: Seconds over a count the next slot states (Caffe's ``36.09s/100``: 100 steps in 36.09 s).
_SECONDS_OVER = r"^\s*s\s*/\s*$"
_ELAPSED_WORD = r"(?i)(?:elapsed|wall|time|uptime)\W*$"
#: A time since the start written with its units, minutes and seconds (the PyTorch seq2seq tutorial's ``timeSince``:
#: ``3m 46s (- 0m 22s) (10000 100%) 4.18``, the time gone, then the time still to go): this slot and the next.
_MINUTES_SECONDS = "#m #s"


@dataclass
class Slot:
    """What one slot of a template is: ``kind`` is ``position``, ``total``, ``per_s``, ``step_s``, ``interval_s``,
    ``elapsed_s`` (seconds; ``scale`` converts a printed millisecond; a clock slot is its seconds), ``minutes_s``
    (minutes, with the seconds of the next slot) or ``column_s`` (seconds, read at a table's ``column``), with ``why``
    in words."""

    index: int
    kind: str
    why: str
    scale: float = 1.0
    #: For ``column_s``: the first character of its column, where every row holds its value (a row may fill more
    #: cells before it: a table's validation columns, blank on most rows).
    column: int | None = None


@dataclass
class Layout:
    """A file's learned step-line template: ``key`` (the message with its slots as ``#``), the slots read,
    and whether the vocabulary's own measures on the line (``named``) time the step."""

    key: str
    repeats: int
    slots: list[Slot]
    named: str | None = None
    #: Carried from batch to batch: per task, (last position, restarts, longest) of a restarting counter.
    laps: dict[str, tuple[int, int, int]] = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        """The template up to its last slot read and the unit after it: a line that says the same up to there is
        one of its lines, whatever it says after (an ETA printed with fewer units, a field added now and then)."""
        if self.named:
            return self.key  # the vocabulary's measure may sit anywhere after the slots read: the whole template
        parts = self.key.split(_MARK)
        last = max(s.index + (1 if s.kind == "minutes_s" else 0) for s in self.slots)
        after = parts[last + 1]
        # the unit or the separator right after the slot, not the next field's words
        unit = after[: len(after) - len(after.lstrip())] + (after.lstrip().split(" ")[0] if after.strip() else "")
        return _MARK.join(parts[: last + 1]) + _MARK + unit

    def to_json(self) -> dict[str, Any]:
        """The layout as JSON values, to be saved with the file's position (:func:`carried_layout`)."""
        return {
            "key": self.key,
            "repeats": self.repeats,
            "slots": [[s.index, s.kind, s.why, s.scale, s.column] for s in self.slots],
            "named": self.named,
            "template": TEMPLATE_VERSION,
            "laps": {tag: list(v) for tag, v in self.laps.items()},
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Layout:
        """The layout :meth:`to_json` saved; raises :class:`KeyError`, :class:`TypeError` or :class:`ValueError` on
        another document."""
        if doc.get("template") != TEMPLATE_VERSION:
            raise ValueError("a layout saved with another template's slots")
        slots = [
            Slot(int(i), str(kind), str(why), float(scale), None if not column or column[0] is None else int(column[0]))
            for i, kind, why, scale, *column in doc["slots"]
        ]
        if not any(s.kind == "position" for s in slots) or any(s.kind not in _KIND_WORDS for s in slots):
            raise ValueError("a learned layout needs a position and known slots")
        laps = {str(tag): (int(v[0]), int(v[1]), int(v[2])) for tag, v in dict(doc.get("laps") or {}).items()}
        named = doc.get("named")
        return cls(str(doc["key"]), int(doc["repeats"]), slots, None if named is None else str(named), laps)

    def slot(self, kind: str) -> Slot | None:
        return next((s for s in self.slots if s.kind == kind), None)

    def describe(self) -> str:
        """The learned reading, in ``formats --try``'s words."""
        said = [f"learned layout '{self.key}' (repeats {self.repeats} times in the file's head)"]
        said += [f"slot {s.index + 1} is {_KIND_WORDS[s.kind]}: {s.why}" for s in self.slots]
        if self.named:
            said.append(f"the measure is the vocabulary's '{self.named}'")
        return "; ".join(said)


_KIND_WORDS = {
    "position": "the position (the global step)",
    "total": "the position's total",
    "epoch": "the epoch",
    "per_s": "a rate (steps/s)",
    "step_s": "a time per step",
    "interval_s": "the seconds since the previous report",
    "elapsed_s": "the seconds since the start",
    "minutes_s": "the seconds since the start (minutes and seconds: this slot and the next)",
    "column_s": "the seconds since the start (a table's column its header names)",
}


def _keyed(lines: pl.DataFrame) -> pl.DataFrame:
    """``lines`` with ``_key`` (the message's template: its numbers as ``#``) and ``_slots`` (its numbers)."""
    return lines.with_columns(_key=template(pl.col("line")), _slots=numbers(pl.col("line")))


#: The groups of the vocabulary's phrases whose words say training: a position, a metric, examples.
_VOCABULARY_GROUPS = ("step", "local_step", "loss", "accuracy", "accuracy_pct", "examples_per_s")


def _phrase_words(groups: frozenset[str]) -> list[str]:
    """The words of the vocabulary's spellings (:data:`PHRASES`) of ``groups``, lower case, units left out."""
    words = {
        w.lower() for key, (group, _) in PHRASES.items() if group in groups for w in re.findall(r"[A-Za-z_]+", key)
    }
    return sorted(w for w in words if len(w) > 1 and w not in UNITS_PER_SECOND)


#: A word of the field's that a training log says (what a step counts, what it measures, what it optimises). A file
#: whose head says none of them (a game's frames, a server's requests, a test runner's tests, a sweep's trials, a
#: heartbeat, CSV rows) is some other loop's, however its numbers behave; a template that says one is preferred.
#: The vocabulary's words for a step (:data:`STEP_WORDS`) and those of its phrases of a position, a metric and
#: examples count, so a word added there counts here; then the words the vocabulary reads no figure after (an
#: epoch's, an optimiser's, reinforcement learning's).
_TRAINING_WORD = (
    rf"(?i)\b(?:{STEP_WORDS}|{'|'.join(_phrase_words(frozenset(_VOCABULARY_GROUPS)))}|"
    r"epochs?|ep|upd|train(?:ing)?|losses|lr|learn(?:ing)?|learning[ _-]?rate|grad(?:ient)?s?|grad_norm|acc|ppl|"
    r"perplexity|kimg|tokens?|samples?|examples?|images?|imgs?|sequences?|rewards?|episodes?|timesteps?|rounds?)\b"
)
#: Words of serving or benchmarking a model, not training it.
_SERVING_WORD = r"(?i)\b(?:latency|latencies|requests?|req/s|qps|rtt)\b"


#: Why a template is no training step's whatever its slots do: the first of these its words (or, for bytes and a
#: listing, its text with the slots) say.
_REFUSALS = (
    ("serving", "it measures serving (latency, requests), not training"),
    ("evaluation", "an evaluation's statement"),
    ("other_work", "it states other work (a checkpoint, a download, a compilation)"),
    ("bytes", "it counts bytes (a download's or an extraction's bar)"),
    ("listing", "it lists files (a dataset listing)"),
)


def _refusals(keys: list[str]) -> list[str | None]:
    """Why each of ``keys`` (templates) is no training step's whatever its slots do, or None: one frame for them
    all (the grammar's statements are built and run once, not once a template)."""
    if not keys:
        return []
    words = pl.col("k").str.replace_all(_MARK, " ", literal=True)
    found = (
        pl.DataFrame({"k": keys}, schema={"k": pl.String})
        .with_columns(_words=words)
        .pipe(with_statements, "_words", "_")
        .select(
            serving=words.str.contains(_SERVING_WORD),
            evaluation="_evaluation",
            other_work="_other_work",
            bytes=pl.col("k").str.replace_all(_MEMORY_SIZE, "").str.contains(_BYTES),
            listing=pl.col("k").str.contains(_LISTING),
        )
    )
    return [next((why for name, why in _REFUSALS if row[name]), None) for row in found.iter_rows(named=True)]


def _around(key: str, index: int) -> tuple[str, str]:
    """The template's text before slot ``index`` (back to the previous slot) and after it (to the next)."""
    parts = key.split(_MARK)
    return parts[index], parts[index + 1]


def _diffs(values: pl.DataFrame, column: str) -> pl.Series:
    """The change of ``column`` from each line to the next of the same task (nulls dropped)."""
    return values.select((pl.col(column) - pl.col(column).shift(1).over("_t")).alias("d")).get_column("d").drop_nulls()


def _positions(frame: pl.DataFrame, key: str, width: int) -> list[tuple[Slot, Slot | None]]:
    """The slots that may be the position, leftmost first (a message names its position before its figures), those
    that only grow before those that restart, each with the constant slot after it where it is an ``N/M`` counter's
    total: a whole number that only grows, or one that grows and restarts now and then (counted within its epoch)."""
    found: list[tuple[bool, int, Slot, Slot | None]] = []
    for i in range(width):
        # a whole number on (nearly) every line: a line printing it otherwise (``-1``, ``nan``) is a reject when read
        whole = frame.get_column(f"_r{i}").str.contains(WHOLE_SLOT).fill_null(False)
        if int(whole.sum()) < MIN_REPEATS or frame.height - int(whole.sum()) > max(1, frame.height // 10):
            continue
        before, after = _around(key, i)
        # a clock or a date inside the message (``14:26:39``) is no counter; an epoch is no step (an epoch-level log
        # is the grammar's)
        if before.strip() == ":" or after.strip() == ":" or pl.select(pl.lit(before).str.contains(_EPOCH_WORD)).item():
            continue
        d = _diffs(frame.filter(whole), f"_v{i}")
        if d.len() < MIN_REPEATS - 1:
            continue
        rising, back, flat = int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum())
        if flat or rising == 0 or (back and (back * 4 > d.len() or rising < 2 * back)):
            continue
        up = d.filter(d > 0)
        stride = float(up.median())  # type: ignore[arg-type]
        steady = (up == up.mode()[0]).sum() * 2 >= up.len()
        how = f"grows by {_num(stride)} each line" if steady else f"only grows (by {_num(stride)} a line, the median)"
        total = None
        if back:
            how += "; starts again each epoch: counted within it (epochs begun x its length + itself)"
            if i + 1 < width and after.strip() in ("/", "of") and frame.get_column(f"_v{i + 1}").n_unique() == 1:
                m = float(frame.get_column(f"_v{i + 1}")[0])
                total = Slot(i + 1, "total", f"stays {_num(m)}: a counter's total")
        found.append((bool(back), i, Slot(i, "position", how), total))
    return [(slot, total) for _, _, slot, total in sorted(found, key=lambda f: (f[0], f[1]))]


def _num(x: float) -> str:
    return f"{x:.4g}"


def _clock_pairs(frame: pl.DataFrame, pos: int, width: int) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """``(lines with their clock seconds _s, consecutive pairs of a task's lines with _dt and _dp)``, or None where
    the lines have no clock, or one too short or too coarse to compare a slot with."""
    if STAMP not in frame.columns or frame.get_column(STAMP).null_count() * 2 > frame.height:
        return None
    t = frame.select(
        "_t",
        (pl.col(STAMP).dt.epoch("us") / 1e6).alias("_s"),
        pl.col(f"_v{pos}").alias("_p"),
        *[pl.col(f"_v{i}") for i in range(width)],
    ).drop_nulls("_s")
    pairs = t.with_columns(
        _dt=pl.col("_s") - pl.col("_s").shift(1).over("_t"),
        _dp=pl.col("_p") - pl.col("_p").shift(1).over("_t"),
    ).filter((pl.col("_dp") > 0) & (pl.col("_dt") >= 0))
    span, advanced = float(pairs.get_column("_dt").sum()), float(pairs.get_column("_dp").sum())
    if pairs.height < MIN_REPEATS - 1 or span < MIN_CLOCK_SPAN_S or advanced <= 0:
        return None
    return t, pairs


#: The widest spread (interquartile range over the median) of a slot read as a measure by the clock: step times of
#: one loop, even with pauses for logging and data, stay well inside it; uniform noise (IQR = median) does not.
SPREAD = 0.5
#: How far a step time the units or words state may be from the clock's (logging, data loading and evaluations
#: between reports take time too) before the clock says it is not the step's: a factor of two.
CLOCK_FACTOR = 2.0


def _against_clock(frame: pl.DataFrame, pos: int, width: int, seconds: pl.Series) -> str | None:
    """Why ``seconds`` (a step's time per line, from a unit or a word) is not the step's time where the lines'
    clock says otherwise (a request's milliseconds in a server's log), or None where it agrees or there is no
    clock to ask."""
    clocked = _clock_pairs(frame, pos, width)
    typical = seconds.drop_nulls().median()
    if clocked is None or typical is None:
        return None
    _, pairs = clocked
    per_step = float(pairs.get_column("_dt").sum()) / float(pairs.get_column("_dp").sum())
    if per_step / CLOCK_FACTOR <= float(typical) <= per_step * CLOCK_FACTOR:  # type: ignore[arg-type]
        return None
    return f"{_num(float(typical))} s a step, but the clock says {_num(per_step)}"  # type: ignore[arg-type]


def _clocked(frame: pl.DataFrame, pos: int, key: str, width: int, used: set[int]) -> list[Slot]:
    """The slots that track the line clock: a rate, a time per step, an interval, the seconds since the start."""
    clocked = _clock_pairs(frame, pos, width)
    if clocked is None:
        return []
    t, pairs = clocked
    span, advanced = float(pairs.get_column("_dt").sum()), float(pairs.get_column("_dp").sum())
    rate, per_step = advanced / span, span / advanced
    gap = float(pairs.get_column("_dt").median())  # type: ignore[arg-type]
    stride = float(pairs.get_column("_dp").median())  # type: ignore[arg-type]
    first, last = t.row(0, named=True), t.row(-1, named=True)
    found: list[Slot] = []
    for i in range(width):
        if i in used:
            continue
        before, _ = _around(key, i)
        if pl.select(pl.lit(before).str.contains(_METRIC_WORD)).item():
            continue
        v = pairs.get_column(f"_v{i}")
        if v.null_count() or (v <= 0).any():
            continue
        typical = float(v.median())  # type: ignore[arg-type]
        # a measure of the same work varies a little line to line; numbers spread over their whole range (an ID,
        # a random draw) can have a median near the clock's by chance
        q1, q3 = v.quantile(0.25), v.quantile(0.75)
        if q1 is None or q3 is None or q3 - q1 > SPREAD * typical:
            continue

        def near(x: float, want: float) -> bool:
            return want > 0 and abs(x - want) <= CLOCK_TOLERANCE * want

        grown = (last[f"_v{i}"] or 0) - (first[f"_v{i}"] or 0)
        if near(typical, rate):
            why = f"tracks the clock: {_num(typical)} vs {_num(rate)} steps/s"
            found.append(Slot(i, "per_s", why))
        elif near(typical, per_step):
            found.append(Slot(i, "step_s", f"tracks the clock: {_num(typical)} vs {_num(per_step)} s a step"))
        elif near(typical / 1000, per_step):
            why = f"tracks the clock: {_num(typical)} vs {_num(per_step * 1000)} ms a step"
            found.append(Slot(i, "step_s", why, scale=1e-3))
        elif stride > 1 and near(typical, gap):
            why = f"tracks the clock: {_num(typical)} vs {_num(gap)} s between reports of {_num(stride)} steps"
            found.append(Slot(i, "interval_s", why))
        elif grown > 0 and near(grown, last["_s"] - first["_s"]) and (v.diff().drop_nulls() >= 0).all():
            why = f"grows with the clock: {_num(grown)} vs {_num(last['_s'] - first['_s'])} s"
            found.append(Slot(i, "elapsed_s", why))
        if found:
            break
    return found


def _unit_times(frame: pl.DataFrame, pos: int, key: str, width: int, used: set[int], stride: float) -> list[Slot]:
    """With no clock: a time printed with its unit that grows with the position (the seconds since the start), or
    one that does not on lines a step apart (the step's time)."""
    for i in range(width):
        if i in used:
            continue
        before, after = _around(key, i)
        if before.strip() in ("h", "m", "min"):
            continue  # the seconds of ``3m 13s`` are no time of their own
        over = pl.select(pl.lit(after).str.contains(_SECONDS_OVER)).item()
        if over and i + 1 < width and frame.get_column(f"_v{i + 1}").n_unique() == 1:
            count = float(frame.get_column(f"_v{i + 1}")[0])
            if count > 0 and count == stride:
                why = f"seconds over the {_num(count)} steps each line advances"
                return [Slot(i, "interval_s", why), Slot(i + 1, "total", "the steps the time covers")]
        ms = bool(pl.select(pl.lit(after).str.contains(_MS_AFTER)).item())
        if not ms and not pl.select(pl.lit(after).str.contains(_SECONDS_AFTER)).item():
            continue
        scale = 1e-3 if ms else 1.0
        d = _diffs(frame, f"_v{i}")
        if d.len() >= MIN_REPEATS - 1 and (d > 0).all():
            return [Slot(i, "elapsed_s", "a time with its unit that grows with the position", scale)]
        if stride == 1:
            return [Slot(i, "step_s", "a time with its unit on lines one step apart", scale)]
    return []


def _message_clock(frame: pl.DataFrame, key: str, width: int, used: set[int]) -> list[Slot]:
    """A clock inside the message (``Elapsed [8:37:01.056768]``: one slot, its seconds) after a word naming the
    time since the start, growing line by line: the seconds since the start."""
    for i in range(width):
        before, _ = _around(key, i)
        if i in used or not frame.get_column(f"_r{i}").str.contains(":", literal=True).all():
            continue
        if not pl.select(pl.lit(before).str.contains(_ELAPSED_WORD)).item():
            continue
        d = _diffs(frame, f"_v{i}")
        if d.len() >= MIN_REPEATS - 1 and (d > 0).all():
            return [
                Slot(
                    i,
                    "elapsed_s",
                    "a clock (hours:minutes:seconds) after a word naming the time since the start, growing",
                )
            ]
    return []


def _minutes_seconds(frame: pl.DataFrame, key: str, pos: int, used: set[int]) -> list[Slot]:
    """A time written as minutes and seconds (:data:`_MINUTES_SECONDS`) that grows wherever the position grows: the
    seconds since the start (a time still to go shrinks, a step's time does not keep growing; both start again
    where the position does)."""
    at = key.find(_MINUTES_SECONDS)
    if at < 0:
        return []
    i = key[:at].count(_MARK)
    if {i, i + 1} & used:
        return []
    grows = (pl.col(f"_v{pos}") - pl.col(f"_v{pos}").shift(1).over("_t")) > 0
    clock = pl.col(f"_v{i}") * 60 + pl.col(f"_v{i + 1}")
    d = frame.select(pl.when(grows).then(clock - clock.shift(1).over("_t")).alias("d")).get_column("d").drop_nulls()
    if d.len() < MIN_REPEATS - 1 or not (d > 0).all():
        return []
    return [Slot(i, "minutes_s", "minutes and seconds that grow line by line: the time since the start")]


#: A table header's name for the seconds since the start (Chainer's PrintReport ``elapsed_time``, a ``time`` column).
_ELAPSED_COLUMN = r"(?i)^(?:elapsed(?:[ _]?time)?|time[ _]?elapsed|wall(?:[ _]?time)?|time)$"


def _header_columns(head: pl.DataFrame, rows: pl.DataFrame) -> dict[int, tuple[str, int]]:
    """For a template whose lines are a table's rows (``rows``, keyed), slot index -> (its column's name in the
    header, the column's first character): the header is the last line before the first row that holds no number
    and names two columns or more (Chainer's ``epoch  main/loss ... elapsed_time``); a slot is under the column whose
    name starts where it does. Empty where there is none."""
    first = rows.sort("source_offset").row(0, named=True)
    before = head.filter(pl.col("source_offset") < first["source_offset"]).sort("source_offset")
    names = before.filter(
        (numbers(pl.col("line")).list.len() == 0) & (pl.col("line").str.count_matches(r"\S+") >= 2)
    ).get_column("line")
    if names.len() == 0:
        return {}
    header = [(m.group(0), m.start()) for m in re.finditer(r"\S+", names[-1])]
    out: dict[int, tuple[str, int]] = {}
    for i, start in enumerate(number_starts(first["line"])):
        # an aligned table: the number starts where its column's name does (a ragged row is no column's)
        under = [h for h in header if abs(h[1] - start) <= 1]
        if under:
            out[i] = under[0]
    return out


def _column_times(frame: pl.DataFrame, columns: dict[int, tuple[str, int]], used: set[int]) -> list[Slot]:
    """A table column its header names a time since the start (:data:`_ELAPSED_COLUMN`), unit-less, that grows row by
    row: the seconds since the start, read in every row at its column."""
    for i, (name, start) in sorted(columns.items()):
        if i in used or not re.match(_ELAPSED_COLUMN, name):
            continue
        d = _diffs(frame, f"_v{i}")
        if d.len() >= MIN_REPEATS - 1 and (d > 0).all():
            return [Slot(i, "column_s", f"the column '{name}', growing row by row: the time since the start", 1, start)]
    return []


def _says_training(head: pl.DataFrame) -> bool:
    """Whether ``head`` (``line``) says training somewhere: a word of :data:`_TRAINING_WORD`, or a step's time or rate
    the vocabulary reads (YOLACT's rows say their figures by letters, ``B: 3.451 | C: 2.964 | ... || timer: 1.364``,
    and time their iterations by the vocabulary's word)."""
    if head.select(pl.col("line").str.contains(_TRAINING_WORD).any()).item():
        return True
    timed = statements(head.get_column("line")).select(pl.coalesce("global_per_s", "per_s").is_not_null().any())
    return bool(timed.item())


def learn(lines: pl.DataFrame) -> Layout | None:
    """The step-line template of ``lines`` (``line``, with :data:`TAG` and :data:`STAMP` where known: the
    messages the chain left unread in a file's head), or None where no repeated message is a training step's."""
    keyed = _keyed(lines.head(LEARN_LINES)).filter(pl.col("_slots").list.len() > 0)
    if keyed.height < MIN_REPEATS:
        return None
    # A template that names what a step counts or measures comes first; one that names nothing of the kind (a table
    # row of numbers under its header, CatBoost's ``learn:``) only in a file whose head says training somewhere.
    named = pl.col("_key").str.replace_all(_MARK, " ", literal=True).str.contains(_TRAINING_WORD)
    counts = (
        keyed.group_by("_key")
        .len()
        .filter(pl.col("len") >= MIN_REPEATS)
        .with_columns(_named=named)
        .sort("_named", "len", "_key", descending=True)
    )
    if not _says_training(lines.head(LEARN_LINES)):
        counts = counts.filter("_named")
    candidates = counts.head(8).rows()
    for (key, repeats, _), refused in zip(candidates, _refusals([c[0] for c in candidates]), strict=True):
        if refused:
            continue
        rows = keyed.filter(pl.col("_key") == key)
        found = _read_template(rows, key, repeats, _header_columns(lines.head(LEARN_LINES), rows))
        if found is not None:
            return found
    return None


def _slot_frame(lines: pl.DataFrame, width: int) -> pl.DataFrame:
    """``lines`` (keyed) with ``_r{i}`` (String) and ``_v{i}`` (Float64) per slot and ``_t`` (the task)."""
    tag = pl.col(TAG).fill_null("") if TAG in lines.columns else pl.lit("")
    raw = [pl.col("_slots").list.get(i, null_on_oob=True).alias(f"_r{i}") for i in range(width)]
    out = lines.with_columns(*raw, _t=tag)
    return out.with_columns(slot_value(pl.col(f"_r{i}")).alias(f"_v{i}") for i in range(width))


def _read_template(
    lines: pl.DataFrame, key: str, repeats: int, columns: dict[int, tuple[str, int]] | None = None
) -> Layout | None:
    """The layout of one template's ``lines`` (keyed): its first position candidate that has a measure, or None;
    ``columns`` names a table's slots (:func:`_header_columns`)."""
    width = key.count(_MARK)
    frame = _slot_frame(lines, width)
    named = _named_measure(lines)
    columns = columns or {}
    for position, total in _positions(frame, key, width):
        # a table's epoch column is no step, as an epoch word before a slot is not (an epoch-level log has no steps/s)
        if re.search(_EPOCH_WORD, columns.get(position.index, ("", 0))[0]):
            continue
        # what the message says before its position describes the work, as a bar's description does: a download's,
        # an evaluation's, ... (a metric named after it, ``test: 0.82``, describes nothing)
        described = key.split(_MARK)[: position.index + 1]
        if pl.select(pl.lit(" ".join(described)).str.contains(NOT_TRAINING)).item():
            continue
        slots = [s for s in (position, total) if s is not None]
        # a time the vocabulary reads as no unit of work's (``1.36s``) is what its behaviour shows: the time since the
        # start where it grows with the position, ...
        if named is not None and named not in BARE_TIMES:
            if _against_clock(frame, position.index, width, _named_seconds(lines)):
                continue
            return Layout(key, repeats, slots, named=named)
        used = {s.index for s in slots}
        d = _diffs(frame, f"_v{position.index}")
        stride = float(d.filter(d > 0).median())  # type: ignore[arg-type]
        measures = (
            _clocked(frame, position.index, key, width, used)
            or _message_clock(frame, key, width, used)
            or _minutes_seconds(frame, key, position.index, used)
            or _unit_times(frame, position.index, key, width, used, stride)
            or _column_times(frame, columns, used)
        )
        if measures and not _against_clock(
            frame, position.index, width, _step_seconds(frame, measures, stride, position.index)
        ):
            return Layout(key, repeats, slots + measures)
        if named is not None and not _against_clock(frame, position.index, width, _named_seconds(lines)):
            return Layout(key, repeats, slots, named=named)  # ... else the vocabulary's reading
    return None


def _named_seconds(lines: pl.DataFrame) -> pl.Series:
    """The step time (seconds) the vocabulary's rate or step time on each of ``lines`` gives (null where none)."""
    s = statements(lines.get_column("line"))
    return s.select((1.0 / pl.coalesce("global_per_s", "per_s")).alias("x")).get_column("x")


#: The kinds of slot that are the seconds since the start.
_SINCE_START = ("elapsed_s", "minutes_s", "column_s")


def _measure(slot: Slot) -> pl.Expr:
    """The value of a measure ``slot`` on each line of a slot frame, in its unit (seconds for a time): minutes and
    seconds summed, a table's column read where its header puts it."""
    if slot.kind == "minutes_s":
        return pl.col(f"_v{slot.index}") * 60 + pl.col(f"_v{slot.index + 1}")
    if slot.kind == "column_s" and slot.column is not None:
        # the row's number that starts at the column (or one space after it)
        cell = pl.col("line").str.slice(slot.column).str.extract(rf"^\s?({NUMBER})(?:\s|$)", 1)
        return slot_value(cell)
    return pl.col(f"_v{slot.index}") * slot.scale


def _step_seconds(frame: pl.DataFrame, measures: list[Slot], stride: float, pos: int) -> pl.Series:
    """The step time (seconds) the slots ``measures`` give on each line: a time per step, the inverse of a rate, an
    interval over the steps a line advances, the growth of the time since the start over the position's (null
    where the measure is the message's own clock: it is its own check)."""
    for m in measures:
        if m.kind in _SINCE_START:
            grown = _measure(m).diff().over("_t") / pl.col(f"_v{pos}").diff().over("_t")
            return frame.select(grown.alias("x")).get_column("x")
        v = pl.col(f"_v{m.index}") * m.scale
        if m.kind == "step_s":
            return frame.select(v.alias("x")).get_column("x")
        if m.kind == "per_s":
            return frame.select((1.0 / v).alias("x")).get_column("x")
        if m.kind == "interval_s":
            return frame.select((v / stride).alias("x")).get_column("x")
    return pl.Series("x", [None] * frame.height, dtype=pl.Float64)


def _named_measure(lines: pl.DataFrame) -> str | None:
    """The vocabulary's measure on most of ``lines``, by its spelling, or None."""
    got = statements(lines.get_column("line")).get_column("measure")
    named = got.drop_nulls()
    if named.len() * 2 <= got.len():
        return None
    return str(named.mode().sort()[0])


class LearnedLayout:
    """The learned layout as a line format: tried last, on the lines no family and no rule of the grammar read."""

    name: ClassVar[str] = "layout"
    example: ClassVar[str] = "[2024-05-01 10:00:10] ep 0 | it 200 | 0.512 | loss 2.31"
    meaning: ClassVar[str] = (
        "a message the file repeats, its numbers read by how they behave: a whole number that only grows is the "
        "global step, one that tracks the line clock a rate or a time per step (synchronous replicas)"
    )

    def sniff(self, lines: pl.Series) -> int:
        return self.sniff_lines(numbered(lines))

    def sniff_lines(self, lines: pl.DataFrame) -> int:
        """How many of ``lines`` (messages with their :data:`TAG` and :data:`STAMP` where known) are records of a
        layout learned from them."""
        steps = self.parse(lines, ParseContext()).steps
        return steps.height if steps.width else 0

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        return None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        if lines.height == 0:
            return empty_parsed(lines)
        layout = context.state.get(STATE)
        if layout is None and (context.steps_seen or context.state.get(OTHERS_READ)):
            # the families or the grammar read this file's steps: its other repeating messages are other loops
            # (a renderer's frames, a probe), never a second series of the same run
            context.state[STATE] = layout = False
        if layout is None:
            counted = lines.filter(context.counts(pl.col("source_offset")))
            layout = learn(counted)
            # learned once, from the unread lines of the file's head: until :data:`LEARN_LINES` of them have taught
            # none, each batch's are tried (a file's first batches may hold its banner and config alone)
            seen = context.state.get(_SEEN, 0) + counted.height
            context.state[_SEEN] = seen
            if layout is not None or seen >= LEARN_LINES:
                context.state[STATE] = layout if layout is not None else False
        if not layout:
            return empty_parsed(lines)
        keyed = _keyed(lines)
        ours = keyed.filter(pl.col("_key").str.starts_with(layout.prefix))
        if ours.height == 0 or _contradicted(ours, layout):
            return empty_parsed(lines)
        return read_lines(ours, lines, layout, context, self.name)


def _contradicted(ours: pl.DataFrame, layout: Layout) -> str | None:
    """Why the lines' clock says the measure of ``ours`` (a batch's lines of ``layout``: later batches, lines appended
    after a collect) is no step's time, as the head's was checked when the layout was learned (another loop printing
    the same words: an inference loop appended to a training log), or None where it agrees or no clock tells."""
    width = layout.key.count(_MARK)
    frame = _slot_frame(ours, width)
    position = layout.slot("position")
    assert position is not None
    if layout.named:
        return _against_clock(frame, position.index, width, _named_seconds(ours))
    d = _diffs(frame, f"_v{position.index}")
    up = d.filter(d > 0)
    stride = float(up.median()) if up.len() else 1.0  # type: ignore[arg-type]
    return _against_clock(frame, position.index, width, _step_seconds(frame, layout.slots, stride, position.index))


def read_lines(ours: pl.DataFrame, lines: pl.DataFrame, layout: Layout, context: ParseContext, fmt: str) -> Parsed:
    """The records (and rejects) of ``ours``, the lines of ``lines`` (keyed) that match ``layout``."""
    width = layout.key.count(_MARK)
    frame = _slot_frame(ours, width).sort("source_offset")
    position = layout.slot("position")
    assert position is not None
    p = position.index
    # a position printed negative, with decimals or as a clock is no step (``-1`` reads as a slot with its sign)
    too_big = (
        ~pl.col(f"_r{p}").str.contains(WHOLE_SLOT).fill_null(False)
        | pl.col(f"_v{p}").is_null()
        | (pl.col(f"_v{p}") > WHOLE_MAX["step"])
    )
    reasons = [
        pl.when(too_big).then(pl.format(f"learned layout: position slot {p + 1} '{{}}' is no whole number", f"_r{p}"))
    ]
    for s in layout.slots:
        if s.kind in ("per_s", "step_s", "interval_s", *_SINCE_START):
            v = _measure(s)
            bad = v.is_null() | v.is_nan() | v.is_infinite() | ((v <= 0) if s.kind in ("per_s", "step_s") else (v < 0))
            reasons.append(
                pl.when(bad).then(
                    pl.format(
                        f"learned layout: {_KIND_WORDS[s.kind]} slot {s.index + 1} '{{}}' is no measure", f"_r{s.index}"
                    )
                )
            )
    frame = frame.with_columns(_why=pl.coalesce(reasons))
    rejects = reject_frame(frame.filter(pl.col("_why").is_not_null()), pl.col("_why"), fmt)
    good = frame.filter(pl.col("_why").is_null()).with_columns(step=pl.col(f"_v{p}").cast(pl.Int64))
    if "starts again" in position.why:
        good = _laps(good, layout, context)
    # the vocabulary's statements as columns _said_*: "step" and the measures are names the good lines hold already
    good = with_statements(good, "line", "_said_")
    s = {name: pl.col(f"_said_{name}") for name in ("loss", "global_per_s", "per_s", "elapsed_s", "interval_s")}
    s["examples_per_s"] = pl.col("_said_examples_per_s")
    cols: dict[str, pl.Expr] = {
        "loss": s["loss"],
        "elapsed_s": pl.lit(None, dtype=pl.Float64),
        "interval_s": pl.lit(None, dtype=pl.Float64),
        "per_s": pl.lit(None, dtype=pl.Float64),
        "examples_per_s": pl.lit(None, dtype=pl.Float64),
    }
    if layout.named:
        per_s = pl.coalesce(s["global_per_s"], s["per_s"])
        cols |= {
            "elapsed_s": s["elapsed_s"],
            "interval_s": s["interval_s"],
            "per_s": per_s,
            "examples_per_s": s["examples_per_s"],
        }
    for slot in layout.slots:
        v = _measure(slot)
        if slot.kind == "per_s":
            cols["per_s"] = v
        elif slot.kind == "step_s":
            cols["per_s"] = 1.0 / v
        elif slot.kind == "interval_s":
            cols["interval_s"] = v
        elif slot.kind in _SINCE_START:
            cols["elapsed_s"] = v
    steps = good.select(
        "source_offset",
        "step",
        cols["loss"].alias("loss"),
        cols["elapsed_s"].alias("elapsed_s"),
        cols["interval_s"].alias("interval_s"),
        cols["per_s"].alias("global_steps_per_s"),
        cols["per_s"].alias("local_steps_per_s"),
        cols["examples_per_s"].alias("examples_per_s"),
        pl.lit(False).alias("rate_derived"),
        pl.lit(fmt).alias("format"),
    ).with_columns(stepless_position())
    # a line of the template that measures nothing (the vocabulary's measure missing on it) is no record: handed on
    measured = pl.any_horizontal(
        pl.col(c).is_not_null() for c in ("elapsed_s", "interval_s", "global_steps_per_s", "examples_per_s")
    )
    steps = steps.filter(measured)
    taken = pl.concat([steps.get_column("source_offset"), rejects.get_column("source_offset")]).implode()
    rest = lines.filter(~pl.col("source_offset").is_in(taken))
    return Parsed(steps=steps, events=pl.DataFrame(), rejects=rejects, rest=rest)


def _laps(good: pl.DataFrame, layout: Layout, context: ParseContext) -> pl.DataFrame:
    """``good`` with a position counted within its epoch made a step of the run: epochs begun x the epoch's length
    (the total slot's, else the largest position shown) + the position; carried per task in ``layout``."""
    position = layout.slot("position")
    total = layout.slot("total")
    assert position is not None
    p = f"_v{position.index}"
    rows = []
    for tag, offset, value, length in good.select(
        "_t",
        "source_offset",
        pl.col(p).cast(pl.Int64),
        (pl.col(f"_v{total.index}").cast(pl.Int64) if total else pl.lit(None, dtype=pl.Int64)).alias("_m"),
    ).iter_rows():
        last, restarts, longest = layout.laps.get(tag, (-1, 0, 0))
        if value < last:
            restarts += 1
        longest = max(longest, value)
        rows.append((offset, restarts * (length or longest) + value))
        if context.end is None or offset < context.end:
            layout.laps[tag] = (value, restarts, longest)
    whole = pl.DataFrame(rows, schema={"source_offset": pl.Int64, "_whole": pl.Int64}, orient="row")
    return good.join(whole, on="source_offset", how="left").with_columns(step=pl.col("_whole")).drop("_whole")


def carried_layout(context: ParseContext) -> dict[str, Any] | None:
    """The layout learned from the lines parsed so far with ``context``, as JSON values to save with the file's
    position (the next collect that goes on from there reads the lines appended with it), or None."""
    layout = context.state.get(STATE)
    return layout.to_json() if layout else None


def resume_layout(context: ParseContext, carried: dict[str, Any] | None) -> None:
    """Start ``context`` from the layout an earlier collect's :func:`carried_layout` saved (a few lines appended
    since repeat the template too seldom to teach it again). A saved layout that does not read is dropped: the
    lines then teach it again."""
    doc = (carried or {}).get(STATE)
    if not isinstance(doc, dict):
        return
    try:
        context.state[STATE] = Layout.from_json(doc)
    except (KeyError, TypeError, ValueError):
        return


def explain(message: str, layout: Layout) -> str:
    """How ``layout`` read ``message`` (one of its lines), in ``formats --try``'s words."""
    raw = numbers_in(message)
    said = []
    for s in layout.slots:
        value = raw[s.index] if s.index < len(raw) else "?"
        said.append(f"slot {s.index + 1} = {value}: {_KIND_WORDS[s.kind]} ({s.why})")
    if layout.named:
        said.append(f"measure: the vocabulary's '{layout.named}'")
    return f"learned layout '{layout.key}' (repeats {layout.repeats} times in the head): " + "; ".join(said)
