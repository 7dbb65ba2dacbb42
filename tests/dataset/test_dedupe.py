"""Appends store each record once: within a frame, and against what the dataset holds,
including when only the held rows in the new frame's step range are read back."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tierscope.dataset.store import Dataset


def steps(rows: list[tuple[str, int, float]]) -> pl.DataFrame:
    """Step records of run r1: (role, step, elapsed_s); task 0."""
    return pl.DataFrame(
        {
            "run_id": "r1",
            "role": [r for r, _, _ in rows],
            "task_index": 0,
            "step": [s for _, s, _ in rows],
            "elapsed_s": [e for _, _, e in rows],
            "source": "a.log",
        }
    )


def test_overlapping_batches_store_each_record_once(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    first = ds.append("steps", steps([("master", 100, 1.0), ("master", 200, 2.0), ("master", 300, 3.0)]))
    assert (first.stored, first.duplicates) == (3, 0)
    # step 300 of the master again (a duplicate), step 300 of a worker (new), steps 400 and 500 (new),
    # and step 500 twice in the same frame (one duplicate)
    second = ds.append(
        "steps",
        steps([("master", 300, 3.0), ("worker", 300, 3.1), ("master", 400, 4.0), ("master", 500, 5.0),
               ("master", 500, 5.0)]),
    )  # fmt: skip
    assert (second.stored, second.duplicates) == (3, 2)
    # a batch entirely below what is held: the range read must still find its duplicates
    third = ds.append("steps", steps([("master", 100, 1.0), ("master", 200, 2.0)]))
    assert (third.stored, third.duplicates) == (0, 2)
    held = ds.read("steps").sort("step", "role")
    assert held.select("role", "step").rows() == [("master", 100), ("master", 200), ("master", 300),
                                                  ("worker", 300), ("master", 400), ("master", 500)]  # fmt: skip


def test_rejects_without_line_numbers_are_still_deduplicated(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    rejects = pl.DataFrame(
        {"run_id": "r1", "source": "logs/x", "source_offset": [None, 7], "reason": "bad", "raw": ["a", "b"]},
        schema_overrides={"source_offset": pl.Int64},
    )
    assert ds.append("rejects", rejects).stored == 2
    again = ds.append("rejects", rejects)
    # a null line number cannot bound the read: everything held is compared, both are found
    assert (again.stored, again.duplicates) == (0, 2)


def test_a_batch_beyond_what_this_instance_wrote_reads_nothing_back(tmp_path: Path) -> None:
    ds = Dataset(tmp_path)
    ds.append("steps", steps([("master", 100, 1.0), ("master", 200, 2.0)]))
    opened = ds.scans["steps"]
    # steps 300-400 lie above the only file's 100-200: no held row can be equal, none is read
    beyond = ds.append("steps", steps([("master", 300, 3.0), ("master", 400, 4.0)]))
    assert (beyond.stored, beyond.duplicates, ds.scans["steps"]) == (2, 0, opened)
    # step 200 lies in the first file's range: read back, found
    inside = ds.append("steps", steps([("master", 200, 2.0), ("master", 500, 5.0)]))
    assert (inside.stored, inside.duplicates, ds.scans["steps"]) == (1, 1, opened + 1)


def test_files_another_instance_wrote_are_always_read_back(tmp_path: Path) -> None:
    Dataset(tmp_path).append("steps", steps([("master", 100, 1.0)]))
    # a later collect knows nothing of the held file's range: it reads it, and finds step 100
    later = Dataset(tmp_path)
    again = later.append("steps", steps([("master", 100, 1.0), ("master", 200, 2.0)]))
    assert (again.stored, again.duplicates, later.scans["steps"]) == (1, 1, 1)


def test_rising_steps_skip_the_duplicate_check_only_where_no_two_rows_can_be_equal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed: list[int] = []
    hash_rows = pl.DataFrame.hash_rows

    def counting(self: pl.DataFrame, *args: object, **kwargs: object) -> pl.Series:
        hashed.append(self.height)
        return hash_rows(self, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "hash_rows", counting)
    ds = Dataset(tmp_path)
    # steps rise strictly: no two rows share a key, nothing is hashed
    assert ds.append("steps", steps([("master", 100, 1.0), ("worker", 200, 1.1), ("master", 300, 3.0)])).stored == 3
    assert hashed == []
    # a step repeated (two tasks, or a copy), or a null step: the rows are compared
    got = ds.append("steps", steps([("master", 400, 4.0), ("worker", 400, 4.1), ("master", 400, 4.0)]))
    assert (got.stored, got.duplicates, hashed) == (2, 1, [3])
    nulls = pl.concat([steps([("master", 500, 5.0)]), steps([("master", 500, 5.0)]).with_columns(step=None)])
    assert ds.append("steps", nulls).stored == 2
    assert hashed == [3, 2]
    # falling steps are checked too, and rows held are still found whatever the order
    got = ds.append("steps", steps([("master", 300, 3.0), ("master", 200, 2.0), ("master", 300, 3.0)]))
    assert (got.stored, got.duplicates) == (1, 2)
    assert hashed == [3, 2, 3]


def test_rising_is_strict() -> None:
    from tierscope.dataset.store import _rising

    frame = pl.DataFrame({"step": [1, 2, 2, 3]})
    assert not _rising(frame, "step")
    assert _rising(frame.slice(2), "step")
    assert _rising(frame.head(2), "step")
    assert _rising(frame.head(1), "step") and _rising(frame.clear(), "step")
    assert not _rising(pl.DataFrame({"step": [1, None, 3]}), "step")
    assert not _rising(frame, None)
