"""Formats a user declares in a TOML file: one named regex per format, read like the shipped ones.

No reader knows every log. A user whose log no shipped format reads declares its line in a
file given to ``tierscope collect files --formats my-formats.toml`` (or named by a manifest's
``formats`` key), with the conventions of Fluent Bit's parsers file and Logstash grok: one
regex per format whose *named captures* say what each number is, checked when the file is
loaded::

    [[format]]
    name = "trainer-it"                      # required: shown in counts and rejects
    regex = '^\\[trainer\\] it=(?P<step>\\d+) \\| (?P<sec_per_step>\\S+) s/it \\| loss (?P<loss>\\S+)'
    example = "[trainer] it=120 | 0.25 s/it | loss 1.93"   # optional; must match; `tierscope formats` shows it
    rate = "global"        # sec_per_step / ms_per_step is the job's (global, default) or this task's (local)
    step = "global"        # the step is the global step (default) or this task's local step
    time_format = "%Y-%m-%d %H:%M:%S"   # of the timestamp group (chrono/strftime); default ISO 8601
    time_zone = "UTC"      # of timestamps that carry no offset (default UTC)
    meaning = "..."        # optional: one sentence for `tierscope formats`

Group names come from :data:`GROUPS` (``step``, rates, times, ``loss``, ``accuracy``,
``role``, ``task``, ``timestamp``, ``pid``); unnamed groups are allowed and ignored. The regex is
searched in each line after the envelope/prefix is stripped (anchor it with ``^`` to match
from the start of the message), and where it matches nothing there, in the line as written
(a regex written for the whole line captures the time an envelope holds). It is polars' (Rust
``regex``) syntax: validated with polars itself; Python-only syntax (look-around, backreferences,
atomic groups) is refused with a message that says so.

A :class:`DeclaredFormat` is a :class:`~tierscope.collector.formats.base.LineFormat`: a
matching line is a step record, or a reject with its reason when a captured number is not a
number (``step '12x' is not a whole number >= 0``) or it captured no metric at all.
Declared formats run before the shipped ones (:attr:`ParseContext.formats`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from tierscope.collector.errors import CollectorError
from tierscope.collector.formats.base import (
    WRITTEN,
    ParseContext,
    Parsed,
    empty_parsed,
    fraction,
    reject_frame,
    split_by,
)
from tierscope.collector.formats.vocabulary import (
    ACCURACY_RANGE,
    NOT_WHOLE,
    TIME_GROUPS,
    WHOLE_GROUPS,
    loss_reason,
    not_whole,
    rate_from_time,
    stated_rate,
    value_reason,
)
from tierscope.dataset.schema import ROLES
from tierscope.errors import UsageError

#: Every group name a declared regex may use, with what it holds (its unit).
GROUPS: dict[str, str] = {
    "step": 'the step, a whole number (the global step; the local step with step = "local")',
    "global_steps_per_s": "global steps per second",
    "local_steps_per_s": "this task's steps per second",
    "sec_per_step": 'seconds per step (the job\'s with rate = "global", this task\'s with rate = "local")',
    "ms_per_step": "milliseconds per step (as sec_per_step)",
    "examples_per_s": "examples (images, samples) per second",
    "elapsed_s": "seconds since the task started",
    "loss": "the training loss",
    "accuracy": "the training accuracy",
    "role": "master, chief, worker, ps or evaluator",
    "task": "the task index within its role, a whole number",
    "timestamp": "when the line was written (time_format; default ISO 8601)",
    "pid": "the id of the process that wrote the line, a whole number (a change is a new process)",
}

#: The groups that make a line a step record: a format must capture one of them.
METRIC_GROUPS = (
    "global_steps_per_s",
    "local_steps_per_s",
    "sec_per_step",
    "ms_per_step",
    "examples_per_s",
    "elapsed_s",
    "loss",
    "accuracy",
)

#: Keys of one ``[[format]]`` table.
FORMAT_KEYS = ("name", "regex", "example", "meaning", "rate", "step", "time_format", "time_zone")
MEANINGS = ("global", "local")

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: ISO 8601 with ``T`` or a space, optional fraction, optional ``Z``/offset (tried in turn).
_ISO_ZONED = ("%Y-%m-%dT%H:%M:%S%.f%#z", "%Y-%m-%d %H:%M:%S%.f%#z")
_ISO_NAIVE = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f")
_ZONE_SPECIFIERS = ("%z", "%:z", "%#z", "%Z")
#: The specifiers that give a time's year (chrono's: ``%D``, ``%x`` and ``%c`` hold one, ``%s`` is the instant). A
#: time_format without one reads its times in the collect's year (:func:`parse_time`).
_YEAR_SPECIFIERS = ("%Y", "%y", "%C", "%G", "%g", "%s", "%c", "%D", "%F", "%+", "%x")
#: The specifiers that give a time's day (of its month, year or week, or the whole instant).
_DAY_SPECIFIERS = ("%d", "%e", "%j", "%a", "%A", "%u", "%w", "%s", "%c", "%D", "%F", "%+", "%x")
#: The specifiers of a time of day.
_HOUR_SPECIFIERS = ("%H", "%I", "%k", "%l", "%T", "%R", "%r", "%X")

#: Python ``re`` constructs Rust's ``regex`` (polars) lacks: (pattern, what it is).
_PYTHON_ONLY: tuple[tuple[str, str], ...] = (
    (r"\(\?<?[=!]", "look-ahead/look-behind ((?=...), (?!...), (?<=...), (?<!...))"),
    (r"\\[1-9]|\(\?P=", "a backreference (\\1, (?P=name))"),
    (r"\(\?>", "an atomic group ((?>...))"),
    (r"\(\?#", "a comment group ((?#...))"),
    (r"\(\?\(", "a conditional group ((?(1)...))"),
    (r"\\Z", "\\Z (Rust writes \\z)"),
)


class FormatsFileError(CollectorError, UsageError):
    """A formats file that cannot be read, or a format declared wrongly. One line naming the
    file, the format and the problem; a usage error (exit 2)."""


def to_steps_per_s(value: pl.Expr, unit: str) -> pl.Expr:
    """``value`` (Float64) given in ``unit`` (``sec_per_step``, ``ms_per_step``, or a
    ``*_steps_per_s`` rate) as steps per second, by the vocabulary's conversions (a declared
    format and a shipped one convert by the same code); null where it is no finite rate."""
    if unit in TIME_GROUPS:
        return rate_from_time(value, TIME_GROUPS[unit])
    return stated_rate(value)


@dataclass(frozen=True)
class DeclaredFormat:
    """One ``[[format]]`` of a formats file, checked; a :class:`LineFormat`.

    ``groups``: the regex's named groups (all from :data:`GROUPS`); ``rate``/``step``:
    ``global`` or ``local`` (see the module doc); ``declared_in``: the file.
    """

    name: str
    regex: str
    groups: tuple[str, ...]
    example: str = ""
    meaning: str = ""
    rate: str = "global"
    step: str = "global"
    time_format: str | None = None
    time_zone: str = "UTC"
    declared_in: Path | None = field(default=None, compare=False)

    def sniff(self, lines: pl.Series) -> int:
        return int(lines.str.contains(self.regex).sum())

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        return None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        """Each line the regex matches is a record (columns: ``source_offset``, ``format`` and
        those the groups give: ``step`` or ``local_step``, ``global_steps_per_s``,
        ``local_steps_per_s``, ``examples_per_s`` (all per second), ``elapsed_s`` (seconds),
        ``loss``, ``accuracy``, ``role``, ``task_index``, ``timestamp`` (UTC), ``pid``) or a reject.

        The regex is searched in each message; where it does not match there, in the line as written
        (``context.state[WRITTEN]``), envelope included: a regex written for the file's lines captures the
        time (or the logger's fields) an envelope would otherwise have taken off before it."""
        ours, rest = split_by(lines, pl.col("line").str.contains(self.regex))
        written = context.state.get(WRITTEN)
        if written is not None and rest.height:
            whole = rest.join(
                written.select("source_offset", pl.col("line").alias("_written")), on="source_offset", how="left"
            )
            as_written = (pl.col("_written") != pl.col("line")).fill_null(False) & pl.col("_written").str.contains(
                self.regex
            ).fill_null(False)
            more, rest = split_by(whole, as_written)
            rest = rest.drop("_written")
            if more.height:
                more = more.with_columns(pl.col("_written").alias("line")).drop("_written")
                ours = pl.concat([ours, more.select(ours.columns)]).sort("source_offset")
        if ours.height == 0:
            return empty_parsed(rest)
        raw = pl.col("line").str.extract_groups(self.regex)
        ours = ours.with_columns(
            # An empty capture (an optional part left out) is no value, not a bad one.
            raw.struct.field(g).str.strip_chars().replace("", None).alias(f"_raw_{g}")
            for g in self.groups
        ).with_columns(self._value(g, context.year).alias(f"_v_{g}") for g in self.groups)
        ours = ours.with_columns(self._reason(context.year).alias("_reason"))
        bad = ours.filter(pl.col("_reason").is_not_null())
        good = ours.filter(pl.col("_reason").is_null())
        steps = good.select("source_offset", *self._columns(), pl.lit(self.name).alias("format"))
        return Parsed(
            steps=steps, events=pl.DataFrame(), rejects=reject_frame(bad, pl.col("_reason"), self.name), rest=rest
        )

    def _value(self, group: str, year: int | None) -> pl.Expr:
        """The typed value of ``group``'s capture (null where it is missing or does not cast)."""
        text = pl.col(f"_raw_{group}")
        if group in WHOLE_GROUPS:
            return text.cast(WHOLE_GROUPS[group], strict=False)
        if group == "role":
            return text.str.to_lowercase()
        if group == "timestamp":
            return parse_time(text, self.time_format, self.time_zone, year)
        if group == "accuracy":
            return fraction(text)
        return text.cast(pl.Float64, strict=False)

    def _reason(self, year: int | None) -> pl.Expr:
        """Why a matching line is a reject (its first bad capture), null for a good record."""
        reason = pl.when(pl.lit(False)).then(pl.lit(None, dtype=pl.String))
        for g in self.groups:
            raw, value = pl.col(f"_raw_{g}"), pl.col(f"_v_{g}")
            present = raw.is_not_null()
            if g in WHOLE_GROUPS:
                bad, what = not_whole(raw, WHOLE_GROUPS[g]), NOT_WHOLE
            elif g == "role":
                bad, what = ~value.is_in(list(ROLES)), f"is not one of {', '.join(ROLES)}"
            elif g == "timestamp":
                # a time without its year where the collect knows none (no file date) is no time, not a bad one
                dated = year is not None or self.time_format is None or has_year(self.time_format)
                bad, what = value.is_null() & dated, f"does not match time_format {self.time_format or 'ISO 8601'!r}"
            elif g in ("loss", "accuracy"):
                if g == "loss":
                    reason = reason.when(present & value.is_infinite()).then(loss_reason(raw))
                bad, what = value.is_null(), "is not a number"
            elif g in ("sec_per_step", "ms_per_step"):
                bad, what = value.is_null() | ~value.is_finite() | (value <= 0), "is not a finite number > 0"
            else:
                bad, what = value.is_null() | ~value.is_finite() | (value < 0), "is not a finite number >= 0"
            reason = reason.when(present & bad.fill_null(True)).then(pl.format(f"{g} '{{}}' {what}", raw))
            if g in ACCURACY_RANGE and (out_of_range := value_reason(g, raw)) is not None:
                # a number, but no accuracy (150, NaN): the shipped formats' reject; a percentage (93.4%) is
                # checked as the fraction it is stored as (0.934)
                pct = raw.str.ends_with("%")
                low, high = ACCURACY_RANGE[g]
                outside = pl.format(f"{g} '{{}}' is not a percentage between {low * 100:g} and {high * 100:g}", raw)
                wrong = present & ~(value.is_not_nan() & value.is_between(low, high)).fill_null(False)
                reason = reason.when(pct & wrong).then(outside)
                reason = reason.when(~pct & out_of_range.is_not_null()).then(out_of_range)
            if g in ("sec_per_step", "ms_per_step"):
                # 1e-320 s is finite and > 0, but its rate overflows: no figure to store.
                overflow = present & to_steps_per_s(value, g).is_null()
                reason = reason.when(overflow).then(pl.format(f"{g} '{{}}' gives no finite steps/s", raw))
        metrics = [pl.col(f"_raw_{g}").is_not_null() for g in self.groups if g in METRIC_GROUPS]
        no_metric = ~pl.any_horizontal(metrics) if metrics else pl.lit(True)
        return reason.when(no_metric).then(pl.lit(f"matches format {self.name!r} but captured no metric"))

    def _columns(self) -> list[pl.Expr]:
        """The record's columns from the typed captures, rates converted to steps per second."""
        have = set(self.groups)
        cols: list[pl.Expr] = []
        if "step" in have:
            cols.append(pl.col("_v_step").alias("step" if self.step == "global" else "local_step"))
        for kind in MEANINGS:
            # A rate the line states outright wins over one converted from a time per step.
            parts = (
                [to_steps_per_s(pl.col(f"_v_{kind}_steps_per_s"), "steps_per_s")]
                if f"{kind}_steps_per_s" in have
                else []
            )
            if self.rate == kind:
                parts += [to_steps_per_s(pl.col(f"_v_{u}"), u) for u in ("sec_per_step", "ms_per_step") if u in have]
            if parts:
                cols.append(pl.coalesce(parts).alias(f"{kind}_steps_per_s"))
        for group, column in (
            ("examples_per_s", "examples_per_s"),
            ("elapsed_s", "elapsed_s"),
            ("loss", "loss"),
            ("accuracy", "accuracy"),
            ("role", "role"),
            ("task", "task_index"),
            ("timestamp", "timestamp"),
            ("pid", "pid"),
        ):
            if group in have:
                cols.append(pl.col(f"_v_{group}").alias(column))
        return cols


@dataclass(frozen=True)
class DeclaredTags:
    """The ``[tensorboard.tags]`` table of a formats file: event-file tags -> step-record fields
    (:data:`~tierscope.collector.sources.tfevents.TAG_FIELDS`), read on top of the shipped tags::

        [tensorboard.tags]
        "perf/global_steps_per_sec" = "global_steps_per_s"
        "train/total_loss" = "loss"

    It rides with the declared formats (``tierscope formats`` lists it) and reads no text line.
    """

    name: str
    tags: tuple[tuple[str, str], ...]
    declared_in: Path | None = field(default=None, compare=False)

    @property
    def example(self) -> str:
        return ", ".join(f"{tag!r} -> {column}" for tag, column in self.tags[:3])

    @property
    def meaning(self) -> str:
        return "TensorBoard event-file tags declared as step-record fields"

    def sniff(self, lines: pl.Series) -> int:
        return 0

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        return None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        return empty_parsed(lines)


def _declared_tags(table: Any, path: Path) -> DeclaredTags:
    """The ``[tensorboard]`` table of the formats file at ``path``; raises :class:`FormatsFileError`."""
    from tierscope.collector.sources.tfevents import TAG_FIELDS

    where = f"formats file {path}, [tensorboard]"
    if not isinstance(table, dict) or set(table) != {"tags"} or not isinstance(table["tags"], dict):
        raise FormatsFileError(f'{where}: write the tags as a [tensorboard.tags] table of "tag" = "field"')
    tags = table["tags"]
    for tag, column in tags.items():
        if column not in TAG_FIELDS:
            raise FormatsFileError(f"{where}: tag {tag!r} -> {column!r}: a field is one of {', '.join(TAG_FIELDS)}")
    if not tags:
        raise FormatsFileError(f"{where}: [tensorboard.tags] declares no tag")
    return DeclaredTags(f"tensorboard-tags.{path.stem}", tuple(tags.items()), path)


def has_year(time_format: str) -> bool:
    """Whether ``time_format`` reads a time's year (or its whole instant, ``%s``)."""
    return any(s in time_format for s in _YEAR_SPECIFIERS)


def parse_time(text: pl.Expr, time_format: str | None, time_zone: str, year: int | None = None) -> pl.Expr:
    """``text`` (String) as a UTC ``Datetime("us", "UTC")``: with ``time_format`` (chrono
    specifiers), else ISO 8601; a time without an offset is in ``time_zone``. A ``time_format``
    without a year (:func:`has_year`: syslog's ``%b %d %H:%M:%S``) reads its times in ``year`` (the
    collect's, as glog's headers are; null without one). Null where it does not parse."""
    if time_format is not None and not has_year(time_format):
        if year is None:
            return pl.lit(None, dtype=pl.Datetime("us", "UTC"))
        text = pl.concat_str(pl.lit(f"{year:04d} "), text)
        time_format = f"%Y {time_format}"

    def naive(fmt: str) -> pl.Expr:
        got = text.str.to_datetime(fmt, time_unit="us", strict=False)
        return got.dt.replace_time_zone(time_zone, non_existent="null").dt.convert_time_zone("UTC")

    def zoned(fmt: str) -> pl.Expr:
        return text.str.to_datetime(fmt, time_unit="us", time_zone="UTC", strict=False)

    if time_format is None:
        return pl.coalesce([*(zoned(f) for f in _ISO_ZONED), *(naive(f) for f in _ISO_NAIVE)])
    return zoned(time_format) if _has_zone(time_format) else naive(time_format)


def _has_zone(time_format: str) -> bool:
    return any(s in time_format for s in _ZONE_SPECIFIERS)


def shipped_names() -> set[str]:
    """The names of the shipped formats (line formats, always-tried ones, file formats)."""
    # Imported here: the formats package and the sources import this package's modules.
    from tierscope.collector.formats import ALWAYS, FORMATS
    from tierscope.collector.formats.console_csv import CONSOLE_CSV
    from tierscope.collector.sources.logentries import EXPORT_FORMAT
    from tierscope.collector.sources.tfevents import TFEVENTS

    return {*FORMATS, *(f.name for f in ALWAYS), CONSOLE_CSV, EXPORT_FORMAT, TFEVENTS}


def load_formats(path: Path) -> tuple[DeclaredFormat | DeclaredTags, ...]:
    """The formats declared in the TOML file at ``path``, each checked, and its event-file tags
    (:class:`DeclaredTags`, last) if it has a ``[tensorboard.tags]`` table.

    Raises :class:`FormatsFileError` (one line: the file, the format, the problem) for an
    unreadable or non-TOML file, an unknown key, a missing or duplicate name, a name of a
    shipped format, a regex polars rejects (or in Python-only syntax), an unknown group, no
    metric group, a regex matching an empty line, an example it does not match, a bad
    ``rate``/``step``/``time_format``/``time_zone``.
    """
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FormatsFileError(f"cannot read formats file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise FormatsFileError(f"formats file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise FormatsFileError(f"formats file {path} is not valid TOML: {exc}") from None
    extra = sorted(set(doc) - {"format", "tensorboard"})
    if extra:
        raise FormatsFileError(f"formats file {path}: unknown keys {extra}; declare each format as a [[format]] table")
    declared: list[DeclaredFormat | DeclaredTags] = []
    if "tensorboard" in doc:
        declared.append(_declared_tags(doc["tensorboard"], path))
    tables = doc.get("format", [])
    if not isinstance(tables, list) or not (tables or declared):
        raise FormatsFileError(f"formats file {path} declares no format; write one [[format]] table per format")
    shipped = shipped_names()
    formats: list[DeclaredFormat] = []
    for n, table in enumerate(tables, start=1):
        fmt = _checked(table, f"formats file {path}, format #{n}", path, shipped)
        if any(f.name == fmt.name for f in formats):
            raise FormatsFileError(
                f"formats file {path}: format {fmt.name!r} is declared twice; give each its own name"
            )
        formats.append(fmt)
    return (*formats, *declared)


def load_format_files(paths: Iterable[Path]) -> tuple[DeclaredFormat | DeclaredTags, ...]:
    """The formats of every file in ``paths`` (a file named twice is read once). Raises
    :class:`FormatsFileError` as :func:`load_formats`, and for a name declared in two files."""
    return merge_formats(*(load_formats(p) for p in dict.fromkeys(p.resolve() for p in paths)))


def merge_formats(
    *groups: Sequence[DeclaredFormat | DeclaredTags],
) -> tuple[DeclaredFormat | DeclaredTags, ...]:
    """The formats of ``groups`` in order, each once. Raises :class:`FormatsFileError` for two
    different formats of one name."""
    merged: dict[str, DeclaredFormat | DeclaredTags] = {}
    for fmt in (f for g in groups for f in g):
        known = merged.get(fmt.name)
        if known is not None and known != fmt:
            raise FormatsFileError(
                f"format {fmt.name!r} is declared in {known.declared_in} and again, differently, in {fmt.declared_in}"
            )
        merged.setdefault(fmt.name, fmt)
    return tuple(merged.values())


def _checked(table: Any, where: str, path: Path, shipped: set[str]) -> DeclaredFormat:
    """One ``[[format]]`` table as a :class:`DeclaredFormat`; raises :class:`FormatsFileError`."""
    if not isinstance(table, dict):
        raise FormatsFileError(f"{where}: not a table; write each format as a [[format]] table")
    name = table.get("name")
    if not isinstance(name, str) or not name:
        raise FormatsFileError(f"{where}: missing 'name' (a string such as \"my-trainer\")")
    where = f"formats file {path}, format {name!r}"
    if not _NAME.fullmatch(name):
        raise FormatsFileError(f"{where}: the name may hold only letters, digits, '_', '.' and '-'")
    if name in shipped:
        raise FormatsFileError(f"{where}: {name!r} is the name of a shipped format (`tierscope formats`); rename it")
    unknown = sorted(set(table) - set(FORMAT_KEYS))
    if unknown:
        raise FormatsFileError(f"{where}: unknown keys {unknown}; a format takes {', '.join(FORMAT_KEYS)}")
    for key in FORMAT_KEYS:
        if key in table and not isinstance(table[key], str):
            raise FormatsFileError(f"{where}: '{key}' is {table[key]!r}, not a string")
    regex = table.get("regex")
    if not regex:
        raise FormatsFileError(f"{where}: missing 'regex' (with named groups such as (?P<step>\\d+))")
    groups = _groups(regex, where)
    for key in ("rate", "step"):
        if table.get(key, "global") not in MEANINGS:
            raise FormatsFileError(f'{where}: \'{key}\' is {table[key]!r}; use "global" or "local"')
    time_format, time_zone = table.get("time_format"), table.get("time_zone", "UTC")
    _check_time(time_format, time_zone, where)
    fmt = DeclaredFormat(
        name=name,
        regex=regex,
        groups=groups,
        example=table.get("example", ""),
        meaning=table.get("meaning") or _default_meaning(groups, table.get("rate", "global")),
        rate=table.get("rate", "global"),
        step=table.get("step", "global"),
        time_format=time_format,
        time_zone=time_zone,
        declared_in=path,
    )
    if fmt.example and not fmt.sniff(pl.Series([fmt.example], dtype=pl.String)):
        raise FormatsFileError(f"{where}: the regex does not match its own example {fmt.example!r}")
    return fmt


def _groups(regex: str, where: str) -> tuple[str, ...]:
    """The named groups of ``regex`` checked against :data:`GROUPS`; raises :class:`FormatsFileError`."""
    probe = pl.Series([""], dtype=pl.String)
    try:
        names = probe.str.extract_groups(regex).struct.fields
    except pl.exceptions.PolarsError as exc:
        for pattern, what in _PYTHON_ONLY:
            if re.search(pattern, regex):
                raise FormatsFileError(
                    f"{where}: the regex uses {what}, Python-only syntax; polars reads Rust regex "
                    "(https://docs.rs/regex/latest/regex/#syntax), which has none: rewrite it without"
                ) from None
        raise FormatsFileError(f"{where}: the regex is not valid: {_regex_problem(str(exc))}") from None
    # Unnamed groups appear under their number; they are allowed and ignored.
    named = tuple(n for n in names if not n.isdigit())
    unknown = [n for n in named if n not in GROUPS]
    if unknown:
        raise FormatsFileError(f"{where}: unknown group names {unknown}; a group is one of {', '.join(GROUPS)}")
    if not any(n in METRIC_GROUPS for n in named):
        raise FormatsFileError(
            f"{where}: the regex captures no metric; name at least one group {', '.join(METRIC_GROUPS)}"
        )
    if probe.str.contains(regex).any():
        raise FormatsFileError(
            f"{where}: the regex matches an empty line, so it would take every line; make it stricter"
        )
    return named


def _regex_problem(message: str) -> str:
    """The ``error: ...`` line of polars' (Rust regex's) multi-line parse error, else its first line."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return next(
        (line.removeprefix("error: ") for line in lines if line.startswith("error:")), lines[0] if lines else message
    )


def _check_time(time_format: str | None, time_zone: str, where: str) -> None:
    """Raise :class:`FormatsFileError` for a ``time_zone`` polars does not know or a
    ``time_format`` that cannot read back a time it wrote."""
    try:
        pl.Series([datetime(2001, 2, 3)]).dt.replace_time_zone(time_zone)
    except pl.exceptions.PolarsError:
        raise FormatsFileError(
            f'{where}: time_zone {time_zone!r} is not a time zone; use e.g. "UTC" or "Europe/Paris"'
        ) from None
    if time_format is None:
        return
    if any(s in time_format for s in _HOUR_SPECIFIERS) and not any(s in time_format for s in _DAY_SPECIFIERS):
        raise FormatsFileError(
            f"{where}: time_format {time_format!r} reads no date, and a time of day alone cannot order a run's "
            "steps across midnight; capture the date too, or leave the timestamp group out"
        )
    when = pl.Series([datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)])
    try:
        written = when.dt.strftime(time_format)
        back = parse_time(pl.col("t"), time_format, "UTC", when.dt.year().item())
        ok = pl.DataFrame({"t": written}).select(back.is_not_null()).item()
    except pl.exceptions.PolarsError:
        ok = False
    if not ok:
        raise FormatsFileError(
            f"{where}: time_format {time_format!r} does not read times; "
            'use strftime specifiers like "%Y-%m-%d %H:%M:%S"'
        )


def _default_meaning(groups: tuple[str, ...], rate: str) -> str:
    timed = [g for g in groups if g in ("sec_per_step", "ms_per_step")]
    return "declared: " + ", ".join(f"{g} ({rate})" if g in timed else g for g in groups)


__all__ = [
    "GROUPS",
    "METRIC_GROUPS",
    "DeclaredFormat",
    "DeclaredTags",
    "FormatsFileError",
    "load_format_files",
    "load_formats",
    "merge_formats",
    "parse_time",
    "to_steps_per_s",
]
