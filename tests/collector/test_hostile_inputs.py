"""Hostile inputs (JSON-lines files, odd bytes, odd names): each is a reject or one clear error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


def _step(step: int, **extra: str) -> str:
    fields = ", ".join(f'"{k}": {v}' for k, v in extra.items())
    return (
        '{"tierscope": "step", "run_id": "r1", "tier": "BASIC", "role": "chief", "task_index": 0, '
        f'"step": {step}, "elapsed_s": {step}, "global_steps_per_s": 3.0' + (f", {fields}" if fields else "") + "}"
    )


HOSTILE = {
    2: _step(2, loss="1e400"),
    3: _step(3, loss="9" * 5000),
    4: _step(4, extra="[" * 100_000 + "]" * 100_000),
    5: _step(5, loss="-Infinity"),
}


def _collect(*args: str) -> object:
    result = runner.invoke(app, ["collect", "files", *args, "--settle", "0"])
    assert "Traceback" not in result.output
    return result


def test_unrepresentable_json_values_are_rejects_and_every_run_of_the_manifest_is_stored(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([_step(1), *HOSTILE.values(), _step(6)]) + "\n")
    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(_step(n).replace('"r1"', '"r2"') for n in range(1, 4)) + "\n")
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        f'[[run]]\nid = "r1"\nfiles = ["{bad}"]\n[[run]]\nid = "r2"\nfiles = ["{good}"]\n', encoding="utf-8"
    )
    for _ in range(2):  # was: a traceback on every collect, 0 records of either run stored
        result = _collect("--manifest", str(manifest), "-d", str(tmp_path / "ds"))
        assert result.exit_code == 0, result.output
    ds = Dataset(tmp_path / "ds")
    steps = ds.read("steps").sort("run_id", "step")
    assert steps.select("run_id", "step").rows() == [("r1", 1), ("r1", 6), ("r2", 1), ("r2", 2), ("r2", 3)]
    rejects = ds.read("rejects").sort("source_offset")
    assert rejects["source_offset"].to_list() == [2, 3, 4, 5]
    assert rejects["reason"].to_list() == [
        "number 1e400 is out of the range of a 64-bit float",
        "integer of 5,000 digits (more than 4,300)",
        "value nested too deep (about 1,000 levels or more)",
        "-Infinity is not a JSON number",
    ]
    assert rejects["raw"][0] == HOSTILE[2]


def test_a_toml_datetime_as_date_is_a_manifest_error_before_anything_is_stored(tmp_path: Path) -> None:
    log = tmp_path / "a.jsonl"
    log.write_text(_step(1) + "\n")
    manifest = tmp_path / "runs.toml"
    manifest.write_text(f'[[run]]\nid = "r1"\nfiles = ["{log}"]\ndate = 2016-12-31T10:00:00\n')
    result = _collect("--manifest", str(manifest), "-d", str(tmp_path / "ds"))
    assert result.exit_code == 1  # was: the steps stored, then a crash on every later collect
    assert (
        "run #1 (r1): 'date' is 2016-12-31T10:00:00, a date and time; give the date alone, like 2016-12-31"
        in result.output
    )
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("run_id", ["", "  "])
def test_an_empty_run_id_is_a_usage_error(tmp_path: Path, run_id: str) -> None:
    log = tmp_path / "a.jsonl"
    log.write_text(_step(1) + "\n")
    result = _collect(str(log), "--run-id", run_id, "-d", str(tmp_path / "ds"))
    assert result.exit_code == 2  # was: silently replaced by the file's name
    assert "a run id cannot be empty" in result.output


def test_a_hidden_file_names_its_run_without_the_leading_dot(tmp_path: Path) -> None:
    log = tmp_path / ".hidden.log"
    log.write_text("INFO:tensorflow:global_step/sec: 4.5\n")
    result = _collect(str(log), "-d", str(tmp_path / "ds"))
    assert result.exit_code == 0, result.output
    assert Dataset(tmp_path / "ds").read("steps")["run_id"].to_list() == ["hidden"]  # was ""


def test_a_symlink_loop_is_reported_as_one(tmp_path: Path) -> None:
    loop = tmp_path / "loop.log"
    os.symlink(loop, loop)
    result = _collect(str(loop), "-d", str(tmp_path / "ds"))
    assert result.exit_code == 1
    # was "no such file or directory"
    assert f"error: cannot read {loop}: a symbolic link loop (the link leads back to itself)" in result.output


def test_a_nan_loss_is_stored_with_a_note_saying_where_the_model_diverged(tmp_path: Path) -> None:
    log = tmp_path / "nan.log"
    log.write_text(
        "INFO:tensorflow:loss = 0.5, step = 100 (0.5 sec)\n"
        "INFO:tensorflow:loss = nan, step = 200 (0.5 sec)\n"
        "INFO:tensorflow:loss = nan, step = 300 (0.5 sec)\n"
    )
    result = _collect(str(log), "-d", str(tmp_path / "ds"))
    assert result.exit_code == 0, result.output
    # was: stored without a word
    assert "2 step records have loss NaN (first at line 2): the model diverged; they are stored" in result.output
    assert Dataset(tmp_path / "ds").read("steps").height == 3


def test_summary_prints_no_numpy_warning_for_zero_rates(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    log = tmp_path / "zero.jsonl"
    records = [
        {"tierscope": "step", "run_id": "z", "tier": "BASIC", "role": "chief", "task_index": 0, "step": s * 10,
         "elapsed_s": s * 2.0, "global_steps_per_s": 0.0, "local_steps_per_s": 0.0}
        for s in range(1, 30)
    ]  # fmt: skip
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert _collect(str(log), "-d", str(tmp_path / "ds")).exit_code == 0
    done = subprocess.run(
        [sys.executable, "-W", "always", "-m", "tierscope", "summary", "-d", str(tmp_path / "ds")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr  # was: "invalid value encountered in divide", "All-NaN slice"


def test_a_nan_where_a_whole_number_belongs_is_a_reject(tmp_path: Path) -> None:
    # found by tests/test_hostile_fuzz.py: int(nan) raised ValueError out of the collect
    log = tmp_path / "n.jsonl"
    log.write_text(_step(1, task_index="NaN").replace('"task_index": 0, ', "") + "\n")
    result = _collect(str(log), "-d", str(tmp_path / "ds"))
    assert result.exit_code == 0, result.output
    assert Dataset(tmp_path / "ds").read("rejects")["reason"].to_list() == [
        "field 'task_index' is nan, not a whole number"
    ]
