"""The last lines of a file still being written, left unread until they are complete or the file settles.

A collect of a log it follows (one a collect has read before) that changed within the settle time (``--settle``)
leaves its undecided last lines (a report
whose next line may still join it: :meth:`~tierscope.collector.formats.base.LineFormat.undecided_from`, and a last
line without its newline) for a later collect, its position kept before them. The position says how many lines
it held (:attr:`~tierscope.collector.offsets.FileState.held_lines`) and the file's size and modification time once
they were read: while the file is still exactly that and has not settled, a collect has nothing new to read, and
says so without reading (:mod:`tierscope.collector.unchanged`); once it grows, or settles, they are read.

A file's first read takes every complete line as it is (a last line without its newline still waits: a live
writer's buffered output stops mid-line). Nothing tells a log still being written from a copy of an ended job's
(a download, an excerpt, a file written by a script a moment ago): both changed just now. The copy is what a first
read usually meets, and its user expects the whole of it; cron's first collect of a live log most often finds it
empty or short (an empty file's position is kept, so the lines after it are followed), and from then on the file is
followed with its open end held. The price: a first collect that lands between the two lines of one report (an
Estimator's ``global_step/sec`` line and the record it rates, printed together) stores a step-less report and a
record without its rate, where one collect of the whole stores one record; holding such a report would lose the last
report of every freshly downloaded log instead.

Standard library only: the "nothing new" path imports this.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from tierscope.collector.offsets import FileState

#: Seconds without change after which a file's held lines (an unterminated last line, a report whose next line is
#: not written yet; an event file's last step) are taken as they are.
DEFAULT_SETTLE_S = 300.0


#: Why a segment is read (:attr:`~tierscope.collector.offsets.Segment.why`) when no collect has read the file before
#: (or the user asked for it to be read again): such a read takes the file as it is, open end and all.
FIRST_READS = frozenset({"new", "reread"})


def settled(st: os.stat_result, settle_s: float) -> bool:
    """Whether a file (its ``os.stat``) has not changed for ``settle_s`` seconds: its writer has ended, or pauses."""
    return time.time() - st.st_mtime >= settle_s


def still_held(prev: FileState, st: os.stat_result, settle_s: float) -> bool:
    """Whether the file (``st``) is exactly as it was when ``prev`` held its last lines back, and has not settled
    since: the held lines would be held again, and there is nothing else to read."""
    return (
        prev.held_lines is not None
        and not prev.whole
        and (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (prev.device, prev.inode, prev.size, prev.mtime_ns)
        and not settled(st, settle_s)
    )


def unread_at_end(states: list[FileState], shown: Callable[[str], str] = str) -> list[tuple[str, str]]:
    """``(run id, sentence)`` for each file whose last collect held lines back (``states``: the dataset's file
    positions; ``shown``: a file's path as the sentence names it): what a summary of its run does not yet know,
    and how to read them."""
    notes = []
    for state in states:
        if state.held_lines:
            first, last = state.line + 1, state.line + state.held_lines
            lines, they = (f"line {first:,}", "it") if first == last else (f"lines {first:,}-{last:,}", "they")
            notes.append(
                (
                    state.run_id,
                    f"its last collect of {shown(state.path)} left {lines} unread: the file was still being written "
                    f"and {they} may be completed by lines not yet written (a report's next line, a failure's cause); "
                    "collect again once it has not changed for --settle seconds (300 by default), or with "
                    "--settle 0 if the job has ended",
                )
            )
    return notes


def held_note(first: int, lines: int, mtime_s: float, settle_s: float) -> str:
    """The one line a collect says of a file whose last ``lines`` lines, from line ``first`` on, it held back (the
    file changed at ``mtime_s``, seconds since the epoch)."""
    ago = max(0, round(time.time() - mtime_s))
    last, are = (
        (f"its last line ({first:,})", "is")
        if lines == 1
        else (f"its last {lines:,} lines ({first:,}-{first + lines - 1:,})", "are")
    )
    return (
        f"the file changed {ago} s ago: {last} may still be completed by lines not written yet, and {are} read "
        f"once it settles (--settle {settle_s:g} s), or now with --settle 0"
    )
