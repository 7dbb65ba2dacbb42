"""The data files whose digest a reader has checked, remembered across processes.

Every reader checks a data file's bytes against the SHA-256 in its name before reading it
(:meth:`tierscope.dataset.store.Dataset.verify`): on 10 M records that is 0.5-1 s of every
``summary``, re-done by each command although a data file is never rewritten once committed
(appends and compactions write new names). So a reader notes each file it verified in
``state/digests.cache`` (:data:`CACHE_NAME`, JSON ``{"version": 1, "files": {path: stamp}}``),
and the next reader skips the hash of a file whose stamp is unchanged.

The stamp is the file's size, modification and status-change times (ns), inode and device.
Anything that writes the file's bytes through the file system changes its mtime and ctime (the
ctime no tool can set back: ``touch -d`` and ``cp -p`` set the mtime only), and a file put in its
place under the same name has another inode: either way it is hashed again. A file is noted
only when it was last changed more than :data:`RACY_S` before its hash began (as git treats
"racily clean" index entries): a write within one tick of the file system's clock after the
hash could otherwise leave the stamp as it was. What the cache cannot see is damage that
bypasses the file system (a failing disk flipping bits under an unchanged stamp): ``tierscope
doctor`` hashes every file and decodes every page whatever the cache says.

The cache is only a shortcut: unreadable, foreign or missing, it is ignored and rewritten; a
reader that cannot write it (a read-only dataset) goes on without it. Local datasets only (an
object on Cloud Storage is downloaded whole by the reader anyway, and its copy hashed then).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tierscope.dataset.durable import read_regular, write_bytes_atomic
from tierscope.dataset.state import state_dir

#: The cache's file under the dataset's ``state/`` folder (not a ``.json`` state document: doctor
#: and the collector's state checks leave it alone).
CACHE_NAME = "digests.cache"
VERSION = 1
#: A file changed less than this many seconds before its hash began is not noted (see the module
#: doc); covers the coarsest file-system clock in use (FAT: 2 s) and a little clock skew.
RACY_S = 5.0
#: A larger cache is not read (about 200 bytes a file: some 300,000 files).
MAX_BYTES = 64 << 20

Stamp = tuple[int, int, int, int, int]


def stamp_of(st: os.stat_result) -> Stamp:
    """What must stay the same for a verified file to count as unchanged."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


class VerifiedFiles:
    """The cache of the local dataset at ``root``: loaded on first use, saved by :meth:`save`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = state_dir(root) / CACHE_NAME
        self._files: dict[str, Stamp] | None = None
        self._changed = False

    def _key(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def _loaded(self) -> dict[str, Stamp]:
        if self._files is None:
            self._files = {}
            try:
                data = read_regular(self.path, MAX_BYTES, follow_links=False)
                doc = json.loads(data) if data is not None else None
            except (OSError, ValueError, RecursionError):
                doc = None
            if isinstance(doc, dict) and doc.get("version") == VERSION and isinstance(doc.get("files"), dict):
                self._files = {
                    k: tuple(v)
                    for k, v in doc["files"].items()
                    if isinstance(v, list) and len(v) == 5 and all(type(x) is int for x in v)
                }  # type: ignore[misc]
        return self._files

    def holds(self, path: Path, st: os.stat_result) -> bool:
        """Whether ``path`` (a data file of the dataset, its stat ``st``) was verified as it is now."""
        return self._loaded().get(self._key(path)) == stamp_of(st)

    def note(self, path: Path, st: os.stat_result, hashed_at_ns: int) -> None:
        """Remember that ``path``, stat ``st`` taken before its hash began at ``hashed_at_ns``
        (``time.time_ns()``), matched its digest; unless it changed within :data:`RACY_S` of that."""
        if hashed_at_ns - max(st.st_mtime_ns, st.st_ctime_ns) <= RACY_S * 1e9:
            return
        files = self._loaded()
        key = self._key(path)
        if files.get(key) != stamp_of(st):
            files[key] = stamp_of(st)
            self._changed = True

    def forget(self, paths: list[Path]) -> None:
        """Drop the entries of ``paths`` (data files of the dataset): files found corrupt (by doctor),
        which every reader must hash again, and refuse, whatever their stamp."""
        files = self._loaded()
        for key in {self._key(p) for p in paths} & files.keys():
            del files[key]
            self._changed = True

    def forget_missing(self, table: str, live: list[Path]) -> None:
        """Drop the entries of ``table`` that are not among ``live`` (every live file of the table):
        files a compaction removed."""
        files = self._loaded()
        keep = {self._key(p) for p in live}
        gone = [k for k in files if k.startswith(f"{table}/") and k not in keep]
        for k in gone:
            del files[k]
        self._changed = self._changed or bool(gone)

    def save(self) -> None:
        """Write the cache if it changed; a failure (read-only dataset, disk full) is ignored."""
        if not self._changed or self._files is None:
            return
        doc = {"version": VERSION, "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": self._files}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, json.dumps(doc, separators=(",", ":"), sort_keys=True).encode())
        except OSError:
            return
        self._changed = False
