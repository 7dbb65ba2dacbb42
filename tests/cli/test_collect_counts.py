"""The line ``tierscope collect`` ends with accounts for every line read: nothing is lost."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()

RECORD = "Train [master/0], step {step}:loss:2.3, accuracy:0.2 ({s} sec) 4.644 global_steps/s, 4.644 local_steps/s\n"


def test_the_closing_line_counts_lines_without_a_metric(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    # 6 lines: 2 step records, 1 reject (cut off), 3 without a metric (text, a JSON array, a blank line).
    log.write_text(
        RECORD.format(step=100, s=21.5)
        + "INFO saving checkpoint\n"
        + "Train [master/0], step 150:loss\n"
        + "[1, 2, 3]\n"
        + "\n"
        + RECORD.format(step=200, s=42.7)
    )
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds")])
    assert result.exit_code == 0, result.output
    # 6 = 2 stored + 0 events + 0 duplicates + 1 rejected + 3 with no metric
    assert result.output.splitlines()[-1] == (
        "read 6 lines: stored 2 step records and 0 events, 0 duplicates already stored, "
        "kept aside 1 rejected line (see `tierscope rejects`), 3 lines had no metric"
    )


def test_a_line_that_stores_a_record_and_rejects_a_piece_counts_once(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    # Line 2 is a task-tagged Keras summary whose "[0]<stdout.-:" head is split off as a piece without
    # a step count: the line stores its record (step 125) and keeps the piece as a reject.
    log.write_text(RECORD.format(step=100, s=6.2) + "[0]<stdout.-:125/125 - 3s - loss: 0.077 - accuracy: 0.9756\n")
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--settle", "0"])
    assert result.exit_code == 0, result.output
    # 2 lines = 2 that stored a record + 0 + 0 + 0 rejected lines + 0 with no metric; the piece is said apart.
    assert result.output.splitlines()[-1] == (
        "read 2 lines: stored 2 step records and 0 events, 0 duplicates already stored, "
        "kept aside 0 rejected lines and 1 rejected piece of a line (see `tierscope rejects`), 0 lines had no metric"
    )


def test_a_line_of_several_records_counts_once_and_its_records_are_said(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    bar = "10/10 [==============================] - 1s 100ms/step - loss: 0.5000"
    # Line 2: epoch 1's final bar (step 10); line 3 holds two more copies of it glued on one line.
    log.write_text(f"Epoch 1/2\n{bar}\n{bar} {bar}\n")
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--settle", "0"])
    assert result.exit_code == 0, result.output
    # 3 lines = 1 that stored step 10 + 1 whose 2 records both repeat it (records repeated within this file,
    # none stored before) + 1 with no metric ("Epoch 1/2").
    assert result.output.splitlines()[-1] == (
        "read 3 lines: stored 1 step record and 0 events, 2 repeated records from 1 line within their file, "
        "kept aside 0 rejected lines, 1 line had no metric"
    )


def test_a_log_no_format_reads_is_left_unread_and_records_no_run(tmp_path: Path) -> None:
    # 2 lines, neither a record nor an event nor a broken record: nothing stored, no run recorded, and the file
    # not marked read, so the collect after a format is declared reads both lines: 'step 10 speed 4.0' is then
    # step 10 at 4.0 steps/s.
    log = tmp_path / "odd.log"
    log.write_text("it=10 spd=4.0\nit=20 spd=4.0\n")
    ds = str(tmp_path / "ds")
    first = runner.invoke(app, ["collect", "files", str(log), "-d", ds])
    assert first.exit_code == 0, first.output
    assert "did not mark it read" in first.output
    assert "no data" not in runner.invoke(app, ["summary", "-d", ds]).output
    formats = tmp_path / "mine.toml"
    formats.write_text(
        "[[format]]\nname = \"mine\"\nregex = '^it=(?P<step>\\d+) spd=(?P<global_steps_per_s>[0-9.]+)$'\n"
    )
    second = runner.invoke(app, ["collect", "files", str(log), "--formats", str(formats), "-d", ds])
    assert second.exit_code == 0, second.output
    assert second.output.splitlines()[-1].startswith("read 2 lines: stored 2 step records"), second.output


def test_an_empty_log_is_said_and_records_no_run_until_its_job_writes_to_it(tmp_path: Path) -> None:
    # cron's first collect of a job's log just created: 0 lines; said in one line, no run listed with no data; its
    # place kept, so the two step lines written next are read by the next collect (2 records, run 'job' listed)
    log = tmp_path / "job.log"
    log.touch()
    ds = str(tmp_path / "ds")
    first = runner.invoke(app, ["collect", "files", str(log), "-d", ds])
    assert first.exit_code == 0, first.output
    flat = " ".join(first.output.split())
    assert f"warning: {log} is empty: nothing stored; collect it again once its job has written to it" in flat, flat
    assert "job" not in runner.invoke(app, ["summary", "-d", ds]).output.replace(str(tmp_path), "")
    log.write_text(
        "Train [master/0], step 100 (1.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
        "Train [master/0], step 200 (2.0 sec) 10.0 global_steps/s, 10.0 local_steps/s\n"
    )
    second = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--settle", "0"])
    assert second.exit_code == 0, second.output
    assert "read 2 lines: stored 2 step records" in second.output and "is empty" not in second.output
    assert "job" in runner.invoke(app, ["summary", "-d", ds]).output
