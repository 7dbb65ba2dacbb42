"""A run's status is its log's last word on its end: an error its steps went on from, then ``Training finished``,
is ``ok`` with the error kept as a note; a failure that ends the log, or one only a bare ``finished`` line follows,
stays ``failed`` (tierscope.analysis.summary.overcome_failures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app

# An Estimator's step lines (``loss = ..., step = N (20.000 sec)``) and a Python traceback whose last line is
# TensorFlow's UnavailableError, the shape of a lost worker in the shared cases (case01's
# ``UnavailableError ... Stream removed``).
STEPS = [f"INFO:tensorflow:loss = 0.5, step = {100 * i} (20.000 sec)" for i in range(1, 11)]
ERROR = [
    "Traceback (most recent call last):",
    '  File "trainer/task.py", line 10, in <module>',
    "    main()",
    "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed",
]
FINISHED = ["INFO:tensorflow:Training finished"]
REASON = "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed"


def _summary(tmp_path: Path, logs: dict[str, list[str]]) -> tuple[dict[str, dict[str, object]], str]:
    paths = []
    for run, lines in logs.items():
        paths.append(tmp_path / f"{run}.log")
        paths[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    ds = str(tmp_path / "ds")
    runner = CliRunner()
    done = runner.invoke(app, ["collect", "files", *map(str, paths), "-d", ds, "--settle", "0"])
    assert done.exit_code == 0, done.output
    rows = {r["run_id"]: r for r in json.loads(runner.invoke(app, ["summary", "-d", ds, "--json"]).stdout)}
    text = " ".join(runner.invoke(app, ["summary", "-d", ds], terminal_width=200).output.split())
    return rows, text


def test_steps_after_an_error_then_finished_is_ok_with_the_error_as_a_note(tmp_path: Path) -> None:
    rows, text = _summary(
        tmp_path,
        {
            # steps 100-500, the traceback, steps 600-1000 (the session went on), then its word that it finished
            "resumed": STEPS[:5] + ERROR + STEPS[5:] + FINISHED,
            # the near miss: steps 100-1000, then the traceback ends the log
            "ends_failed": STEPS + ERROR,
            # and one whose traceback only a bare `finished` follows, no step between: the failure stands
            "no_steps_after": STEPS + ERROR + FINISHED,
        },
    )
    resumed = rows["resumed"]
    assert (resumed["status"], resumed["failure_reason"], resumed["earlier_failure"]) == ("ok", None, REASON)
    assert f"run resumed: its log went on after an error ({REASON}): steps resumed and it finished" in text
    assert (rows["ends_failed"]["status"], rows["ends_failed"]["failure_reason"]) == ("failed", REASON)
    assert (rows["no_steps_after"]["status"], rows["no_steps_after"]["failure_reason"]) == ("failed", REASON)
    assert rows["ends_failed"]["earlier_failure"] is None


def test_formats_try_judges_a_files_status_as_the_summary_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `formats --try` says one file's status (collector.explain): the same rule, or it contradicts the summary. The
    # files are named from their folder, as a user names them: a long path is shortened to fit the line.
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    said = {}
    for run, lines in {"resumed": STEPS[:5] + ERROR + STEPS[5:] + FINISHED, "ends_failed": STEPS + ERROR}.items():
        path = Path(f"{run}.log")
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        said[run] = " ".join(runner.invoke(app, ["formats", "--try", str(path)], terminal_width=200).output.split())
    # resumed: 10 records (steps 100-1000) and 2 events (the traceback's failure, `Training finished`)
    assert "resumed.log: format tf-estimator, 10 records, 2 events, roles (no role), status ok;" in said["resumed"]
    assert f"status failed ({REASON});" in said["ends_failed"]
