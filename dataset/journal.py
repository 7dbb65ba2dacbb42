"""The compaction journal: which data files a compacted file replaces.

``state/compactions.json`` holds ``{"generation": int, "entries": [entry, ...]}``; an entry
is ``{"dir": "steps/run_id=x", "merged": "part-m.parquet", "staged": ".merged-part-m.parquet",
"replaces": ["part-a.parquet", ...]}`` (paths relative to the dataset root). The protocol
keeps every record visible exactly once to :meth:`tierscope.dataset.store.Dataset.files` at
every instant, and never twice to a reader that knows nothing of the journal (a plain
``part-*.parquet`` glob in polars, DuckDB or pandas):

1. compact writes the merged file under its *staged* name (``.merged-part-...``: dot-prefixed,
   so plain readers and ``part-*`` globs skip it), fsyncs it, and records in its footer the
   names it replaces;
2. adds the entry to the journal (generation + 1);
3. deletes the replaced files. From step 2 on tierscope's readers read the staged file instead
   of the replaced ones: the rule is *an entry whose staged or merged file exists hides the
   files it replaces, and its existing file is read* (checked after listing, see
   :func:`live_files`);
4. renames the staged file to its ``part-*`` name;
5. removes the entry (generation + 1).

A plain reader sees the replaced files until step 3, none of the partition's rows of this
compaction between steps 3 and 4 (milliseconds, the deletions and one rename), then the merged
file: never a record twice. A crash before 2 leaves a staged file no entry names, with every
file it replaces still there: the next command deletes it. A crash after 2 leaves an entry
whose staged (or merged) file exists: the next command of any kind (collect, compact,
``doctor``, or a reader that finds the lock free, :func:`tierscope.dataset.lock.recover_if_free`)
finishes steps 3 to 5. If the journal itself is lost, the staged file's footer still names
what it replaces (:func:`finish_orphans`): some of them gone means step 3 had begun, so it is
finished; all of them there means it had not, so the staged file is deleted.

Readers read the generation before and after listing a directory and list again if it
changed, so a listing never mixes the states before and after a journal change; a file that
vanishes between listing and opening (step 3 or 4) makes them list again. The journal file is
never deleted once written: a missing file and an emptied one must differ.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tierscope.dataset.durable import commit, fsync_dir, remove
from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.objects import local_file
from tierscope.dataset.state import StateStore, state_dir

JOURNAL_NAME = "compactions"
#: Prefix of a merged file not yet renamed in (step 1): hidden from plain readers.
STAGED_PREFIX = ".merged-"
#: Footer key of a staged file: the JSON list of the file names it replaces.
REPLACES_KEY = b"tierscope.replaces"


@dataclass(frozen=True)
class Entry:
    """One compaction: ``merged`` replaces ``replaces``, all in directory ``dir`` (relative to the root).

    ``staged`` is the merged file's name until step 4 (None in entries written before staging
    existed, when the merged file was renamed in before the deletions).
    """

    dir: str
    merged: str
    replaces: tuple[str, ...]
    staged: str | None = None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"dir": self.dir, "merged": self.merged, "replaces": list(self.replaces)}
        if self.staged is not None:
            doc["staged"] = self.staged
        return doc

    def existing(self, root: Path) -> Path | None:
        """The entry's merged file as it exists now (staged or renamed in), or None."""
        base = root / self.dir
        for name in (self.staged, self.merged):
            if name is not None and (base / name).exists():
                return base / name
        return None


@dataclass
class Journal:
    generation: int = 0
    entries: list[Entry] = field(default_factory=list)


def _store(root: Path) -> StateStore:
    return StateStore(state_dir(root))


def load(root: Path) -> Journal:
    """The journal of the dataset at ``root`` (empty if none). Raises :class:`StateCorruptError`."""
    store = _store(root)
    doc = store.load(JOURNAL_NAME)
    if doc is None:
        return Journal()
    try:
        entries = [Entry(e["dir"], e["merged"], tuple(e["replaces"]), e.get("staged")) for e in doc["entries"]]
        return Journal(int(doc["generation"]), entries)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise StateCorruptError(store.path(JOURNAL_NAME), f"is not a compaction journal ({exc!r})") from exc


def save(root: Path, journal: Journal) -> None:
    """Write ``journal`` with the next generation number (atomically, durably)."""
    journal.generation += 1
    doc = {"generation": journal.generation, "entries": [e.to_json() for e in journal.entries]}
    _store(root).save(JOURNAL_NAME, doc)


def live_files(root: Path, journal: Journal, scope: Path, listed: list[Path]) -> list[Path]:
    """``listed`` (the part files found under ``scope``) as readers must see them, sorted.

    For each entry whose staged or merged file exists *now* (checked after listing), the
    files it replaces are dropped and that file is added if the listing missed it (staged
    files are never listed; a merged file renamed in after the listing read its directory).
    """
    live = set(listed)
    for entry in journal.entries:
        base = root / entry.dir
        current = entry.existing(root)
        if current is not None:
            live.difference_update(base / name for name in entry.replaces)
            if entry.staged is not None:
                live.discard(base / entry.staged)
                live.discard(base / entry.merged)  # on Cloud Storage step 4 is a copy: both exist a moment
            if base == scope or scope in base.parents:
                live.add(current)
    return sorted(live)


def finish(root: Path) -> int:
    """Complete or drop every interrupted compaction (call holding the lock); returns how many.

    An entry whose staged or merged file exists gets its replaced files deleted and its
    staged file renamed in; one with neither is dropped (its replaced files stay
    authoritative). Staged files no entry names are then settled by :func:`finish_orphans`.
    """
    journal = load(root)
    done = 0
    if journal.entries:
        for entry in journal.entries:
            settle(root, entry)
        done = len(journal.entries)
        journal.entries = []
        save(root, journal)
    return done + finish_orphans(root)


def settle(root: Path, entry: Entry) -> None:
    """Steps 3 and 4 of ``entry`` (idempotent: each is skipped once done)."""
    base = root / entry.dir
    if entry.existing(root) is None:
        return
    delete_replaced([base / name for name in entry.replaces])
    if entry.staged is not None and (base / entry.staged).exists():
        commit(base / entry.staged, base / entry.merged)


def finish_orphans(root: Path) -> int:
    """Settle staged files that no journal entry names (a crash before step 2, or a lost journal).

    A staged file whose footer names replaced files of which some are gone had begun step 3:
    it is finished (the rest deleted, the file renamed in). Otherwise every replaced file is
    there (or the footer is unreadable) and the staged file is deleted: nothing is lost.
    """
    settled = 0
    for staged in sorted(root.glob(f"*/run_id=*/{STAGED_PREFIX}*")):
        import pyarrow.parquet as pq  # only when a staged file is left: keeps pyarrow off every collect's start-up

        try:
            with local_file(staged) as copy:
                meta = pq.read_metadata(copy).metadata or {}
            replaces = [str(name) for name in json.loads(meta[REPLACES_KEY])]
        except Exception:  # an unreadable staged file holds nothing the replaced files lack
            replaces = []
        base = staged.parent
        if replaces and any(not (base / name).exists() for name in replaces):
            entry = Entry(base.relative_to(root).as_posix(), staged.name[len(STAGED_PREFIX) :], tuple(replaces))
            delete_replaced([base / name for name in entry.replaces])
            commit(staged, base / entry.merged)
        else:
            remove(staged)
        settled += 1
    return settled


def delete_replaced(files: list[Path]) -> None:
    """Delete the files a compaction replaced (step 3), durably."""
    for path in files:
        path.unlink(missing_ok=True)
    if files:
        # The deletions must be durable before the staged file takes their place.
        fsync_dir(files[0].parent)
