"""The compaction journal: which data files a compacted file replaces.

``state/compactions.json`` holds ``{"generation": int, "entries": [entry, ...]}``; an entry
is ``{"dir": "steps/run_id=x", "merged": "part-m.parquet", "replaces": ["part-a.parquet", ...]}``
(paths relative to the dataset root). The protocol, which keeps every record visible
exactly once to :meth:`tierscope.dataset.store.Dataset.files` at every instant:

1. compact writes the merged file under a temporary name (ignored by readers);
2. adds the entry to the journal (generation + 1);
3. renames the merged file in. From here on readers drop the replaced files: the rule is
   *an entry whose merged file exists hides the files it replaces* (checked after listing,
   so a listing that missed the merged file gets it added, see :func:`live_files`);
4. deletes the replaced files;
5. removes the entry (generation + 1).

A crash before 3 leaves an entry whose merged file does not exist: readers ignore it and the
next collect or compact drops it with the temporary file. A crash after 3 leaves an entry
whose merged file exists: readers honour it and the next collect or compact finishes steps
4 and 5. Readers read the generation before and after listing a directory and list again if
it changed, so a listing never mixes the states before and after a journal change. The
journal file is never deleted once written: a missing file and an emptied one must differ.

Readers that do not know the journal (DuckDB, pandas) can see a compacted partition's rows
twice between steps 3 and 4, a window of milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tierscope.dataset.durable import fsync_dir
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.state import StateStore

JOURNAL_NAME = "compactions"


@dataclass(frozen=True)
class Entry:
    """One compaction: ``merged`` replaces ``replaces``, all in directory ``dir`` (relative to the root)."""

    dir: str
    merged: str
    replaces: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"dir": self.dir, "merged": self.merged, "replaces": list(self.replaces)}


@dataclass
class Journal:
    generation: int = 0
    entries: list[Entry] = field(default_factory=list)


def _store(root: Path) -> StateStore:
    return StateStore(root / "state")


def load(root: Path) -> Journal:
    """The journal of the dataset at ``root`` (empty if none). Raises :class:`StateCorruptError`."""
    store = _store(root)
    doc = store.load(JOURNAL_NAME)
    if doc is None:
        return Journal()
    try:
        entries = [Entry(e["dir"], e["merged"], tuple(e["replaces"])) for e in doc["entries"]]
        return Journal(int(doc["generation"]), entries)
    except (KeyError, TypeError, ValueError) as exc:
        raise StateCorruptError(store.path(JOURNAL_NAME), f"is not a compaction journal ({exc!r})") from exc


def save(root: Path, journal: Journal) -> None:
    """Write ``journal`` with the next generation number (atomically, durably)."""
    journal.generation += 1
    doc = {"generation": journal.generation, "entries": [e.to_json() for e in journal.entries]}
    _store(root).save(JOURNAL_NAME, doc)


def live_files(root: Path, journal: Journal, scope: Path, listed: list[Path]) -> list[Path]:
    """``listed`` (the part files found under ``scope``) as readers must see them, sorted.

    For each entry whose merged file exists *now* (checked after listing), the files it
    replaces are dropped and the merged file is added if the listing missed it (it was
    renamed in after the listing read its directory).
    """
    live = set(listed)
    for entry in journal.entries:
        base = root / entry.dir
        merged = base / entry.merged
        if merged.exists():
            live.difference_update(base / name for name in entry.replaces)
            if base == scope or scope in base.parents:
                live.add(merged)
    return sorted(live)


def finish(root: Path) -> int:
    """Complete or drop every interrupted compaction (call holding the lock); returns how many.

    An entry whose merged file exists gets its replaced files deleted; one whose merged file
    does not exist is dropped (its replaced files stay authoritative).
    """
    journal = load(root)
    if not journal.entries:
        return 0
    for entry in journal.entries:
        base = root / entry.dir
        if (base / entry.merged).exists():
            delete_replaced([base / name for name in entry.replaces])
    done = len(journal.entries)
    journal.entries = []
    save(root, journal)
    return done


def delete_replaced(files: list[Path]) -> None:
    """Delete the files a compaction replaced (step 4), durably."""
    for path in files:
        path.unlink(missing_ok=True)
    if files:
        # The deletions must be durable before the entry that hides the files goes.
        fsync_dir(files[0].parent)
