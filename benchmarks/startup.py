"""Section (e): start-up. ``tierscope --help`` as a whole process, beside the interpreter's floor
(``python -c pass``) and beside what the command room imported for ``--help`` before it imported
lazily (:data:`OLD_HELP_IMPORTS`); and a ``collect files`` that finds nothing new, the cost a cron
job pays every few minutes."""

from __future__ import annotations

import dataclasses
import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks.generate import write_cloudml_log
from benchmarks.measure import BenchError, Proc, best, python, run, tierscope
from benchmarks.table import Figure, Target

SECTION = "start-up"
#: Targets: --help under 0.15 s, at least 2x faster than the old import set.
MAX_HELP_S = 0.15
MIN_HELP_RATIO = 2.0
#: A collect that finds nothing new (a cron job's usual run) under 0.2 s.
MAX_NOTHING_NEW_S = 0.2
#: Start-up figures are a tenth of a second: many runs, the fastest counts.
MIN_RUNS = 10
#: The modules ``tierscope --help`` loaded at module level before the command room imported
#: lazily (commit 40c568f, from ``python -X importtime -m tierscope --help``): typer's rich help,
#: polars and numpy, and the rooms the command modules imported for their options and helpers.
OLD_HELP_IMPORTS = (
    "typer", "typer.rich_utils", "rich.table", "polars", "numpy",
    "tierscope.analysis.summary", "tierscope.analysis.cost",
    "tierscope.collector.collect", "tierscope.collector.manifest", "tierscope.collector.formats",
    "tierscope.collector.formats.console_csv", "tierscope.collector.sources.files",
    "tierscope.dataset.compact", "tierscope.dataset.doctor", "tierscope.dataset.store",
    "tierscope.reports.i18n",
    "tierscope.trainer.data", "tierscope.trainer.roles", "tierscope.trainer.steplog", "tierscope.trainer.tiers",
)  # fmt: skip
#: Imports each of OLD_HELP_IMPORTS, passing over a module a later change renamed or removed
#: (the figure then says how many were missing).
_IMPORT_OLD_SET = (
    "import importlib, sys\n"
    "missing = 0\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        importlib.import_module(name)\n"
    "    except ModuleNotFoundError:\n"
    "        missing += 1\n"
    "print(missing)\n"
)


@dataclass(frozen=True)
class StartupOptions:
    repeat: int


def _fastest(*commands: list[str], runs: int) -> list[Proc]:
    """Per command, the fastest of ``runs`` runs, carrying the least CPU time of any of them (on a
    busy machine wall time waits for a core; CPU time is what the command itself costs). The
    commands take turns, so a spell of load falls on all of them alike."""
    procs: list[list[Proc]] = [[] for _ in commands]
    for _ in range(runs):
        for argv, done in zip(commands, procs, strict=True):
            done.append(run(argv))
    return [dataclasses.replace(best(done), cpu_s=min(p.cpu_s for p in done)) for done in procs]


#: What any typer command pays before its body runs: importing typer (pyproject.toml keeps it below 0.29,
#: which imports pydantic for every command).
_IMPORT_CLI_FRAMEWORK = "import typer.main\n"


def _collect_nothing_new(work: Path, runs: int) -> tuple[Proc, Proc, Proc]:
    """The fastest of ``runs`` collects of a log already collected (200 lines, so start-up
    dominates), printing its table and under ``--quiet`` (the crontab line of docs/running-unattended.md), and taking
    turns with them, the fastest import of the CLI framework alone."""
    log = write_cloudml_log(work / "startup.log", 200)
    dataset = work / "startup-ds"
    shutil.rmtree(dataset, ignore_errors=True)
    argv = tierscope("collect", "files", log.path, "--dataset", dataset, "--run-id", "bench", "--tier", "BASIC")
    run(argv)
    again, quiet, framework = _fastest(argv, [*argv, "--quiet"], python("-c", _IMPORT_CLI_FRAMEWORK), runs=runs)
    if "read 0 lines: stored 0 step records" not in " ".join(again.stdout.split()) or quiet.stdout:
        raise BenchError(f"the second collect of {log.path} read something new:\n{again.stdout[-2000:]}")
    shutil.rmtree(dataset, ignore_errors=True)
    return again, quiet, framework


def measure(work: Path, opts: StartupOptions) -> list[Figure]:
    runs = max(MIN_RUNS, opts.repeat)
    floor, old, help_ = _fastest(
        python("-c", "pass"), python("-c", _IMPORT_OLD_SET, *OLD_HELP_IMPORTS), tierscope("--help"), runs=runs
    )
    missing = int(old.stdout.strip() or 0)
    if "Usage" not in help_.stdout:
        raise BenchError(f"tierscope --help printed no usage:\n{help_.stdout[-2000:]}")
    nothing_new, quiet, framework = _collect_nothing_new(work, runs)
    old_note = f"{missing} of the old modules no longer exist" if missing else ""
    return [
        Figure(SECTION, "tierscope --help, whole process (baseline: importing what the old --help imported)", "s",
               help_.wall_s, old.wall_s, higher_is_better=False,
               targets=(Target("<", MAX_HELP_S), Target(">=", MIN_HELP_RATIO, on="ratio")), note=old_note,
               extra={"cpu_s": help_.cpu_s, "old_cpu_s": old.cpu_s, "floor_s": floor.wall_s, "runs": runs}),
        Figure(SECTION, "tierscope --help, CPU time (baseline: the old --help imports' CPU time)", "s",
               help_.cpu_s, old.cpu_s, higher_is_better=False, targets=(Target(">=", MIN_HELP_RATIO, on="ratio"),),
               extra={"floor_cpu_s": floor.cpu_s}),
        Figure(SECTION, "tierscope --help (baseline: the floor, python -c pass)", "s", help_.wall_s, floor.wall_s,
               higher_is_better=False, extra={"above_floor_s": help_.wall_s - floor.wall_s}),
        Figure(SECTION, "collect files with nothing new (200-line log), whole process", "s",
               nothing_new.wall_s, higher_is_better=False, targets=(Target("<", MAX_NOTHING_NEW_S),),
               extra={"cpu_s": nothing_new.cpu_s, "peak_rss_mb": nothing_new.peak_rss_mb}),
        Figure(SECTION, "collect files --quiet with nothing new (the crontab line's form), whole process", "s",
               quiet.wall_s, higher_is_better=False, targets=(Target("<", MAX_NOTHING_NEW_S),),
               extra={"cpu_s": quiet.cpu_s, "peak_rss_mb": quiet.peak_rss_mb}),
        Figure(SECTION, "collect files with nothing new (baseline: importing typer)", "s",
               nothing_new.wall_s, framework.wall_s, higher_is_better=False,
               extra={"above_framework_s": nothing_new.wall_s - framework.wall_s, "framework_cpu_s": framework.cpu_s}),
    ]  # fmt: skip
