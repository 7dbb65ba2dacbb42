"""A small append collected without polars (:func:`tierscope.collector.small_collect.collect_small_append`)
leaves the dataset the full collect (:func:`tierscope.collector.collect.collect_runs`) leaves: the same rows in
every table, the same data file bytes, the same position and notes, the same counts; and declines what it
cannot do, writing nothing."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchmarks.generate import write_cloudml_log
from tierscope.collector.collect import collect_runs
from tierscope.collector.positions import OffsetStore
from tierscope.collector.runs import runs_from_paths
from tierscope.collector.small_collect import collect_small_append
from tierscope.dataset.state import state_dir
from tierscope.dataset.store import Dataset
from tierscope.dataset.verified import RACY_S

_BASE_LINES = 6_000


@pytest.fixture(scope="module")
def log_lines(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    path = tmp_path_factory.mktemp("gen") / "train.log"
    write_cloudml_log(path, 12_000)
    return path.read_bytes().splitlines(keepends=True)


def _runs(log: Path) -> list:
    runs = runs_from_paths([log], "job-1", "STANDARD_1", None)
    return [dataclasses.replace(r, run_id_given=True, tier_given=True) for r in runs]


def _tables(root: Path) -> dict[str, list[tuple]]:
    ds = Dataset(root)
    found = {}
    for table in ("steps", "events", "rejects", "runs"):
        frame = ds.read(table)
        if table == "runs":
            frame = frame.drop("collected_at", strict=False)
        found[table] = sorted(frame.rows(), key=repr)
    return found


def _position(root: Path, log: Path) -> dict:
    state = OffsetStore(state_dir(root)).get(log, "job-1")
    assert state is not None
    return {k: v for k, v in dataclasses.asdict(state).items() if k != "collected_at"}


def _listing(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "digests.cache" and not p.name.endswith(".lock")
    }


def _data_bytes(root: Path) -> list[bytes]:
    return sorted(p.read_bytes() for p in (root / "steps").rglob("part-*.parquet"))


def _both(
    tmp_path: Path, base_lines: list[bytes], added: bytes, *, settled: bool = False
) -> tuple[object, object, Path, Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    log = tmp_path / "train.log"
    log.write_bytes(b"".join(base_lines))
    base = tmp_path / "base"
    collect_runs(Dataset(base), _runs(log))
    full, small = tmp_path / "full", tmp_path / "small"
    shutil.copytree(base, full)
    shutil.copytree(base, small)
    if settled:  # the copies' data files past the window in which a hash is not noted: both note them
        time.sleep(RACY_S + 0.2)
    with log.open("ab") as out:
        out.write(added)
    before = _listing(small)
    small_result = collect_small_append(small, _runs(log))
    if small_result is None:  # declined: nothing written (the note of verified files is a cache)
        assert _listing(small) == before
    full_result = collect_runs(Dataset(full), _runs(log), settle_s=0.0) if small_result is not None else None
    return full_result, small_result, full, small, log


def _assert_same_dataset(full_result: object, small_result: object, full: Path, small: Path, log: Path) -> dict:
    assert small_result == full_result
    assert _tables(small) == _tables(full)
    assert _position(small, log) == _position(full, log)
    assert _data_bytes(small) == _data_bytes(full)
    cache = "digests.cache"
    noted = [json.loads((state_dir(r) / cache).read_text())["files"] if (state_dir(r) / cache).exists() else {}
             for r in (small, full)]  # fmt: skip
    # the files each collect noted verified (a stamp holds the copy's own inode and times)
    assert sorted(noted[0]) == sorted(noted[1])
    return noted[0]


def test_the_constants_agree_with_the_stores() -> None:
    from tierscope.collector import small_collect
    from tierscope.dataset.compact import SUGGEST_COMPACT_FILES
    from tierscope.dataset.store import MAX_DIR_NAME, TABLES

    assert tuple(TABLES) == small_collect.TABLE_NAMES
    assert small_collect.SUGGEST_COMPACT_FILES == SUGGEST_COMPACT_FILES
    assert MAX_DIR_NAME == 200


def test_the_benchmarks_append_is_stored_as_the_full_collect_stores_it(log_lines: list[bytes], tmp_path: Path) -> None:
    # the last 6,000 lines of a 12,000-line log on the dataset of its first 6,000: 6,000 // 97 = 62 checkpoint
    # lines among them (every 97th line of the log), 5,938 records
    full_result, small_result, full, small, log = _both(
        tmp_path, log_lines[:_BASE_LINES], b"".join(log_lines[_BASE_LINES:]), settled=True
    )
    assert small_result is not None
    counts = small_result.sources[0]
    assert (counts.lines, counts.steps, counts.skipped) == (6_000, 5_938, 62)
    noted = _assert_same_dataset(full_result, small_result, full, small, log)
    assert [name.split("/")[0] for name in sorted(noted)] == ["runs", "steps"]  # verified by both, noted so


def test_an_unterminated_line_is_declined(log_lines: list[bytes], tmp_path: Path) -> None:
    # A whole step line without its newline may be a longer one cut mid-write: the reader waits for its newline
    # (or the file's settle time), which the small path does not judge; a cut line likewise.
    step = log_lines[_BASE_LINES + 1].rstrip(b"\n")
    for name, tail in (("a", step), ("b", step[:50])):
        _, declined, _, _, _ = _both(tmp_path / name, log_lines[:_BASE_LINES], tail)
        assert declined is None


def test_records_reaching_stored_steps_are_declined(log_lines: list[bytes], tmp_path: Path) -> None:
    # the base's last line again: the store would read the stored rows back to drop it
    _, declined, _, _, _ = _both(
        tmp_path, log_lines[:_BASE_LINES], b"".join(log_lines[_BASE_LINES - 1 : _BASE_LINES + 5])
    )
    assert declined is None


_EXTRA = [
    b"\n",
    b"Traceback (most recent call last):\n",
    b"x" * 600 + b"\n",
    b"INFO:root:Saving checkpoint to gs://b/killed/model.ckpt-3\n",
    b"\r\n",
]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    cut=st.integers(100, 3_000),
    added=st.integers(1, 2_000),
    extra=st.lists(st.sampled_from(_EXTRA), max_size=1),
)
def test_a_drawn_append_is_stored_as_the_full_collect_stores_it_or_declined(
    log_lines: list[bytes], tmp_path_factory: pytest.TempPathFactory, cut: int, added: int, extra: list[bytes]
) -> None:
    tmp_path = tmp_path_factory.mktemp("drawn")
    appended = b"".join(log_lines[cut : cut + added]) + b"".join(extra)
    full_result, small_result, full, small, log = _both(tmp_path, log_lines[:cut], appended)
    event("accepted" if small_result is not None else "declined")
    if small_result is None:
        return
    _assert_same_dataset(full_result, small_result, full, small, log)


_NO_POLARS = """
import sys
from tierscope.__main__ import main
sys.argv = ["tierscope", "collect", "files", sys.argv[1], "--dataset", sys.argv[2], "--run-id", "job-1",
            "--tier", "STANDARD_1", "-q"]
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
print("polars" in sys.modules)
"""


def test_a_command_line_collect_of_a_small_append_imports_no_polars(log_lines: list[bytes], tmp_path: Path) -> None:
    log, root = tmp_path / "train.log", tmp_path / "ds"
    log.write_bytes(b"".join(log_lines[:_BASE_LINES]))

    def collect() -> str:
        done = subprocess.run([sys.executable, "-c", _NO_POLARS, str(log), str(root)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert collect() == "True"  # the first collect of a log: the full one
    with log.open("ab") as out:
        out.write(b"".join(log_lines[_BASE_LINES : _BASE_LINES + 500]))
    assert collect() == "False"
    # every 97th line is a checkpoint line: 6,000 // 97 = 61 of the first 6,000 (5,939 records), and of the
    # 500 after them 62 * 97 = 6,014 ... 67 * 97 = 6,499, six (494 records)
    assert Dataset(root).read("steps").height == 5_939 + 494
