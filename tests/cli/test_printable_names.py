"""Run ids and tiers are stored as given, shown with control characters escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.text import printable

runner = CliRunner()
#: A window-title change, a clear-screen, a colour and a right-to-left override.
EVIL_RUN = "run\x1b]0;pwned\x07\x1b[2J\x1b[31m\u202eevil"
EVIL_TIER = "BASIC\x1b[5m"
SHOWN_RUN = "run\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31m\\u202eevil"


def test_printable_escapes_c0_c1_and_bidirectional_controls_only() -> None:
    assert printable(EVIL_RUN) == SHOWN_RUN
    assert printable("a\tb\nc\x85d\u2066e\u200ff") == "a\\x09b\\x0ac\\x85d\\u2066e\\u200ff"
    assert printable("実験-1 [worker/3]") == "実験-1 [worker/3]"


@pytest.fixture
def evil_dataset(tmp_path: Path) -> Path:
    lines = []
    for step in range(1, 40):
        record = {
            "tierscope": "step", "run_id": EVIL_RUN, "tier": EVIL_TIER, "role": "chief", "task_index": 0,
            "step": step * 10, "elapsed_s": step * 2.0, "global_steps_per_s": 5.0, "local_steps_per_s": 5.0,
        }  # fmt: skip
        lines.append(json.dumps(record))
    lines.append(json.dumps({"tierscope": "step", "run_id": EVIL_RUN, "step": -5}))  # a reject
    log = tmp_path / "evil.jsonl"
    log.write_text("\n".join(lines) + "\n")
    args = ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--settle", "0", "--run-id", EVIL_RUN]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output  # was: the run id printed raw in collect's table
    return tmp_path / "ds"


def test_the_run_id_is_stored_as_given(evil_dataset: Path) -> None:
    assert set(Dataset(evil_dataset).read("steps")["run_id"]) == {EVIL_RUN}


@pytest.mark.parametrize("command", [["rejects"], ["summary"]])
def test_rejects_and_summary_print_no_control_character(evil_dataset: Path, command: list[str]) -> None:
    result = runner.invoke(app, [*command, "-d", str(evil_dataset)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
    assert "evil" in result.output


def test_the_report_neutralises_the_right_to_left_override(evil_dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", "-d", str(evil_dataset), "--out", str(out), "--lang", "en"])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    body = html.split("<body", 1)[1].split("<script", 1)[0]  # the page's text, before the chart data
    assert "\u202e" not in body and "\x1b" not in body  # was: U+202E reordered the table's text
    assert "\\u202eevil" in body


def test_a_run_id_too_long_for_a_directory_name_is_stored_under_a_short_stable_one(tmp_path: Path) -> None:
    from tierscope.dataset.store import partition_dir_name

    run_id = "日本語の実験名" * 4 + "-1"  # 28 Japanese characters: 252 bytes percent-encoded
    log = tmp_path / "a.log"
    log.write_text("INFO:tensorflow:global_step/sec: 4.5\nINFO:tensorflow:global_step/sec: 4.7\n")
    for _ in range(2):  # the second collect finds the same directory
        # --settle 0: a job's finished log (while it may grow, its last hook report waits for the next line)
        args = [
            "collect",
            "files",
            str(log),
            "-d",
            str(tmp_path / "ds"),
            "--settle",
            "0",
            "--run-id",
            run_id,
            "--reread",
        ]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output  # was: "File name too long", 10,077 characters
    name = partition_dir_name(run_id)
    assert len(name) <= 200 and name == partition_dir_name(run_id)
    assert name.startswith("run_id=%E6%97%A5") and name[-17] == "~"
    ds = Dataset(tmp_path / "ds")
    assert (tmp_path / "ds" / "steps" / name).is_dir()
    assert ds.read("steps")["run_id"].to_list() == [run_id, run_id]  # the full id, stored once
    assert ds.read("steps", run_id).height == 2
    assert ds.read("runs")["run_id"].to_list()[-1] == run_id
    assert partition_dir_name("short") == "run_id=short"


def test_line_separators_and_invisible_characters_are_shown_escaped() -> None:
    from tierscope.text import printable

    # U+2028 / U+2029 broke a table's line on the terminal; U+200B and the BOM hid a difference between two
    # run ids; the joiners stay (Persian and Indic names, emoji)
    assert printable("run\u2028two\u2029x\u200by\ufeffz") == "run\\u2028two\\u2029x\\u200by\\ufeffz"
    assert printable("می\u200cخواهم \U0001f469\u200d\U0001f4bb") == "می\u200cخواهم \U0001f469\u200d\U0001f4bb"
