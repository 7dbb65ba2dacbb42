"""A long collect lets a waiting collect in between two files, rather than holding the lock until its end.

A collect that held the dataset's lock for longer than another's lock timeout (60 s) made every cron
collect started meanwhile give up (exit 75), run after run. Here the slice is scaled down to 0 s (let
waiters in before every file) and the files are slowed by a pause each, so the waiting collect's turn
comes while the long one still has files to read.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.support.gcs_emulator import Emulator
from tests.support.ingest_helpers import stored_steps, write_steps
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.collector.runs import SourceCounts
from tierscope.dataset.lock import locked
from tierscope.dataset.objects import LEASE_ENV
from tierscope.dataset.store import Dataset

FILES = 12
LINES = 200


def test_a_waiting_collect_gets_the_lock_between_two_files_of_a_long_one(tmp_path: Path) -> None:
    logs = [tmp_path / f"part{i:02}.log" for i in range(FILES)]
    for i, log in enumerate(logs):
        write_steps(log, range(i * LINES + 1, (i + 1) * LINES + 1), "w")
    root = tmp_path / "ds"
    started = threading.Event()
    finished: list[float] = []

    def slowly(counts: SourceCounts) -> None:
        finished.append(time.monotonic())
        started.set()
        time.sleep(0.2)  # 12 files: 2.4 s of the long collect at least

    long_one = RunSpec(run_id="r", tier="BASIC", files=list(logs))
    outcome: dict[str, object] = {}
    worker = threading.Thread(
        target=lambda: outcome.update(
            result=collect_runs(Dataset(root), [long_one], settle_s=0, on_file=slowly, lock_slice_s=0)
        )
    )
    worker.start()
    assert started.wait(30)
    # The waiting collect reads the long one's last file, not read yet: positions are shared.
    other = collect_runs(Dataset(root), [RunSpec(run_id="r", tier="BASIC", files=[logs[-1]])], settle_s=0)
    turn = time.monotonic()
    worker.join(60)
    assert not worker.is_alive()
    assert other.sources[0].steps == LINES
    # Its turn came while the long collect still had files to read: before the long one's last file ended.
    assert turn < finished[-1]
    result = outcome["result"]
    # The long one found the last file read by the other (its positions loaded again): it stored none twice.
    assert result.sources[-1].steps == 0  # type: ignore[attr-defined]
    assert stored_steps(Dataset(root)) == list(range(1, FILES * LINES + 1))


def test_a_collect_into_a_dataset_on_cloud_storage_gives_its_lease_back_and_takes_it_again(
    gcs_emulator: Emulator, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for key, value in {**gcs_emulator.env, LEASE_ENV: "2"}.items():
        monkeypatch.setenv(key, value)
    gcs_emulator.bucket("lock-turns")
    logs = [tmp_path / f"part{i}.log" for i in range(3)]
    for i, log in enumerate(logs):
        write_steps(log, range(i * LINES + 1, (i + 1) * LINES + 1), "w")
    url = "gs://lock-turns/ds"
    # 0 s: the lease is given back and taken again before each file; every line is stored once.
    result = collect_runs(
        Dataset(url), [RunSpec(run_id="r", tier="BASIC", files=list(logs))], settle_s=0, lock_slice_s=0
    )
    assert [s.steps for s in result.sources] == [LINES] * 3
    assert sorted(Dataset(url).read("steps")["step"].to_list()) == list(range(1, 3 * LINES + 1))
    with locked(Dataset(url), timeout=0):  # and it was given back at the end
        pass
