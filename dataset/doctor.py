"""``tierscope doctor``: find the dataset's unreadable files and, with ``fix``, move them aside.

Checks every data file (the digest in its name, footer, column types, every page with its
checksum, the row count) and every state document: each must be a JSON object, the compaction
journal a journal, and each document a room above keeps here (the collector's positions)
whatever that room's ``state_checks`` say: the dataset room knows how state is stored, not what
ingest puts in it. With ``fix`` each corrupt file is moved to ``quarantine/`` under its path
relative to the root, so the rest of the dataset reads again; nothing is deleted. For a data
file the collector is left a note to read its sources again (:mod:`tierscope.dataset.rewind`),
so the records it held are stored again. Moving a state document aside is safe: the next collect
re-reads its inputs from the start and skips what is stored. Even without ``fix``, a compaction
a killed run left half done is finished if the lock is free (that loses nothing and ends the
window in which plain readers miss its rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tierscope.dataset import journal, rewind
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.lock import locked, recover, recover_if_free
from tierscope.dataset.objects import GsPath
from tierscope.dataset.state import StateStore, move_aside
from tierscope.dataset.store import Dataset, all_files, check_file
from tierscope.dataset.verified import VerifiedFiles

#: A check of state documents: called with the dataset's state folder, it returns one
#: :class:`StateCorruptError` per document that is not what its writer writes (e.g.
#: :func:`tierscope.collector.positions.check_positions`, every position document), or raises one.
StateCheck = Callable[[Path], Iterable[StateCorruptError]]


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


def _state_problems(dataset: Dataset, state_checks: Sequence[StateCheck]) -> list[Problem]:
    found: dict[Path, Problem] = {}
    errors: list[StateCorruptError] = []
    # The callers' checks first: they say more ("not a file-offsets document") than JSON's own.
    for state_check in state_checks:
        try:
            errors += state_check(dataset.state_dir)
        except StateCorruptError as exc:
            errors.append(exc)
    store = StateStore(dataset.state_dir)
    loads: list[Callable[[], object]] = [lambda: journal.load(dataset.root)]
    loads += [lambda name=name: store.load(name) for name in store.names()]
    for load in loads:
        try:
            load()
        except StateCorruptError as exc:
            errors.append(exc)
    for exc in errors:
        found.setdefault(exc.path, Problem(exc.path, exc.problem))
    return list(found.values())


def finish_interrupted(dataset: Dataset) -> list[str]:
    """Finish the compactions a killed run left half done, if the lock is free; a note if any."""
    if dataset.holding_lock:
        return []
    done = recover_if_free(dataset)
    return [f"finished {done} compaction(s) a killed run had left half done"] if done else []


def fix_problems(dataset: Dataset, report: DoctorReport) -> None:
    """Move each corrupt file of ``report`` to quarantine and, for a data file, leave the
    collector a note to read its sources again (:mod:`tierscope.dataset.rewind`); a note each.
    Call holding the lock."""
    rewinds = []
    for problem in report.problems:
        problem.moved_to = quarantine(dataset, problem.path)
        wanted = rewind.for_quarantined(dataset.root, problem.path, problem.moved_to)
        if wanted is not None:
            rewinds.append(wanted)
            report.notes.append(f"{problem.path} held records of run {wanted.run_id!r}: {wanted.describe()}")
    rewind.add(dataset.root, rewinds)


def check(dataset: Dataset, state_checks: Sequence[StateCheck] = ()) -> DoctorReport:
    """Check every data file and state document of ``dataset`` (read only, no lock; only a
    compaction a killed run left half done is finished, if the lock is free); ``state_checks``
    check the documents other rooms keep there (see :data:`StateCheck`)."""
    report = DoctorReport()
    report.notes += finish_interrupted(dataset)
    for table, path in all_files(dataset):
        try:
            problem = check_file(path, table, deep=True)
        except FileNotFoundError:
            continue  # replaced by a compaction running meanwhile
        report.checked += 1
        if problem:
            report.problems.append(Problem(path, problem))
    if report.problems and not isinstance(dataset.root, GsPath):
        # Damage under an unchanged stamp: the digest cache would let readers read it on its word.
        cache = VerifiedFiles(dataset.root)
        cache.forget([p.path for p in report.problems])
        cache.save()
    states = _state_problems(dataset, state_checks)
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
    return move_aside(dataset.root, path)


def doctor(
    dataset: Dataset, fix: bool = False, lock_timeout: float = 60.0, state_checks: Sequence[StateCheck] = ()
) -> DoctorReport:
    """Check ``dataset`` (:func:`check`); with ``fix``, under the lock, quarantine each corrupt
    file and then finish what a killed writer left (temporary files, interrupted compactions).

    Raises :class:`~tierscope.dataset.errors.DatasetBusyError` if ``fix`` cannot get the lock.
    """
    if not fix:
        return check(dataset, state_checks)
    with locked(dataset, lock_timeout, recover_first=False):
        report = check(dataset, state_checks)
        fix_problems(dataset, report)
        done = recover(dataset)
        if done:
            report.notes.append(f"finished {done} compaction(s) a killed run had left half done")
        report.notes += dataset.notices
    return report
