"""Where a cron collect's fixed cost goes: the imports of each path as whole processes, CPU seconds.

Beside :mod:`benchmarks.incremental`'s two collects, each of these is a process that imports what one part of
them imports and nothing else, the commands taking turns ``repeat`` times (medians, as the collects'): the
interpreter alone; the quiet cron path's modules (:mod:`tierscope.cron`, the nothing-new check and its lock);
those and the small append's (:mod:`tierscope.collector.small_collect`, pyarrow's writer without numpy); and
what the command line adds where it builds the command (typer and :mod:`tierscope.cli.collect`). A collect's
CPU less its path's imports is its work: reading the state, the parse, verifying the run's files, the write.
"""

from __future__ import annotations

from benchmarks.measure import Proc, middle, python, run
from benchmarks.table import Figure

SECTION = "ingest"
#: Runs of each process: a median of fewer moves with every other process on the machine.
MIN_RUNS = 5

#: (figure's name, Python statements) of each process, each importing what the one before it does and more.
PIECES: tuple[tuple[str, str], ...] = (
    ("the interpreter alone (python -c pass)", "pass"),
    ("+ the cron path's modules (tierscope.cron, the nothing-new check, the lock)",
     "import tierscope.stopping, tierscope.cron, tierscope.collector.runs, tierscope.collector.unchanged"),
    ("+ the small append's modules and pyarrow's writer without numpy",
     "import tierscope.stopping, tierscope.cron, tierscope.collector.runs, tierscope.collector.unchanged, "
     "tierscope.collector.small_collect\n"
     "from tierscope.dataset.store_options import import_writer_without_numpy\n"
     "import_writer_without_numpy('pyarrow._parquet')"),
    ("the command line instead (typer, tierscope.cli.collect, the nothing-new check)",
     "import tierscope.stopping, tierscope.cli, tierscope.cli.collect, tierscope.collector.runs, "
     "tierscope.collector.unchanged"),
)  # fmt: skip


def measure(repeat: int) -> list[Figure]:
    """One figure per :data:`PIECES`, CPU seconds of the median run (wall beside it)."""
    runs: list[list[Proc]] = [[] for _ in PIECES]
    for _ in range(max(repeat, MIN_RUNS)):
        for procs, (_, code) in zip(runs, PIECES, strict=True):
            procs.append(run(python("-c", code)))
    figures = []
    for procs, (name, _) in zip(runs, PIECES, strict=True):
        mid = middle(procs)
        figures.append(
            Figure(SECTION, f"cron collect's fixed cost: {name}, whole process", "CPU-s", mid.cpu_s,
                   higher_is_better=False, extra={"all_cpu_s": [p.cpu_s for p in procs]}, wall_s=mid.wall_s,
                   load_1m=mid.load_1m)
        )  # fmt: skip
    return figures
