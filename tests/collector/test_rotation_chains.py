"""A log rotated any number of times between collects: every line is stored exactly once, or the
collect names what it could not find.

The rotations are logrotate's (``create``: the log renamed to ``app.log.1``, the older copies shifted
up; ``copytruncate``: copied to ``app.log.1``, then emptied in place), with ``compress`` (a copy
gzipped) and ``olddir`` (copies kept in another folder), and collects skipped in between.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.ingest_helpers import step_line, stored_steps
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset

_NUMBERED = re.compile(r"^app\.log\.(\d+)(\.gz)?$")


class Logs:
    """A log that is written, rotated and collected; it remembers every step written."""

    def __init__(self, root: Path, olddir: bool) -> None:
        self.folder = root / "logs"
        self.old = root / "old" if olddir else self.folder
        self.folder.mkdir(parents=True)
        self.old.mkdir(parents=True, exist_ok=True)
        self.log = self.folder / "app.log"
        self.log.touch()
        self.ds = Dataset(root / "ds")
        self.written: list[int] = []
        self.notes: list[str] = []
        self.deleted = False

    def write(self, lines: int) -> None:
        first = len(self.written) + 1
        steps = list(range(first, first + lines))
        with self.log.open("a") as fh:
            fh.writelines(step_line(s) for s in steps)
        self.written += steps

    def _shift(self, keep: int | None) -> None:
        """Number every copy up by one (``app.log.2.gz`` -> ``app.log.3.gz``), the highest first; a
        copy numbered past ``keep`` is deleted, as logrotate's ``rotate N``."""
        copies = sorted(
            ((int(m.group(1)), p) for p in self.old.iterdir() if (m := _NUMBERED.match(p.name))), reverse=True
        )
        for n, path in copies:
            if keep is not None and n + 1 > keep:
                path.unlink()
                self.deleted = True
                continue
            path.rename(self.old / path.name.replace(f".{n}", f".{n + 1}", 1))

    def rotate(self, copytruncate: bool, compress: bool, keep: int | None) -> None:
        self._shift(keep)
        first = self.old / "app.log.1"
        if copytruncate:
            shutil.copyfile(self.log, first)
            with self.log.open("r+") as fh:
                fh.truncate(0)
        else:
            self.log.rename(first)
            self.log.touch()
        if compress:
            with first.open("rb") as src, gzip.open(first.with_name("app.log.1.gz"), "wb") as dst:
                shutil.copyfileobj(src, dst)
            first.unlink()

    def collect(self) -> None:
        olddirs = (self.old,) if self.old != self.folder else ()
        spec = RunSpec(run_id="r", tier="BASIC", files=[self.log], olddirs=olddirs)
        result = collect_runs(self.ds, [spec], settle_s=0)
        assert not result.errors, result.errors
        self.notes += [note for s in result.sources for note in s.notes]


#: An operation: write N lines; rotate (copytruncate?, compress?); collect.
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.integers(1, 30)),
        st.tuples(st.just("rotate"), st.booleans(), st.booleans()),
        st.just(("collect",)),
    ),
    max_size=12,
)


def apply(logs: Logs, ops: list[tuple], keep: int | None = None) -> Logs:
    """Play ``ops`` on ``logs``: ``("write", n)``, ``("rotate", copytruncate, compress)``, ``("collect",)``."""
    for op in ops:
        if op[0] == "write":
            logs.write(op[1])
        elif op[0] == "rotate":
            logs.rotate(op[1], op[2], keep)
        else:
            logs.collect()
    return logs


def play(tmp_path: Path, ops: list[tuple], olddir: bool, keep: int | None) -> Logs:
    logs = apply(Logs(tmp_path, olddir), [("write", 5), ("collect",)])
    return apply(logs, [*ops, ("collect",)], keep)


ROTATE = ("rotate", False, False)  # logrotate's create: renamed to app.log.1, a new app.log


def test_two_rotations_between_collects_lose_nothing(tmp_path: Path) -> None:
    # The commands: 100 lines collected, 50 more, rotated; 50 in the new file, rotated again;
    # 50 in the newest. Before, steps 151-200 (app.log.1) were never stored.
    ops = [("write", 100), ("collect",), ("write", 50), ROTATE, ("write", 50), ROTATE, ("write", 50), ("collect",)]
    logs = apply(Logs(tmp_path, olddir=False), ops)
    assert stored_steps(logs.ds) == list(range(1, 251))


def test_a_predecessor_gone_is_named(tmp_path: Path) -> None:
    logs = apply(Logs(tmp_path, olddir=False), [("write", 10), ("collect",), ("write", 5), ROTATE])
    (logs.folder / "app.log.1").unlink()  # rotated away before it was read
    apply(logs, [("write", 5), ("collect",)])
    assert stored_steps(logs.ds) == [*range(1, 11), *range(16, 21)]
    assert any("any lines written to it after line 10 were not collected" in n for n in logs.notes)


@pytest.mark.parametrize("olddir", [False, True], ids=["same folder", "olddir"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_any_rotations_store_every_line_once(
    tmp_path_factory: pytest.TempPathFactory, olddir: bool, ops: list[tuple]
) -> None:
    logs = play(tmp_path_factory.mktemp("rot"), ops, olddir, keep=None)
    assert stored_steps(logs.ds) == logs.written  # each once: stored_steps keeps repeats


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_copies_deleted_by_the_rotation_count_are_named(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple]
) -> None:
    logs = play(tmp_path_factory.mktemp("rot"), ops, olddir=False, keep=2)
    stored = stored_steps(logs.ds)
    assert len(stored) == len(set(stored))  # never twice
    assert set(stored) <= set(logs.written)
    if set(stored) != set(logs.written):
        assert any("rotated away" in n for n in logs.notes), logs.notes


@pytest.mark.parametrize("given", [False, True], ids=["without --olddir", "with --olddir"])
def test_collect_files_olddir(tmp_path: Path, given: bool) -> None:
    from typer.testing import CliRunner

    from tierscope.cli import app

    logs = Logs(tmp_path, olddir=True)
    logs.write(10)
    argv = ["collect", "files", str(logs.log), "-d", str(logs.ds.root), "--run-id", "r", "--settle", "0"]
    argv += ["--olddir", str(logs.old)] if given else []
    assert CliRunner().invoke(app, argv).exit_code == 0
    logs.write(5)
    logs.rotate(copytruncate=False, compress=True, keep=None)  # app.log -> old/app.log.1.gz
    logs.write(5)
    done = CliRunner().invoke(app, argv)
    assert done.exit_code == 0, done.output
    said = "any lines written to it after line 10 were not collected" in " ".join(done.output.split())
    if given:
        assert stored_steps(logs.ds) == list(range(1, 21))
        assert not said
    else:  # the copy is in old/, not looked for: steps 11-15 are lost, and said
        assert stored_steps(logs.ds) == [*range(1, 11), *range(16, 21)]
        assert said
