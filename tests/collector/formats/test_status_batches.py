"""A bare ending judged by the newest step record of the batches before it: what that record announced
carries over from one batch of a file to the next."""

from __future__ import annotations

import polars as pl

from tests.support.formats_support import frame
from tierscope.collector.formats import ParseContext, parse_lines

DONE = "[after training is done] datetime: 2024-05-01 10:00:00"
MEGATRON = " iteration {n:8d}/{m:8d} | consumed samples: {n} | elapsed time per iteration (ms): 1250.0 |"


def endings(batches: list[list[str]]) -> list[str]:
    """The ``finished``/``failed`` events of ``batches`` parsed in turn as one file's batches (lines numbered on)."""
    context, first, found = ParseContext(year=2024), 1, []
    for lines in batches:
        got = parse_lines(frame(lines, first), context=context).events
        first += len(lines)
        if got.height:
            found += got.filter(pl.col("event").is_in(["failed", "finished"]))["event"].to_list()
    return found


def test_the_newest_record_of_an_earlier_batch_judges_a_bare_ending() -> None:
    # batch 1 ends at iteration 150 of 2000 (150 < 2000: short); batch 2 says only "training is done"
    assert endings([[MEGATRON.format(n=140, m=2000), MEGATRON.format(n=150, m=2000)], [DONE]]) == []
    # the newest record is the one that counts: 150/2000 then 2000/2000 is the work reached (itself an end, said by
    # batch 1; the bare ending of batch 2 is kept as well)
    assert endings([[MEGATRON.format(n=150, m=2000), MEGATRON.format(n=2000, m=2000)], [DONE]]) == [
        "finished",
        "finished",
    ]
    # and in reverse: 2000/2000 (an earlier run's counter) then 150/2000 is short
    assert endings([[MEGATRON.format(n=2000, m=2000), MEGATRON.format(n=150, m=2000)], [DONE]]) == []
