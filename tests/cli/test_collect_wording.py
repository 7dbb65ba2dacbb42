"""What a collect says a new user reads right: a record repeated within one file (not "already stored"), the
folder its sources share, a path given where `collect files` was meant, a --dataset naming a file, and how a
folder of unrelated logs was split into runs."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()

STEP_100 = "Train [master/0], step 100 (1.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
#: Step 100 printed again, its figures to another precision (a copy of the very line is no record of its own)
STEP_100_AGAIN = "Train [master/0], step 100 (1.0 sec) 10.00 global_steps/s, 10.00 local_steps/s\n"
STEP_200 = "Train [master/0], step 200 (2.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"


def _collect(*args: str) -> tuple[int, str, str]:
    got = runner.invoke(app, ["collect", "files", *args], env={"COLUMNS": "400"})
    return got.exit_code, got.stdout, got.stderr


def test_a_record_repeated_within_its_file_is_not_said_already_stored(tmp_path: Path) -> None:
    # A progress bar printing its last step twice (a tqdm `1000/1000` repeated) on a first collect: step 100
    # twice (10.0 and 10.00 steps/s agree within 0.1 %: one record), step 200 once. 3 lines: 2 stored, 1 a
    # repeat of a record of this very file, none stored before.
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "bar.log"
    log.write_text(STEP_100 + STEP_100_AGAIN + STEP_200)
    code, out, _ = _collect(str(log), "-d", str(tmp_path / "ds"))
    assert code == 0
    assert "read 3 lines: stored 2 step records and 0 events, 1 repeated record within its file," in out
    assert "already stored" not in out
    # the sources' shared folder is a title that says what it is (a bare "in .../logs/" read as a stray line)
    assert f"sources in {tmp_path / 'logs'}/" in out
    # the same file copied under another run's name: its records are that run's, the repeat still the file's
    again = tmp_path / "again.log"
    again.write_text(STEP_100 + STEP_100_AGAIN + STEP_200)
    code, out, _ = _collect(str(again), "-d", str(tmp_path / "ds"), "--run-id", "bar")
    # run bar holds steps 100 and 200 of task master 0: 2 already stored, 1 repeated within the file = 3
    assert "3 duplicates (2 already stored, 1 repeated within their file)" in out


def test_a_folder_of_unrelated_logs_says_how_it_was_split(tmp_path: Path) -> None:
    top = tmp_path / "logs"
    top.mkdir()
    (top / "t4.log").write_text(STEP_100 + STEP_200)
    (top / "a100.log").write_text(STEP_100 + STEP_200)
    code, _, err = _collect(str(top), "-d", str(tmp_path / "ds"))
    assert code == 0
    assert f"note: folder {top} (its logs not all named as one job's tasks, no run.json) read as 2 runs" in err
    assert "a run each for a100.log, t4.log; --run-id ID reads them as one run" in err
    summary = runner.invoke(app, ["summary", "-d", str(tmp_path / "ds"), "--format", "csv"])
    assert summary.stdout.splitlines()[1].startswith("a100,") and summary.stdout.splitlines()[2].startswith("t4,")


def test_a_path_where_collect_files_was_meant(tmp_path: Path) -> None:
    log = tmp_path / "hf_t4.log"
    log.write_text(STEP_100)
    got = runner.invoke(app, ["collect", str(log), "-d", "ds"])
    assert got.exit_code == 2
    assert f"to collect log files, name the command: tierscope collect files {log} -d ds" in got.stderr
    # a mistyped command is still told the nearest one (click's own words)
    assert "Did you mean 'files'?" in runner.invoke(app, ["collect", "filez"]).stderr


def test_a_dataset_that_is_a_file_is_said_alike_by_every_command(tmp_path: Path) -> None:
    log = tmp_path / "hf_t4.log"
    log.write_text(STEP_100)
    said = f"{log} is a file, not a dataset directory; pass --dataset a directory"
    for args in (["collect", "files", str(log)], ["summary"], ["report", "--out", str(tmp_path / "r.html")]):
        got = runner.invoke(app, [*args, "-d", str(log)])
        assert got.exit_code == 1 and said in got.stderr, args
