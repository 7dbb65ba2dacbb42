"""The collect command for cron: quiet success, exit codes, a full disk, a missing file among good ones."""

from __future__ import annotations

import errno
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.support.ingest_helpers import stored_steps, write_steps
from tierscope.cli import app
from tierscope.dataset import doctor
from tierscope.dataset.store import Dataset

runner = CliRunner()


def test_quiet_success_prints_nothing_and_counts_are_printed_otherwise(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 4))
    with log.open("a") as fh:
        fh.write("Train [worker/0], step x\n")
    ds = str(tmp_path / "ds")
    quiet = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--quiet"])
    assert quiet.exit_code == 0 and quiet.output == ""
    write_steps(log, [3, 4])  # 3 again: a duplicate
    loud = runner.invoke(app, ["collect", "files", str(log), "-d", ds])
    # 2 new lines read; step 4 stored, step 3 a duplicate; the rejected line was not read again.
    expected = "read 2 lines: stored 1 step record and 0 events, 1 duplicate already stored, kept aside 0 rejected"
    assert expected in loud.output


def test_usage_error_exits_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["collect", "files", "-d", str(tmp_path)]).exit_code == 2
    assert runner.invoke(app, ["collect", "files", "x.log", "--lock-timeout", "soon"]).exit_code == 2


def test_a_full_disk_fails_cleanly_and_the_next_collect_stores_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 11))
    ds = Dataset(tmp_path / "ds")
    assert runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "-q"]).exit_code == 0
    write_steps(log, range(11, 21))
    real = pq.write_table  # the dataset's writer (page checksums)

    def full(table: object, file: Path, **kwargs: object) -> None:
        real(table, file, **kwargs)  # type: ignore[arg-type]
        with Path(file).open("r+b") as fh:  # half written, then the disk is full
            fh.truncate(100)
        raise OSError(errno.ENOSPC, "No space left on device", str(file))

    with monkeypatch.context() as patch:
        patch.setattr(pq, "write_table", full)
        result = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "-q"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "No space left on device" in result.output
    # Nothing half-written is visible, the first 10 steps read cleanly, nothing is left behind.
    assert stored_steps(ds) == list(range(1, 11)) and ds.temp_files() == []
    assert doctor.check(ds).problems == []
    assert runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "-q"]).exit_code == 0
    assert stored_steps(ds) == list(range(1, 21))


def test_an_unreadable_file_fails_the_collect_but_not_the_other_files(tmp_path: Path) -> None:
    good = tmp_path / "good.log"
    write_steps(good, range(1, 6))
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        '[[run]]\nid = "gone"\nfiles = ["missing.log"]\n\n[[run]]\nid = "good"\ntier = "BASIC"\nfiles = ["good.log"]\n'
    )
    ds = Dataset(tmp_path / "ds")
    result = runner.invoke(app, ["collect", "files", "--manifest", str(manifest), "-d", str(ds.root), "-q"])
    assert result.exit_code == 1
    assert "missing.log" in result.output and result.output.count("\n") == 1
    assert stored_steps(ds) == [1, 2, 3, 4, 5]


def test_ctrl_c_during_a_collect_says_nothing_is_lost_and_exits_130(tmp_path: Path, monkeypatch) -> None:
    import tierscope.collector.collect

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    # The command imports collect_runs when it runs, so patching the collector's reaches it.
    monkeypatch.setattr(tierscope.collector.collect, "collect_runs", interrupted)
    log = tmp_path / "a.log"
    write_steps(log, range(1, 3))
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 130
    assert "interrupted: what was stored so far is kept" in result.output


def test_the_collect_freezes_the_garbage_collector_only_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    from tierscope.collector import collect

    log = tmp_path / "a.log"
    write_steps(log, range(1, 4))
    real = collect.collect_runs
    frozen: list[int] = []

    def collect_runs(*args: object, **kwargs: object) -> object:
        frozen.append(gc.get_freeze_count())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(collect, "collect_runs", collect_runs)
    before = gc.get_freeze_count()
    assert runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "-q"]).exit_code == 0
    # the objects there were stayed out of the collector's passes while the collect ran, not after
    assert frozen and frozen[0] > before
    assert gc.get_freeze_count() == 0
