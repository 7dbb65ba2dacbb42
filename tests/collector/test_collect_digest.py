"""benchmarks/collect_digest.py: what a collect stored, as digests that tell a changed collector's
output from the same one's. Two collects of one log print the same JSON; one changed value changes
the content digest; another batch size leaves the content and the schema as they were and changes
only the files' row groups."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from benchmarks.collect_digest import main as digest
from benchmarks.generate import write_cloudml_log
from tierscope.cli import app

runner = CliRunner()
#: Lines of the generated log: its generator puts one line without a metric every 97 lines.
LINES = 3000
BAD = "Train [worker/1], step 10:loss:2.3, accuracy:0.5 (7.0 sec) 21.0 global_steps/s,"


def _log(path: Path, bad: str = BAD) -> Path:
    write_cloudml_log(path, LINES)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(bad + "\n")  # cut off before its local rate: one reject
    return path


def _collect(log: Path, dataset: Path, *extra: str) -> dict:
    args = ["collect", "files", str(log), "-d", str(dataset), "--run-id", "r", "--settle", "0", "-q", *extra]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return digest([str(dataset)])


def test_same_log_same_digest(tmp_path: Path) -> None:
    log = _log(tmp_path / "a.log")
    first = _collect(log, tmp_path / "one")
    again = _collect(log, tmp_path / "two")
    assert first == again
    # 3000 lines, of which lines 97, 194, ..., 2910 carry no metric (3000 // 97 = 30), plus the
    # one reject appended: 2970 step records and 1 reject.
    assert (first["steps"]["rows"], first["rejects"]["rows"]) == (2970, 1)
    assert first["steps"]["schema"]["step"] == "Int64" and first["steps"]["schema"]["task_index"] == "Int32"


def test_one_value_changes_the_content(tmp_path: Path) -> None:
    log = _log(tmp_path / "a.log")
    before = _collect(log, tmp_path / "one")
    text = log.read_text(encoding="utf-8")
    first = text.split("\n", 1)[0]
    changed = first.replace("loss:", "loss:1", 1)  # one more leading digit: another loss, a valid line
    log.write_text(text.replace(first, changed, 1), encoding="utf-8")
    after = _collect(log, tmp_path / "two")
    assert after["steps"]["content"] != before["steps"]["content"]
    assert after["steps"]["rows"] == before["steps"]["rows"]
    assert after["rejects"] == before["rejects"]


def test_batches_change_row_groups_not_content(tmp_path: Path) -> None:
    log = _log(tmp_path / "a.log")
    whole = _collect(log, tmp_path / "one")
    small = _collect(log, tmp_path / "two", "--batch-bytes", "65536")
    for table in ("steps", "rejects"):
        assert small[table]["content"] == whole[table]["content"]
        assert small[table]["schema"] == whole[table]["schema"]
    assert len(small["steps"]["files"]) > len(whole["steps"]["files"]) == 1
