"""A cron job's quiet ``collect files`` done before the command line is built (:mod:`tierscope.cron`): the
same dataset as the command line's, no typer imported; any other form, or a held lock, left to the command line."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchmarks.generate import write_cloudml_log
from tests.support.ingest_helpers import stored_steps
from tierscope.cron import _options, collect_quietly
from tierscope.dataset.store import Dataset

LINES, ADDED = 2_000, 500
TYPER = re.compile(r"\|\s+typer$", re.MULTILINE)


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tierscope", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _errors(stderr: str) -> str:
    return "\n".join(line for line in stderr.splitlines() if not line.startswith("import time:"))


@pytest.fixture
def grown(tmp_path: Path) -> tuple[Path, Path, bytes]:
    """A generated 2016-format log whose first lines but the last ``ADDED`` are collected into a dataset, those
    last lines (not yet in the log), and the log."""
    whole = tmp_path / "whole.log"
    write_cloudml_log(whole, LINES)
    data = whole.read_bytes()
    cut = len(b"".join(data.splitlines(keepends=True)[: LINES - ADDED]))
    log, ds = tmp_path / "a.log", tmp_path / "ds"
    log.write_bytes(data[:cut])
    first = _cli("collect", "files", log, "-d", ds, "--run-id", "r", "--tier", "STANDARD_1", "-q")
    assert first.returncode == 0, first.stderr
    assert TYPER.search(first.stderr)  # a first collect is the command line's
    return log, ds, data[cut:]


def test_a_small_append_and_then_nothing_new_are_collected_without_typer(grown: tuple[Path, Path, bytes]) -> None:
    log, ds, added = grown
    with log.open("ab") as out:
        out.write(added)
    before = stored_steps(Dataset(ds))
    for _ in range(2):  # the append, then nothing new
        done = _cli("collect", "files", log, "--dataset", ds, "--tier", "standard_1", "--run-id", "r", "-q")
        assert done.returncode == 0 and done.stdout == "" and _errors(done.stderr) == ""
        assert not TYPER.search(done.stderr)
    # every record once: the first collect's and the added lines' (the generator's steps rise by 100 a line,
    # a checkpoint line, 1 in 100, holds none)
    after = stored_steps(Dataset(ds))
    assert after[: len(before)] == before and len(after) == len(set(after)) > len(before)
    assert len(after) - len(before) == sum(1 for line in added.splitlines() if line.startswith(b"Train ["))


def test_the_documented_crontab_line_with_a_manifest_takes_the_quick_path(grown: tuple[Path, Path, bytes]) -> None:
    # docs/running-unattended.md: collect files --manifest runs.toml --dataset DIR --quiet --lock-timeout 120
    log, ds, added = grown
    manifest = log.parent / "runs.toml"
    manifest.write_text(f'[[run]]\nid = "r"\ntier = "STANDARD_1"\nfiles = ["{log.name}"]\n')
    with log.open("ab") as out:
        out.write(added)
    for _ in range(2):  # the append, then nothing new
        done = _cli("collect", "files", "--manifest", manifest, "--dataset", ds, "--quiet", "--lock-timeout", "120")
        assert done.returncode == 0 and done.stdout == "" and _errors(done.stderr) == ""
        assert not TYPER.search(done.stderr)
    steps = stored_steps(Dataset(ds))
    assert (
        len(steps) == len(set(steps)) == sum(1 for line in log.read_bytes().splitlines() if line.startswith(b"Train ["))
    )


def test_an_unknown_tier_is_left_to_the_command_line_which_warns(grown: tuple[Path, Path, bytes]) -> None:
    log, ds, _ = grown
    done = _cli("collect", "files", log, "-d", ds, "--run-id", "r", "--tier", "onprem-rack", "-q")
    assert done.returncode == 0 and "warning: --tier 'onprem-rack' is not a tier" in _errors(done.stderr)
    assert TYPER.search(done.stderr)


def test_a_held_lock_is_waited_for_by_the_command_line(grown: tuple[Path, Path, bytes]) -> None:
    log, ds, added = grown
    with log.open("ab") as out:
        out.write(added)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys; from filelock import FileLock; l = FileLock(sys.argv[1]); l.acquire(); "
         "print('HELD', flush=True); sys.stdin.readline()", str(ds / ".lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout is not None and holder.stdout.readline().strip() == "HELD"
    assert holder.stdin is not None
    threading.Timer(1.0, holder.stdin.close).start()  # the other collect ends after a second
    done = _cli("collect", "files", log, "-d", ds, "--run-id", "r", "--tier", "STANDARD_1", "-q")
    holder.wait(timeout=60)
    assert done.returncode == 0 and _errors(done.stderr) == ""
    assert TYPER.search(done.stderr)  # the quick path did not wait: the command line did
    assert len(stored_steps(Dataset(ds))) == sum(
        1 for line in log.read_bytes().splitlines() if line.startswith(b"Train [")
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["a.log", "-d", "ds", "-q"], (["a.log"], {"dataset": "ds", "quiet": "-q"})),
        (["-q", "a.log", "b.log", "--dataset", "ds", "--run-id", "r", "--tier", "BASIC"],
         (["a.log", "b.log"], {"quiet": "-q", "dataset": "ds", "run_id": "r", "tier": "BASIC"})),
        (["--manifest", "runs.toml", "--dataset", "ds", "--quiet", "--lock-timeout", "120"],
         ([], {"manifest": "runs.toml", "dataset": "ds", "quiet": "--quiet", "lock_timeout": "120"})),
        (["a.log", "-d", "ds"], None),  # not quiet: the command line prints the counts
        (["a.log", "-q"], None),  # the default dataset: the command line's
        (["-d", "ds", "-q"], None),  # no path
        (["a.log", "-d", "ds", "-q", "-q"], None),
        (["a.log", "-d", "ds", "-d", "ds2", "-q"], None),
        (["a.log", "--dataset=ds", "-q"], None),
        (["a.log", "-d", "ds", "-q", "--config", "c"], None),
        (["a.log", "-d", "ds", "-q", "--"], None),
        (["a.log", "-qd", "ds"], None),
        (["a.log", "-d", "-q"], None),
        (["a.log", "-q", "-d"], None),
        (["", "-d", "ds", "-q"], None),
    ],
)  # fmt: skip
def test_only_the_cron_form_of_the_command_is_taken(args: list[str], expected: object) -> None:
    assert _options(args) == expected


@pytest.mark.parametrize("timeout", ["-1", "nan", "inf", "1e999", "soon", ""])
def test_a_lock_timeout_the_command_line_would_refuse_is_left_to_it(timeout: str, tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("")
    assert not collect_quietly(["tierscope", "collect", "files", str(log), "-d", str(tmp_path / "ds"), "-q",
                                "--lock-timeout", timeout])  # fmt: skip
    assert not (tmp_path / "ds").exists()
