"""The cloudml-samples `Train [...]` line family, its variants and its broken lines."""

from __future__ import annotations

import math

import polars as pl
import pytest

from tierscope.collector.formats import parse_lines


def lines(*texts: str) -> pl.DataFrame:
    return pl.DataFrame({"source_offset": list(range(1, len(texts) + 1)), "line": list(texts)},
                        schema={"source_offset": pl.Int64, "line": pl.String})  # fmt: skip


VARIANTS = [
    # the 2016 experiment's own, with the Python logging prefix
    "INFO:root:Train [master/0], step 100:loss:2.346, accuracy:0.133 (6.247 sec) 16.009 global_steps/s, "
    "16.009 local_steps/s",
    # the original sample's: spaces after the colons, "global steps/s"
    "Train [worker/3], step 200: loss: 2.319, accuracy: 0.290 (3.093 sec) 64.662 global steps/s, 3.556 local steps/s",
    # the later sample's: no loss or accuracy
    "Train [master/0], step 118 (4.041 sec) 29.6 global steps/s, 29.6 local steps/s",
]


def test_all_three_variants_parse_to_the_same_fields() -> None:
    got = parse_lines(lines(*VARIANTS))
    assert got.rejects.height == 0 and got.skipped == 0
    rows = got.steps.sort("source_offset").to_dicts()
    assert [(r["role"], r["task_index"], r["step"]) for r in rows] == [("master", 0, 100), ("worker", 3, 200),
                                                                        ("master", 0, 118)]  # fmt: skip
    assert rows[0]["loss"] == 2.346 and rows[0]["accuracy"] == 0.133
    assert rows[1]["loss"] == 2.319 and rows[1]["accuracy"] == 0.290
    assert rows[2]["loss"] is None and rows[2]["accuracy"] is None
    assert [r["elapsed_s"] for r in rows] == [6.247, 3.093, 4.041]
    assert [r["global_steps_per_s"] for r in rows] == [16.009, 64.662, 29.6]
    assert [r["local_steps_per_s"] for r in rows] == [16.009, 3.556, 29.6]
    assert {r["format"] for r in rows} == {"cloudml"}


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Train [master/0], step 100:loss:2.346, accuracy:0.133 (6.24", "not a complete"),
        ("Train [master/0], step -5:loss:2.346, accuracy:0.133 (6.247 sec) 16.0 global_steps/s, 16.0 local_steps/s",
         "global step -5 is negative"),
        ("Train [master/0], step 100:loss:2.346, accuracy:0.133 (6.247 sec) nan global_steps/s, 16.0 local_steps/s",
         "global_steps/s 'nan'"),
        ("Train [master/0], step 1e2:loss:2.3, accuracy:0.1 (6.247 sec) 16.0 global_steps/s, 16.0 local_steps/s",
         "global step '1e2' is not a whole number"),
        ("Train [master/0], step 100:loss:2.3, accuracy:1.7 (6.247 sec) 16.0 global_steps/s, 16.0 local_steps/s",
         "accuracy '1.7'"),
        ("Train [janitor/0], step 100:loss:2.3, accuracy:0.1 (6.247 sec) 16.0 global_steps/s, 16.0 local_steps/s",
         "unknown role 'janitor'"),
        ("Train [worker/x], step 100 (1.0 sec) 16.0 global_steps/s, 16.0 local_steps/s", "task index 'x'"),
        ("Train [master/0], step 100 (-1.0 sec) 16.0 global_steps/s, 16.0 local_steps/s", "elapsed seconds '-1.0'"),
        ("Train [master/0], step 100 (1.0 sec) 16.0 global_steps/s, inf local_steps/s", "local_steps/s 'inf'"),
    ],
)  # fmt: skip
def test_broken_lines_are_rejects_with_a_reason(line: str, reason: str) -> None:
    got = parse_lines(lines("garbage that is no record", line))
    assert got.steps.height == 0
    assert got.rejects.height == 1
    reject = got.rejects.row(0, named=True)
    assert reject["source_offset"] == 2  # the line number, not the position among rejects
    assert reason in reject["reason"]
    assert reject["raw"] == line
    assert got.skipped == 1  # the garbage line carries no metric: skipped, not rejected


def test_gcloud_crash_is_a_failed_event_not_a_reject() -> None:
    got = parse_lines(lines("ERROR: gcloud crashed (BadStatusCodeError):"))
    assert got.rejects.height == 0 and got.steps.height == 0
    assert got.events.select("event", "reason").to_dicts() == [
        {"event": "failed", "reason": "gcloud crashed (BadStatusCodeError)"}
    ]


def test_nan_loss_is_kept_it_is_what_divergence_looks_like() -> None:
    got = parse_lines(lines("Train [master/0], step 100:loss:nan, accuracy:0.1 (6.2 sec) 16.0 global_steps/s, "
                            "16.0 local_steps/s"))  # fmt: skip
    assert got.rejects.height == 0
    assert math.isnan(got.steps["loss"][0])
