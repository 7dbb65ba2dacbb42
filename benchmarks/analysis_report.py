"""Section (b): ``tierscope summary`` and ``tierscope report`` over a generated dataset of
step records, written straight with the dataset's writer (no log parsing), beside one DuckDB
query of the same steady-state medians; and ``summary`` of one very large run (peak RSS)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks.generate import write_big_run, write_step_dataset
from benchmarks.measure import BenchError, Proc, middle, python, run, tierscope
from benchmarks.table import Figure, Target

SECTION = "analysis"
MAX_SECONDS = 30.0
MAX_RSS_MB = 2000.0
MAX_HTML_MB = 3.0
#: The targets, in CPU seconds (user + system, the child's rusage: they move little with other load on
#: the machine, where wall times move several-fold): summary within 1.0× the DuckDB query, report
#: within 1.2× summary, summary of records in runs above a batch's records within 1.15× the same
#: records in runs below it, and one run of 20 M records summarised under 800 MB.
MAX_VS_DUCKDB = 1.0
MAX_REPORT_VS_SUMMARY = 1.2
MAX_LONG_VS_SHORT_RUNS = 1.15
MAX_BIG_RUN_RSS_MB = 800.0
#: Records per run of the two datasets compared by run size: either side of the analysis' batch of
#: 500,000 records (:data:`tierscope.analysis.batches.BATCH_RECORDS`), the long ones above it.
SHORT_RUN_RECORDS = 200_000
LONG_RUN_RECORDS = 600_000
#: A command still running after this many seconds is stopped and reported as missing its target.
TIMEOUT_S = 10 * MAX_SECONDS
#: Steady medians of the DuckDB query and of tierscope agree to this relative difference.
SAME_MEDIAN = 0.01
#: At most this share of the runs may differ by more than :data:`SAME_MEDIAN`: none. The generated BASIC_TPU
#: runs, whose ``elapsed_s`` jitters by up to 1 s around 0.625 s intervals, agree too since tierscope reads
#: a clock that runs back within a second as jitter, not a restart (:mod:`tierscope.analysis.coarse_clock`).
MAX_OFF_SHARE = 0.0


@dataclass(frozen=True)
class AnalysisOptions:
    records: int
    runs: int
    repeat: int
    big_run_records: int = 0  # 0: no large-run row
    run_size_records: int = 0  # records of the two datasets compared by run size (0: no such row)


def _stopped(proc: Proc) -> str:
    return f"did not finish: stopped after {TIMEOUT_S:.0f} s (at least this long)" if proc.timed_out else ""


def _steady(summary: Proc) -> dict[str, float]:
    return {row["run_id"]: row["steady_global_steps_per_s"] for row in json.loads(summary.stdout)}


def _duckdb_gap(summary: Proc, duck: Proc) -> tuple[float, dict[str, float]]:
    """The largest relative difference between the query's medians and tierscope's steady rates over
    the runs where they agree within :data:`SAME_MEDIAN`, and the others' differences (``{run_id: gap}``).

    Raises :class:`BenchError` when a run is missing from the query, or more than :data:`MAX_OFF_SHARE`
    of the runs differ by more than :data:`SAME_MEDIAN` (the race would be unfair, or one side wrong). They
    are not equal to the bit: tierscope's steady rate is the steps over the time the logged rates give
    them (a time-weighted mean), the query's the median of the logged rates; on the generated runs (5 %
    noise about the rate) the two lie within 0.3 %. A run that differs more is named in the figure's note."""
    ours, theirs = _steady(summary), json.loads(duck.stdout)
    missing = sorted(set(ours) - set(theirs))
    if missing:
        raise BenchError(f"DuckDB's query found no steady median for {', '.join(missing[:5])}")
    gaps = {r: abs(theirs[r] - v) / abs(v) for r, v in ours.items()}
    off = {r: g for r, g in gaps.items() if not g <= SAME_MEDIAN}
    if len(off) > MAX_OFF_SHARE * len(gaps):
        raise BenchError(f"DuckDB's steady medians differ from tierscope's by over 1 % for {', '.join(list(off)[:5])}")
    return max((g for r, g in gaps.items() if r not in off), default=0.0), off


def _gap_note(gap: float, off: dict[str, float], runs: int) -> str:
    said = f"medians within {gap:.1e} (relative)"
    if not off:
        return said
    return (
        f"{said} on {runs - len(off)} of {runs} runs; {len(off)} differ by up to {max(off.values()):.1%} "
        f"({', '.join(sorted(off)[:3])}{', ...' if len(off) > 3 else ''})"
    )


def measure(work: Path, opts: AnalysisOptions) -> list[Figure]:
    dataset = work / "analysis-ds"
    shutil.rmtree(dataset, ignore_errors=True)
    written = write_step_dataset(dataset, opts.records, opts.runs)
    size = f"{written:,} records, {opts.runs} runs"
    html = work / "report.html"
    has_duckdb = importlib.util.find_spec("duckdb") is not None
    summary: list[Proc] = []
    report: list[Proc] = []
    duck: list[Proc] = []
    summary_argv = tierscope("summary", "--dataset", dataset, "--json")
    report_argv = tierscope("report", "--dataset", dataset, "--out", html, "--lang", "en")
    # Interleaved rounds: a load that comes and goes on the machine weighs on each command alike.
    for _ in range(opts.repeat):
        summary.append(run(summary_argv, timeout_s=TIMEOUT_S))
        if has_duckdb:
            duck.append(run(python("-m", "benchmarks.baseline_duckdb", dataset), timeout_s=TIMEOUT_S))
        report.append(run(report_argv, timeout_s=TIMEOUT_S))
        if summary[0].timed_out:
            break  # repeating adds nothing
    if not summary[0].timed_out and summary[0].stdout.count('"run_id"') != opts.runs:
        raise BenchError(f"tierscope summary did not list the {opts.runs} generated runs:\n{summary[0].stdout[:2000]}")
    gap = _duckdb_gap(summary[0], duck[0]) if duck and not summary[0].timed_out else None
    html_mb = html.stat().st_size / 1e6 if html.exists() else None
    shutil.rmtree(dataset, ignore_errors=True)
    html.unlink(missing_ok=True)
    s, r = middle(summary), middle(report)
    d = middle(duck) if duck else None
    no_duckdb = "" if has_duckdb else "skipped: DuckDB is not installed (pip install '.[bench]')"
    figures = [
        Figure(SECTION, f"tierscope summary ({size})", "CPU-s", s.cpu_s, higher_is_better=False,
               targets=(Target("<", MAX_SECONDS),), note=_stopped(s), wall_s=s.wall_s, load_1m=s.load_1m),
        Figure(SECTION, f"summary vs one DuckDB query of the steady medians ({size})", "CPU-s",
               s.cpu_s if d else None, d.cpu_s if d else None, higher_is_better=False,
               targets=(Target("<=", MAX_VS_DUCKDB, on="times"),),
               note=no_duckdb or (_gap_note(*gap, opts.runs) if gap is not None else ""),
               extra={"median_gap": gap[0] if gap else None, "runs_off": gap[1] if gap else None,
                      "duckdb_rss_mb": d.peak_rss_mb if d else None},
               wall_s=s.wall_s, baseline_wall_s=d.wall_s if d else None, load_1m=s.load_1m),
        Figure(SECTION, f"tierscope report ({size})", "CPU-s", r.cpu_s, higher_is_better=False,
               targets=(Target("<", MAX_SECONDS),), note=_stopped(r), wall_s=r.wall_s, load_1m=r.load_1m),
        Figure(SECTION, "report vs summary (baseline: summary)", "CPU-s", r.cpu_s, s.cpu_s, higher_is_better=False,
               targets=(Target("<=", MAX_REPORT_VS_SUMMARY, on="times"),), wall_s=r.wall_s,
               baseline_wall_s=s.wall_s, load_1m=r.load_1m),
        Figure(SECTION, "peak RSS, summary and report", "MB", max(p.peak_rss_mb for p in summary + report),
               higher_is_better=False, targets=(Target("<", MAX_RSS_MB),),
               extra={"summary_mb": max(p.peak_rss_mb for p in summary),
                      "report_mb": max(p.peak_rss_mb for p in report)}),
        Figure(SECTION, "report HTML size", "MB", html_mb, higher_is_better=False,
               targets=(Target("<=", MAX_HTML_MB),), note="" if html_mb is not None else "no report written"),
    ]  # fmt: skip
    if opts.run_size_records > 0:
        figures += run_size(work, opts.run_size_records, opts.repeat)
    if opts.big_run_records > 0:
        figures += big_run(work, opts.big_run_records)
    return figures


def run_size(work: Path, records: int, repeat: int) -> list[Figure]:
    """CPU seconds of ``summary`` over ``records`` step records in runs of :data:`LONG_RUN_RECORDS`
    against the same number in runs of :data:`SHORT_RUN_RECORDS` (the baseline): the analysis' cost
    per record should not depend on how long a run is. Interleaved, ``repeat`` rounds, medians."""
    sets = {}
    for per_run in (SHORT_RUN_RECORDS, LONG_RUN_RECORDS):
        root = work / f"runs-of-{per_run}-ds"
        shutil.rmtree(root, ignore_errors=True)
        runs = max(1, records // per_run)
        write_step_dataset(root, runs * per_run, runs)
        sets[per_run] = root
    done: dict[int, list[Proc]] = {n: [] for n in sets}
    try:
        for _ in range(repeat):
            for per_run, root in sets.items():
                done[per_run].append(run(tierscope("summary", "--dataset", root, "--json"), timeout_s=TIMEOUT_S))
    finally:
        for root in sets.values():
            shutil.rmtree(root, ignore_errors=True)
    short, long = middle(done[SHORT_RUN_RECORDS]), middle(done[LONG_RUN_RECORDS])
    for per_run, proc in ((SHORT_RUN_RECORDS, short), (LONG_RUN_RECORDS, long)):
        if not proc.timed_out and len(_steady(proc)) != max(1, records // per_run):
            raise BenchError(f"tierscope summary did not list every run of {per_run:,} records:\n{proc.stdout[:2000]}")
    name = (f"summary of {max(1, records // LONG_RUN_RECORDS) * LONG_RUN_RECORDS:,} records in runs of "
            f"{LONG_RUN_RECORDS:,} (baseline: {max(1, records // SHORT_RUN_RECORDS) * SHORT_RUN_RECORDS:,} "
            f"in runs of {SHORT_RUN_RECORDS:,})")  # fmt: skip
    return [
        Figure(SECTION, name, "CPU-s", long.cpu_s, short.cpu_s, higher_is_better=False,
               targets=(Target("<=", MAX_LONG_VS_SHORT_RUNS, on="times"),), note=_stopped(long) or _stopped(short),
               extra={"all_cpu_s": [p.cpu_s for p in done[LONG_RUN_RECORDS]],
                      "baseline_all_cpu_s": [p.cpu_s for p in done[SHORT_RUN_RECORDS]],
                      "peak_rss_mb": long.peak_rss_mb, "baseline_peak_rss_mb": short.peak_rss_mb},
               wall_s=long.wall_s, baseline_wall_s=short.wall_s, load_1m=long.load_1m),
    ]  # fmt: skip


def big_run(work: Path, records: int) -> list[Figure]:
    """Peak RSS of one ``summary`` of a dataset holding one run of ``records`` step records: flat
    if the analysis takes a run larger than a batch in pieces."""
    dataset = work / "big-run-ds"
    shutil.rmtree(dataset, ignore_errors=True)
    run_id = write_big_run(dataset, records)
    try:
        proc = run(tierscope("summary", "--dataset", dataset, "--json"), timeout_s=2 * TIMEOUT_S)
    finally:
        shutil.rmtree(dataset, ignore_errors=True)
    if not proc.timed_out and _steady(proc).get(run_id) is None:
        raise BenchError(f"tierscope summary found no steady rate for the large run {run_id}")
    name = f"summary of one run of {records:,} records (20 tasks)"
    return [
        Figure(SECTION, f"peak RSS, {name}", "MB", proc.peak_rss_mb, higher_is_better=False,
               targets=(Target("<", MAX_BIG_RUN_RSS_MB),), note=_stopped(proc)),
        Figure(SECTION, name, "CPU-s", proc.cpu_s, higher_is_better=False, note=_stopped(proc),
               wall_s=proc.wall_s, load_1m=proc.load_1m),
    ]  # fmt: skip
