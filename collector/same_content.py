"""The same log collected under two run ids: told, not refused (a user may mean it: one log, two views of a run).

A file's position (:class:`~tierscope.collector.offsets.FileState`) keeps its fingerprint: its size and the SHA-256
of its first and last :data:`~tierscope.collector.offsets.FINGERPRINT_BYTES`. A file a collect read for the first
time whose fingerprint is another run's file's holds the same text (a copy, a link, the same path given under
another ``--run-id``): its records are stored under both runs, and every summary counts them twice.
"""

from __future__ import annotations

from tierscope.collector.offsets import FileState


def _fingerprint(state: FileState) -> tuple[int, str, int, str]:
    return (state.size, state.head_sha256, state.tail_len, state.tail_sha256)


def same_content(read: FileState, states: list[FileState]) -> FileState | None:
    """The first of ``states`` (the dataset's file positions) of another run whose file held what ``read`` (the
    position a collect just saved) holds, when both were read to their ends; None if none did."""
    if read.size == 0 or read.offset < read.size:
        return None  # read in part (lines held back): compared once whole
    for state in states:
        if state.run_id != read.run_id and state.offset == state.size and _fingerprint(state) == _fingerprint(read):
            return state
    return None


def same_content_warning(read: FileState, other: FileState) -> str:
    """The one line of a log (``read``) stored under a second run (``other``'s file holding the same text)."""
    where = "the same file" if other.path == read.path else other.path
    return (
        f"{read.path} (run {read.run_id}) looks like the same log as {where} (same size, same first and last 4 KiB), "
        f"collected as run {other.run_id}: its records are now stored under both runs, and counted in each; if it is "
        "one run, collect it into a new dataset under one run id"
    )
