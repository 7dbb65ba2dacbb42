"""``tierscope doctor``: find the dataset's unreadable files and, with ``fix``, move them aside.

Checks every data file (footer, column types, every page) and every state document. With
``fix`` each corrupt file is moved to ``quarantine/`` under its path relative to the root,
so the rest of the dataset reads again; nothing is deleted. Moving a state document aside
is safe: the next collect re-reads its inputs from the start and skips what is stored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tierscope.collector.offsets import OffsetStore
from tierscope.dataset import journal
from tierscope.dataset.durable import fsync_dir
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.lock import locked, recover
from tierscope.dataset.state import StateStore
from tierscope.dataset.store import Dataset, all_files, check_file


@dataclass
class Problem:
    """One unreadable file: its path, what is wrong, and where ``fix`` moved it (or None)."""

    path: Path
    problem: str
    moved_to: Path | None = None


@dataclass
class DoctorReport:
    """``checked`` files, the ``problems`` found, and notes (temporary files, pending compactions)."""

    checked: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        """True if nothing is (left) unreadable."""
        return all(p.moved_to is not None for p in self.problems)


def _state_problems(dataset: Dataset) -> list[Problem]:
    found: dict[Path, Problem] = {}
    store = StateStore(dataset.state_dir)
    checks = [lambda: OffsetStore(dataset.state_dir), lambda: journal.load(dataset.root)]
    checks += [lambda name=name: store.load(name) for name in store.names()]
    for run_check in checks:
        try:
            run_check()
        except StateCorruptError as exc:
            found.setdefault(exc.path, Problem(exc.path, exc.problem))
    return list(found.values())


def check(dataset: Dataset) -> DoctorReport:
    """Check every data file and state document of ``dataset`` (read only, no lock)."""
    report = DoctorReport()
    for table, path in all_files(dataset):
        try:
            problem = check_file(path, table, deep=True)
        except FileNotFoundError:
            continue  # replaced by a compaction running meanwhile
        report.checked += 1
        if problem:
            report.problems.append(Problem(path, problem))
    states = _state_problems(dataset)
    report.checked += len(list(dataset.state_dir.glob("*.json"))) if dataset.state_dir.is_dir() else 0
    report.problems += states
    temps = dataset.temp_files()
    if temps:
        report.notes.append(f"{len(temps)} temporary file(s) left by a killed run; the next collect removes them")
    try:
        pending = journal.load(dataset.root).entries
    except StateCorruptError:
        pending = []
    if pending:
        report.notes.append(f"{len(pending)} interrupted compaction(s); the next collect or compact finishes them")
    return report


def quarantine(dataset: Dataset, path: Path) -> Path:
    """Move ``path`` to ``quarantine/`` under its path relative to the root (never overwriting)."""
    target = dataset.quarantine_dir / path.relative_to(dataset.root)
    target.parent.mkdir(parents=True, exist_ok=True)
    n = 1
    while target.exists():
        target = target.with_name(f"{path.name}.{n}")
        n += 1
    os.replace(path, target)
    fsync_dir(target.parent)
    fsync_dir(path.parent)
    return target


def doctor(dataset: Dataset, fix: bool = False, lock_timeout: float = 60.0) -> DoctorReport:
    """Check ``dataset``; with ``fix``, under the lock, quarantine each corrupt file and then
    finish what a killed writer left (temporary files, interrupted compactions).

    Raises :class:`~tierscope.collector.errors.DatasetBusyError` if ``fix`` cannot get the lock.
    """
    if not fix:
        return check(dataset)
    with locked(dataset, lock_timeout, recover_first=False):
        report = check(dataset)
        for problem in report.problems:
            problem.moved_to = quarantine(dataset, problem.path)
        recover(dataset)
    return report
