"""Line prefixes shared by every text format: launcher task tags and glog/absl headers.

Stripped once, before the parser chain, so no parser spells them again:

- launcher tags: ``[1] `` and ``[1,0]<stdout>:`` (mpirun, Horovod: a bare rank is a
  ``worker``), ``[worker-2] ``, ``worker-replica-0: `` (Cloud ML Engine, TFJob), ``0: ``
  (``srun --label``). They become the record's ``role`` and ``task_index`` when the record
  does not name its own task.
- glog/absl headers: ``I0412 08:15:02.339120 139876 basic_session_run_hooks.py:260] ``.
  They give month, day and time (taken as UTC: cloud machines log in UTC) but no year: it
  comes from :attr:`ParseContext.year` (``--year``, else the file's modification year); the
  timestamp is null without it. A year turning over inside one log is not detected.

Many TensorFlow setups print each message twice, once through Python logging
(``INFO:tensorflow:loss = ...``) and once through absl with the header above. Two
neighbouring lines of the same task with the same message, one with a glog header and
one without, are one message: the copy without a timestamp is dropped (counted as skipped).

Cost: one anchored ``contains`` per line when no line has a prefix (plain cloudml logs).
"""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.base import TAG
from tierscope.dataset.schema import ROLES

_ROLE = "|".join(ROLES)
_LAUNCHER = (
    rf"\[(?:(?P<brole>{_ROLE})[-_])?(?:\d+,)?(?P<bidx>\d+)\](?:<std(?:out|err)>:)? ?"
    rf"|(?P<rrole>{_ROLE})-replica-(?P<ridx>\d+): ?"
    r"|(?P<sidx>\d+): "
)
_GLOG = r"(?P<sev>[IWEF])(?P<mo>\d\d)(?P<dd>\d\d) (?P<hms>\d\d:\d\d:\d\d\.\d{6}) +\d+ [^\]\s]+:\d+\] ?"
#: A cheap test for "this line may have a prefix": anchored, so most lines fail on their first byte.
_GATE = rf"^(?:\[(?:(?:{_ROLE})[-_])?[\d,]+\]|(?:{_ROLE})-replica-\d|\d+: |[IWEF]\d{{4}} \d)"
_PREFIX = rf"^(?:{_LAUNCHER})?(?:{_GLOG})?(?P<body>(?s:.*))$"
#: Python logging's ``LEVEL:logger:`` header, ignored when comparing the two copies of a message.
_PY_HEADER = r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.]+:"

#: ``(name, example, meaning)`` of each prefix, for ``tierscope formats``.
PREFIXES: tuple[tuple[str, str, str], ...] = (
    ("launcher", "[worker-2] ", "the record's role and task index, when the record does not name its own"),
    ("replica", "worker-replica-0: ", "the record's role and task index (Cloud ML Engine, TFJob)"),
    ("rank", "[1] ", "task index of a worker (mpirun, Horovod; also [1,0]<stdout>: and srun's '0: ')"),
    (
        "glog",
        "I0412 08:15:02.339120 139876 basic_session_run_hooks.py:260] ",
        "the record's UTC timestamp; the year from --year or the file's modification time",
    ),
)

#: Per-line facts from the prefixes, joined onto records by ``source_offset``.
PREFIX_SCHEMA: dict[str, pl.DataType] = {
    "source_offset": pl.Int64(),
    "role": pl.String(),
    "task_index": pl.Int32(),
    "timestamp": pl.Datetime("us", "UTC"),
}


def split_prefixes(lines: pl.DataFrame, year: int | None) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """``lines`` with prefixes stripped and a :data:`~tierscope.collector.formats.base.TAG` column, and the prefix
    facts.

    Returns ``(lines, facts)``: ``lines`` keeps ``source_offset`` and ``line`` (now the text
    after the prefixes), adds ``tag`` (``"worker/2"`` or null) and lacks the dropped
    duplicate copies; ``facts`` has :data:`PREFIX_SCHEMA` for the lines that had a prefix,
    or is None when none had (then ``lines`` is the input plus a null ``tag``).
    """
    gated = lines.get_column("line").str.contains(_GATE)
    if not gated.any():
        return lines.with_columns(pl.lit(None, dtype=pl.String).alias(TAG)), None
    got = (
        lines.with_columns(gated.alias("_gated"))
        .with_columns(
            pl.when(pl.col("_gated")).then(pl.col("line").str.extract_groups(_PREFIX)).alias("_p"),
        )
        .unnest("_p")
    )
    role = pl.coalesce(
        "brole", "rrole", pl.when(pl.col("bidx").is_not_null() | pl.col("sidx").is_not_null()).then(pl.lit("worker"))
    )
    index = pl.coalesce("bidx", "ridx", "sidx").cast(pl.Int32, strict=False)
    stamp = (
        pl.format(
            "{}-{}-{} {}", pl.lit(year, dtype=pl.Int32), pl.col("mo"), pl.col("dd"), pl.col("hms")
        ).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", time_unit="us", time_zone="UTC", strict=False)
        if year is not None
        else pl.lit(None, dtype=pl.Datetime("us", "UTC"))
    )
    got = got.with_columns(
        role.alias("role"),
        index.alias("task_index"),
        stamp.alias("timestamp"),
        pl.col("sev").is_not_null().alias("_glog"),
        pl.coalesce("body", "line").alias("line"),
    ).with_columns(pl.format("{}/{}", "role", "task_index").alias(TAG))
    if got.get_column("_glog").any():
        got = _drop_plain_copies(got)
    facts = got.filter(pl.col("role").is_not_null() | pl.col("_glog")).select(list(PREFIX_SCHEMA))
    return got.select("source_offset", "line", TAG), facts


def _drop_plain_copies(frame: pl.DataFrame) -> pl.DataFrame:
    """Drop a line without a glog header whose neighbour (same tag) has one and the same message."""
    norm = pl.col("line").str.replace(_PY_HEADER, "")

    def twin(shift: int) -> pl.Expr:
        return (
            (pl.col("_norm") == pl.col("_norm").shift(shift))
            & pl.col(TAG).eq_missing(pl.col(TAG).shift(shift))
            & pl.col("_glog").shift(shift)
        ).fill_null(False)

    return frame.with_columns(norm.alias("_norm")).filter(pl.col("_glog") | ~(twin(1) | twin(-1))).drop("_norm")
