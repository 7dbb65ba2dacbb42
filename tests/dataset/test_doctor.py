"""Corrupt files in a dataset: doctor names each, --fix quarantines them, analysis says so in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.ingest_helpers import collect, stored_steps, write_steps
from tierscope.cli import app
from tierscope.dataset.store import Dataset

runner = CliRunner()


@pytest.fixture
def damaged(tmp_path: Path) -> tuple[Dataset, dict[str, Path]]:
    """A dataset of 3 runs (10 steps each) whose steps files are then damaged three ways."""
    ds = Dataset(tmp_path / "ds")
    for run in ("a", "b", "c"):
        log = tmp_path / f"{run}.log"
        write_steps(log, range(1, 11))
        collect(ds, log, run_id=run)
    good = tmp_path / "good.log"
    write_steps(good, range(100, 105))
    collect(ds, good, run_id="ok")
    (truncated,) = ds.files("steps", "a")
    truncated.write_bytes(truncated.read_bytes()[:-40])  # footer cut off
    (empty,) = ds.files("steps", "b")
    empty.write_bytes(b"")
    (garbage,) = ds.files("steps", "c")
    garbage.write_bytes(b"PAR1 this is not parquet at all\n" * 10)
    return ds, {"truncated": truncated, "empty": empty, "garbage": garbage}


def test_doctor_names_each_corrupt_file_and_exits_1(damaged: tuple[Dataset, dict[str, Path]]) -> None:
    ds, bad = damaged
    result = runner.invoke(app, ["doctor", "-d", str(ds.root)])
    assert result.exit_code == 1
    for path in bad.values():
        assert f"corrupt: {path}:" in result.output
    assert f"corrupt: {bad['empty']}: empty file (0 bytes)" in result.output
    # 4 steps files + 4 runs files + state/files.json
    assert "checked 9 files: 3 corrupt, run with --fix" in result.output


def test_doctor_fix_moves_them_to_quarantine_and_the_rest_reads(damaged: tuple[Dataset, dict[str, Path]]) -> None:
    ds, bad = damaged
    result = runner.invoke(app, ["doctor", "-d", str(ds.root), "--fix"])
    assert result.exit_code == 0, result.output
    for path in bad.values():
        assert not path.exists()
        assert (ds.quarantine_dir / path.relative_to(ds.root)).exists()
    assert stored_steps(ds) == [100, 101, 102, 103, 104]  # only run "ok" is left
    again = runner.invoke(app, ["doctor", "-d", str(ds.root), "--quiet"])
    assert again.exit_code == 0 and again.output == ""


@pytest.mark.parametrize("kind", ["truncated", "empty", "garbage"])
@pytest.mark.parametrize("command", [["summary"], ["report", "--lang", "en"], ["rejects"]])
def test_analysis_on_a_corrupt_file_fails_with_one_line_naming_it(
    tmp_path: Path, damaged: tuple[Dataset, dict[str, Path]], kind: str, command: list[str]
) -> None:
    ds, bad = damaged
    # Keep only one damaged file, so the message must name that one.
    for other, path in bad.items():
        if other != kind:
            path.unlink()
    args = [*command, "-d", str(ds.root)] + (["-o", str(tmp_path / "r.html")] if command[0] == "report" else [])
    result = runner.invoke(app, args)
    if command[0] == "rejects":  # the rejects table is intact: it must still list
        assert result.exit_code == 0, result.output
        return
    assert result.exit_code == 1
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert str(bad[kind]) in lines[0] and "tierscope doctor" in lines[0] and "Traceback" not in result.output


# State that does not parse, whatever its bytes. Non-UTF-8 bytes crashed
# collect, doctor and doctor --fix with a UnicodeDecodeError traceback.
GARBAGE_STATE = {
    # offset: len(b'{"version": 1, "files": ["') = 26
    "not UTF-8": (b'{"version": 1, "files": ["\xff\xfe\x80"]}', "is not UTF-8 text (byte 0xff at offset 26)"),
    "cut off": (b'{"version": 1, "files": [', "is not valid JSON"),
    "a list": (b"[1, 2]", "holds a JSON list, not an object"),
    "wrong shape": (b'{"version": 1, "files": 3}', "is not a file-offsets document"),
    "deep": (b"[" * 100_000 + b"]" * 100_000, "is not valid JSON (RecursionError"),
}


def _dataset_with_state(tmp_path: Path, garbage: bytes) -> tuple[Dataset, Path]:
    ds = Dataset(tmp_path / "ds")
    log = tmp_path / "a.log"
    write_steps(log, range(1, 6))
    collect(ds, log)
    (ds.state_dir / "files.json").write_bytes(garbage)
    return ds, log


@pytest.mark.parametrize("kind", list(GARBAGE_STATE))
def test_collect_moves_unreadable_state_aside_with_one_line_and_rereads(tmp_path: Path, kind: str) -> None:
    garbage, problem = GARBAGE_STATE[kind]
    ds, log = _dataset_with_state(tmp_path, garbage)
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "--run-id", "r", "--quiet"])
    assert result.exit_code == 0, result.output
    moved = ds.quarantine_dir / "state" / "files.json"
    assert moved.read_bytes() == garbage
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"note: {ds.state_dir / 'files.json'} {problem}") and f"moved to {moved}" in line
    # The offsets are gone: the file was read again, and every record was already stored.
    assert stored_steps(ds) == [1, 2, 3, 4, 5]
    again = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "--run-id", "r"])
    assert again.exit_code == 0 and "note:" not in again.output


@pytest.mark.parametrize("kind", ["not UTF-8", "cut off", "deep"])
def test_doctor_names_unreadable_state_in_one_line_and_fix_moves_it(tmp_path: Path, kind: str) -> None:
    garbage, problem = GARBAGE_STATE[kind]
    ds, log = _dataset_with_state(tmp_path, garbage)
    result = runner.invoke(app, ["doctor", "-d", str(ds.root)])
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert f"corrupt: {ds.state_dir / 'files.json'}: {problem}" in result.output, result.output
    assert "Traceback" not in result.output
    fixed = runner.invoke(app, ["doctor", "-d", str(ds.root), "--fix"])
    assert fixed.exit_code == 0, fixed.output
    assert (ds.quarantine_dir / "state" / "files.json").read_bytes() == garbage
    result = runner.invoke(app, ["collect", "files", str(log), "-d", str(ds.root), "--run-id", "r"])
    assert result.exit_code == 0 and "read 5 lines: stored 0 step records" in result.output
    assert stored_steps(ds) == [1, 2, 3, 4, 5]


def test_compact_also_moves_unreadable_state_aside_with_one_line(tmp_path: Path) -> None:
    garbage, problem = GARBAGE_STATE["not UTF-8"]
    ds, _ = _dataset_with_state(tmp_path, garbage)
    result = runner.invoke(app, ["compact", "-d", str(ds.root), "--quiet"])
    assert result.exit_code == 0, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith(f"note: {ds.state_dir / 'files.json'} {problem}")
    assert (ds.quarantine_dir / "state" / "files.json").read_bytes() == garbage


def test_doctor_on_a_missing_folder_says_so_and_what_to_give(tmp_path: Path) -> None:
    """It said "is not a directory" of a path that does not exist, and nothing to do."""
    missing = tmp_path / "nodataset"
    result = runner.invoke(app, ["doctor", "--dataset", str(missing)])
    assert result.exit_code == 1
    assert f"{missing} does not exist; give --dataset the folder a collect wrote" in " ".join(result.output.split())
    (tmp_path / "afile").write_text("")
    result = runner.invoke(app, ["doctor", "--dataset", str(tmp_path / "afile")])
    assert result.exit_code == 1 and "afile is not a directory; give --dataset" in " ".join(result.output.split())
    # a folder that holds no dataset: "checked 0 files: 0 corrupt" and exit 0 read as a clean bill
    (tmp_path / "logs").mkdir()
    result = runner.invoke(app, ["doctor", "--dataset", str(tmp_path / "logs")])
    assert result.exit_code == 1 and "logs holds no tierscope dataset" in " ".join(result.output.split())
