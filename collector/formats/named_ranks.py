"""Ranks a message names in its own words: several processes printing into one file, each saying who it is.

Where every process of a job prints its step lines into one stream with no launcher tag, a program
often says its rank or device itself, inside the message: torch_xla's test utilities (``| Training
Device=xla:0/2 Epoch=1 Step=0 Loss=2.30627 Rate=2269.54 ...``, eight devices each reporting every
step), VISSL's ``Rank: 0; [ep: 0] iter: 57; ...``, hand-written loops' ``rank=3 step=100 ...``. Read as
one task, the devices' reports of one step are one record (the rest taken for its copies) and
their clocks are mixed in one stream.

A *named rank* is a key that names the reporting process (:data:`RANK_KEY`: ``rank``, ``local_rank``,
``global_rank``, ``device``, ``gpu``, ``worker``, ``replica``) with ``:``, ``=`` or a space and its
index: a bare number (``Rank: 0``, ``rank 3/8``: the rank before the world size) or a device
(``xla:0/2``: torch_xla's device and, after the slash, its ordinal, the process's place in the job,
0-7 for eight processes; ``cuda:1``). A device's ordinal, else its index, is the task index.

Rule, learnt once per file from its first lines that may state a measure
(:data:`~tierscope.collector.formats.vocabulary.MEASURE_GATE`): the file's reports name ranks when they
name at least two different ones. A file whose reports all name one rank (rank 0 printing alone,
as VISSL does by default) is one task, read as written. Only lines that may state a measure are
labelled: a header listing the machine's GPUs (``GPU 0: Tesla V100``) names no reporting process.
A launcher's tag, where a line has one, stays the line's task.

Near-misses (no named rank): ``world_size: 8``, ``num_gpus: 8``, ``Device: cuda`` (no index),
``ranks: 8``.
"""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.base import TAG
from tierscope.collector.formats.ranks import RANK_ROLE
from tierscope.collector.formats.vocabulary import MEASURE_GATE

#: The key of a process's rank or device: a word of its own (``world_size``, ``num_gpus`` and ``ranks`` are no rank),
#: then its index: a device (type, index and torch_xla's ordinal after a slash: group ``ord``, else ``idx``) or a
#: bare number (group ``n``; a ``/world`` after it is the job's size).
RANK_KEY = (
    r"(?:^|[^\w.])(?i:(?:local_|global_)?rank|device|gpu|worker|replica)(?:\s*[=:]\s*|\s+)"
    r"(?:[A-Za-z]+:(?P<idx>\d+)(?:/(?P<ord>\d+))?|(?P<n>\d+)(?:\s*/\s*\d+)?)(?:[\s;,|)\]]|$)"
)
#: The lines of a file's first batch the rule is learnt from.
HEAD_LINES = 2000
_STATE = "named-ranks"


def _named(body: pl.DataFrame) -> pl.DataFrame:
    """``source_offset`` and ``_rank`` (Int32) of the lines of ``body`` that may state a measure and name a rank."""
    line = pl.col("line")
    got = line.str.extract_groups(RANK_KEY)
    return (
        body.filter(line.str.contains(MEASURE_GATE) & line.str.contains(RANK_KEY))
        .select("source_offset", got.alias("_g"))
        .unnest("_g")
        .select(
            "source_offset",
            pl.coalesce("ord", "idx", "n").cast(pl.Int32, strict=False).alias("_rank"),
        )
        .drop_nulls("_rank")
    )


def named_ranks(body: pl.DataFrame, state: dict[str, object]) -> pl.DataFrame | None:
    """``source_offset``, ``role``, ``task_index`` and ``tag`` of the lines of ``body`` (a batch's messages after
    their envelopes, with :data:`TAG`) that name their rank, in a file whose reports name several; None otherwise.
    ``state`` keeps what the file's first batch decided (pass the same dict for every batch of a file)."""
    if _STATE not in state:
        head = _named(body.head(HEAD_LINES))
        state[_STATE] = head.get_column("_rank").n_unique() >= 2
    if not state[_STATE] or body.height == 0:
        return None
    found = _named(body.filter(pl.col(TAG).is_null()) if TAG in body.columns else body)
    if found.height == 0:
        return None
    return found.select(
        "source_offset",
        pl.lit(RANK_ROLE).alias("role"),
        pl.col("_rank").alias("task_index"),
        pl.concat_str(pl.lit(f"{RANK_ROLE}/"), pl.col("_rank").cast(pl.String)).alias(TAG),
    )
