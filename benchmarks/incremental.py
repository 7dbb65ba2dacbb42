"""Ingest, the cron case: what a ``collect files`` costs when the log grew a little since the last
one, and when it did not grow at all, on the ingest section's generated log.

The log's first lines but the last :data:`ADDED_LINES` are collected once (not measured) and that
dataset kept; each round puts the dataset and the log back as they were after it (the log cut back
in place, so its file is the one the offsets name), appends the last lines, runs the collect that
takes them, then one more that finds nothing new; then a part of the next line, without its newline, as a job
writing its log leaves it (a progress bar's drawing), a collect that holds it back, and one more that finds
nothing new but that held line (:mod:`tierscope.collector.held`): a cron job's usual collect of a live log.
CPU seconds (the child's rusage), medians of the rounds: a fixed cost, which other load on the machine moves
little.

A dataset put back as a copy is one whose files no reader has verified yet (a copy has new inodes and
status-change times: :mod:`tierscope.dataset.verified`), so each of those rounds hashes every data file
of the run, as the first collect after a copy or a restore does. A cron job's collects find them
verified: the steady rounds (:func:`steady`) run one collect after another on one dataset, each taking
the next :data:`ADDED_LINES` lines, after one round that verifies what the first collect wrote. Beside
them, the imports of each path (:mod:`benchmarks.fixed_cost`): what of the collects is fixed cost.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import fixed_cost
from benchmarks.generate import LogFile
from benchmarks.measure import BenchError, Proc, middle, run, tierscope
from benchmarks.table import Figure, Target
from tierscope.dataset.verified import RACY_S

SECTION = "ingest"
#: Lines a log grows by between two collects.
ADDED_LINES = 10_000
#: Targets, CPU seconds: a collect of the added lines, and one that finds nothing new.
MAX_ADDED_CPU_S = 0.25
MAX_NOTHING_NEW_CPU_S = 0.1
#: The start of a record without its newline: what a job writing its log may leave at its end.
HELD_PART = b"Train [worker/1], step 999999:loss:0.071, accur"


def _collect(log: Path, dataset: Path, run_id: str) -> Proc:
    return run(
        tierscope("collect", "files", log, "--dataset", dataset, "--run-id", run_id, "--tier", "STANDARD_1", "-q")
    )


def _cut(path: Path, lines: int) -> int:
    """The byte offset just past ``path``'s first ``lines`` lines."""
    with path.open("rb") as handle:
        for _ in range(lines):
            if not handle.readline():
                raise BenchError(f"{path} has fewer than {lines} lines")
        return handle.tell()


def measure(work: Path, log: LogFile, repeat: int, run_id: str, check: Callable[[Path, LogFile], None]) -> list[Figure]:
    """The two figures, from ``repeat`` rounds on ``log`` (collected into fresh datasets under ``work``),
    and the two of :func:`steady` beside them; ``check(dataset, log)`` raises unless the first round's
    dataset holds exactly the log's records."""
    if log.lines <= ADDED_LINES:
        return []
    base, dataset = work / "incremental-base-ds", work / "incremental-ds"
    grown = work / "incremental.log"
    cut = _cut(log.path, log.lines - ADDED_LINES)
    with log.path.open("rb") as source:
        source.seek(cut)
        added = source.read()
    shutil.copyfile(log.path, grown)
    added_runs: list[Proc] = []
    none_runs: list[Proc] = []
    held_runs: list[Proc] = []
    try:
        os.truncate(grown, cut)
        shutil.rmtree(base, ignore_errors=True)
        _collect(grown, base, run_id)
        for _ in range(repeat):
            shutil.rmtree(dataset, ignore_errors=True)
            shutil.copytree(base, dataset)
            os.truncate(grown, cut)
            with grown.open("ab") as out:
                out.write(added)
            added_runs.append(_collect(grown, dataset, run_id))
            none_runs.append(_collect(grown, dataset, run_id))
            if len(added_runs) == 1:
                check(dataset, log)
            with grown.open("ab") as out:
                out.write(HELD_PART)
            _collect(grown, dataset, run_id)
            held_runs.append(_collect(grown, dataset, run_id))
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(dataset, ignore_errors=True)
        grown.unlink(missing_ok=True)
    lines = f"{log.lines - ADDED_LINES:,}-line log"
    held = middle(held_runs)
    return [
        *_figures(added_runs, none_runs, lines, ""),
        Figure(
            SECTION,
            f"collect files with nothing new but a last line without its newline, held back ({lines}), whole process",
            "CPU-s",
            held.cpu_s,
            higher_is_better=False,
            targets=(Target("<", MAX_NOTHING_NEW_CPU_S),),
            extra={"all_cpu_s": [p.cpu_s for p in held_runs]},
            wall_s=held.wall_s,
            load_1m=held.load_1m,
        ),
        *steady(work, log, repeat, run_id, check),
        *fixed_cost.measure(repeat),
    ]


def steady(work: Path, log: LogFile, repeat: int, run_id: str, check: Callable[[Path, LogFile], None]) -> list[Figure]:
    """The cron case without a restore between rounds: the log's lines but the last ``repeat + 1`` times
    :data:`ADDED_LINES` collected once, then (after :data:`~tierscope.dataset.verified.RACY_S`, so that its
    files can be noted verified) one unmeasured collect of the next lines, then ``repeat`` rounds each
    adding the next lines, collecting them and collecting once more with nothing new. No target: the
    targets are the restored rounds' (:func:`measure`)."""
    first = log.lines - (repeat + 1) * ADDED_LINES
    if first <= 0:
        return []
    dataset, grown = work / "incremental-steady-ds", work / "incremental-steady.log"
    ends = [_cut(log.path, first + i * ADDED_LINES) for i in range(repeat + 2)]
    added_runs: list[Proc] = []
    none_runs: list[Proc] = []
    try:
        shutil.rmtree(dataset, ignore_errors=True)
        with log.path.open("rb") as source, grown.open("wb") as out:
            out.write(source.read(ends[0]))
        _collect(grown, dataset, run_id)
        time.sleep(RACY_S)
        with log.path.open("rb") as source:
            for i in range(repeat + 1):
                source.seek(ends[i])
                with grown.open("ab") as out:
                    out.write(source.read(ends[i + 1] - ends[i]))
                added = _collect(grown, dataset, run_id)
                nothing = _collect(grown, dataset, run_id)
                if i:  # the first round verifies the files the first collect wrote, as a cron job's first does
                    added_runs.append(added)
                    none_runs.append(nothing)
        check(dataset, log)
    finally:
        shutil.rmtree(dataset, ignore_errors=True)
        grown.unlink(missing_ok=True)
    lines = f"{first + ADDED_LINES:,}-line log and growing, no restore between rounds"
    return _figures(added_runs, none_runs, lines, "steady: ")


def _figures(added_runs: list[Proc], none_runs: list[Proc], lines: str, prefix: str) -> list[Figure]:
    added_mid, none_mid = middle(added_runs), middle(none_runs)
    targets = not prefix
    return [
        Figure(SECTION, f"{prefix}collect files of {ADDED_LINES:,} lines added to a {lines}, whole process",
               "CPU-s", added_mid.cpu_s, higher_is_better=False,
               targets=(Target("<=", MAX_ADDED_CPU_S),) if targets else (),
               extra={"all_cpu_s": [p.cpu_s for p in added_runs], "peak_rss_mb": added_mid.peak_rss_mb},
               wall_s=added_mid.wall_s, load_1m=added_mid.load_1m),
        Figure(SECTION, f"{prefix}collect files with nothing new after it ({lines}), whole process", "CPU-s",
               none_mid.cpu_s, higher_is_better=False,
               targets=(Target("<", MAX_NOTHING_NEW_CPU_S),) if targets else (),
               extra={"all_cpu_s": [p.cpu_s for p in none_runs]}, wall_s=none_mid.wall_s, load_1m=none_mid.load_1m),
    ]  # fmt: skip
