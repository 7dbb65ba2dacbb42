"""Section (b): ``tierscope summary`` and ``tierscope report`` over a generated dataset of
step records, written straight with the dataset's writer (no log parsing)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks.generate import write_step_dataset
from benchmarks.measure import BenchError, Proc, best, run, tierscope
from benchmarks.table import Figure, Target

SECTION = "analysis"
MAX_SECONDS = 30.0
MAX_RSS_MB = 2000.0
MAX_HTML_MB = 3.0
#: A command still running after this many seconds is stopped and reported as missing its target.
TIMEOUT_S = 10 * MAX_SECONDS


@dataclass(frozen=True)
class AnalysisOptions:
    records: int
    runs: int
    repeat: int


def _timed(argv: list[str], repeat: int) -> list[Proc]:
    """Up to ``repeat`` runs of ``argv``; one only if the first misses the target (repeating adds nothing)."""
    runs = [run(argv, timeout_s=TIMEOUT_S)]
    while len(runs) < repeat and runs[0].wall_s < MAX_SECONDS:
        runs.append(run(argv, timeout_s=TIMEOUT_S))
    return runs


def _stopped(proc: Proc) -> str:
    return f"did not finish: stopped after {TIMEOUT_S:.0f} s (at least this long)" if proc.timed_out else ""


def measure(work: Path, opts: AnalysisOptions) -> list[Figure]:
    dataset = work / "analysis-ds"
    shutil.rmtree(dataset, ignore_errors=True)
    written = write_step_dataset(dataset, opts.records, opts.runs)
    size = f"{written:,} records, {opts.runs} runs"
    summary = _timed(tierscope("summary", "--dataset", dataset, "--json"), opts.repeat)
    if not summary[0].timed_out and summary[0].stdout.count('"run_id"') != opts.runs:
        raise BenchError(f"tierscope summary did not list the {opts.runs} generated runs:\n{summary[0].stdout[:2000]}")
    html = work / "report.html"
    report = _timed(tierscope("report", "--dataset", dataset, "--out", html, "--lang", "en"), opts.repeat)
    html_mb = html.stat().st_size / 1e6 if html.exists() else None
    shutil.rmtree(dataset, ignore_errors=True)
    html.unlink(missing_ok=True)
    s, r = best(summary), best(report)
    return [
        Figure(SECTION, f"tierscope summary ({size})", "s", s.wall_s, higher_is_better=False,
               targets=(Target("<", MAX_SECONDS),), note=_stopped(s), extra={"cpu_s": s.cpu_s}),
        Figure(SECTION, f"tierscope report ({size})", "s", r.wall_s, higher_is_better=False,
               targets=(Target("<", MAX_SECONDS),), note=_stopped(r), extra={"cpu_s": r.cpu_s}),
        Figure(SECTION, "peak RSS, summary and report", "MB", max(p.peak_rss_mb for p in summary + report),
               higher_is_better=False, targets=(Target("<", MAX_RSS_MB),),
               extra={"summary_mb": max(p.peak_rss_mb for p in summary),
                      "report_mb": max(p.peak_rss_mb for p in report)}),
        Figure(SECTION, "report HTML size", "MB", html_mb, higher_is_better=False,
               targets=(Target("<=", MAX_HTML_MB),), note="" if html_mb is not None else "no report written"),
    ]  # fmt: skip
