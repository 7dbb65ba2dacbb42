"""Section (a): ingest. ``tierscope collect files`` on a generated 2016-format log, whole
process and parse step alone, against the plain-``re`` baseline on the same file."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from benchmarks.generate import LogFile, write_cloudml_log, write_gzip_of_newlines
from benchmarks.measure import BenchError, Proc, best, python, run, tierscope, timed
from benchmarks.table import Figure, Target
from tierscope.collector.formats import parse_lines
from tierscope.collector.sources.files import iter_line_batches
from tierscope.dataset.store import Dataset

SECTION = "ingest"
RUN_ID = "bench"
#: Issue 9's targets (2-core machine).
MIN_MB_S = 250.0
MIN_RATIO = 6.0
MAX_RSS_MB = 1000.0
#: A collect still running after this long is a failure, not a figure.
COLLECT_TIMEOUT_S = 900.0
#: Bytes per generated line, to size the memory-bound log in GB.
BYTES_PER_LINE = 120


@dataclass(frozen=True)
class IngestOptions:
    lines: int
    repeat: int
    rss_log_gb: float  # 0: skip the large-log memory check
    newlines_gz_gib: float = 0.0  # 0: skip the gzip of newlines


def collect(log: Path, dataset: Path) -> Proc:
    """One ``tierscope collect files`` into a fresh ``dataset``."""
    shutil.rmtree(dataset, ignore_errors=True)
    argv = tierscope("collect", "files", log, "--dataset", dataset, "--run-id", RUN_ID, "--tier", "STANDARD_1", "-q")
    proc = run(argv, timeout_s=COLLECT_TIMEOUT_S)
    if proc.timed_out:
        raise BenchError(f"collect of {log} did not finish in {COLLECT_TIMEOUT_S:.0f} s")
    return proc


def check_collected(dataset: Path, log: LogFile) -> None:
    """Raise :class:`BenchError` unless the dataset holds exactly the log's steps and rejects."""
    ds = Dataset(dataset)
    steps, rejects = (ds.scan(t).select(pl.len()).collect().item() for t in ("steps", "rejects"))
    if (steps, rejects) != (log.steps, log.truncated):
        raise BenchError(
            f"collect stored {steps} steps and {rejects} rejects from {log.path}; "
            f"the generator wrote {log.steps} and {log.truncated}"
        )


def parse_in_process(log: Path) -> tuple[float, float, int]:
    """(seconds reading lines + parsing, seconds in :func:`parse_lines` alone, steps found)."""
    parse_s = 0.0
    steps = 0

    def read_and_parse() -> None:
        nonlocal parse_s, steps
        for batch in iter_line_batches(log):
            seconds, parsed = timed(lambda b=batch: parse_lines(b.lines))
            parse_s += seconds
            steps += parsed.steps.height

    total_s, _ = timed(read_and_parse)
    return total_s, parse_s, steps


def measure(work: Path, opts: IngestOptions) -> list[Figure]:
    log = write_cloudml_log(work / "ingest.log", opts.lines)
    mb = log.bytes / 1e6
    dataset = work / "ingest-ds"
    ours = [collect(log.path, dataset) for _ in range(opts.repeat)]
    check_collected(dataset, log)
    base_runs = []
    for _ in range(opts.repeat):
        shutil.rmtree(work / "baseline-ds", ignore_errors=True)
        base_runs.append(run(python("-m", "benchmarks.baseline_ingest", log.path, work / "baseline-ds", RUN_ID)))
    ours_best, base_best = best(ours), best(base_runs)
    base_loop_s = min(json.loads(p.stdout)["loop_s"] for p in base_runs)
    in_process = [parse_in_process(log.path) for _ in range(opts.repeat)]
    read_parse_s = min(t for t, _, _ in in_process)
    parse_s = min(p for _, p, _ in in_process)
    size = f"{log.lines:,} lines, {mb:,.0f} MB"
    whole = f"collect files, whole process ({size})"
    figures = [
        Figure(SECTION, whole, "MB/s", mb / ours_best.wall_s, mb / base_best.wall_s,
               targets=(Target(">=", MIN_MB_S), Target(">=", MIN_RATIO, on="ratio")),
               extra={"wall_s": ours_best.wall_s, "cpu_s": ours_best.cpu_s, "baseline_wall_s": base_best.wall_s,
                      "all_wall_s": [p.wall_s for p in ours], "baseline_all_wall_s": [p.wall_s for p in base_runs]}),
        Figure(SECTION, whole, "lines/s", log.lines / ours_best.wall_s, log.lines / base_best.wall_s),
        Figure(SECTION, "collect files, whole process: seconds", "s", ours_best.wall_s, base_best.wall_s,
               higher_is_better=False, note=f"CPU {ours_best.cpu_s:.1f} s vs {base_best.cpu_s:.1f} s (user+sys)",
               extra={"cpu_s": ours_best.cpu_s, "baseline_cpu_s": base_best.cpu_s}),
        Figure(SECTION, "read lines + parse, in process (baseline: its read-match-convert loop)", "MB/s",
               mb / read_parse_s, mb / base_loop_s, extra={"seconds": read_parse_s, "baseline_s": base_loop_s}),
        Figure(SECTION, "parse step alone (parse_lines)", "MB/s", mb / parse_s, extra={"seconds": parse_s}),
        Figure(SECTION, "parse step alone (parse_lines)", "lines/s", log.lines / parse_s),
        Figure(SECTION, f"peak RSS, collect files ({mb:,.0f} MB log)", "MB",
               max(p.peak_rss_mb for p in ours), max(p.peak_rss_mb for p in base_runs), higher_is_better=False,
               targets=(Target("<", MAX_RSS_MB),)),
    ]  # fmt: skip
    shutil.rmtree(dataset, ignore_errors=True)
    shutil.rmtree(work / "baseline-ds", ignore_errors=True)
    log.path.unlink()
    if opts.rss_log_gb > 0:
        figures += large_log(work, opts.rss_log_gb)
    if opts.newlines_gz_gib > 0:
        figures += gzip_of_newlines(work, opts.newlines_gz_gib)
    return figures


def large_log(work: Path, gb: float) -> list[Figure]:
    """Peak RSS of one collect of a ``gb`` GB log: flat if the collector streams in batches."""
    log = write_cloudml_log(work / "large.log", int(gb * 1e9 / BYTES_PER_LINE))
    size = log.bytes
    dataset = work / "large-ds"
    try:
        proc = collect(log.path, dataset)
        check_collected(dataset, log)
    finally:
        log.path.unlink()
    shutil.rmtree(dataset, ignore_errors=True)
    gb_real = size / 1e9
    name = f"collect files, whole process ({log.lines:,} lines, {gb_real:.2f} GB)"
    return [
        Figure(SECTION, f"peak RSS, {name}", "MB", proc.peak_rss_mb, higher_is_better=False,
               targets=(Target("<", MAX_RSS_MB),)),
        Figure(SECTION, name, "MB/s", size / 1e6 / proc.wall_s, targets=(Target(">=", MIN_MB_S),),
               extra={"wall_s": proc.wall_s, "cpu_s": proc.cpu_s}),
    ]  # fmt: skip


#: The closing line of ``collect files`` (:func:`tierscope.cli.output.closing_line`), its six figures.
_CLOSING = re.compile(
    r"read (?P<lines>[\d,]+) lines?: stored (?P<steps>[\d,]+) step records? and (?P<events>[\d,]+) events?, "
    r"skipped (?P<duplicates>[\d,]+) duplicates?, kept aside (?P<rejects>[\d,]+) rejected lines?"
    r"(?: \(see `tierscope rejects`\))?, (?P<skipped>[\d,]+) lines? had no metric"
)


def closing_counts(stdout: str) -> dict[str, int] | None:
    """The figures of the closing line in ``stdout`` (lines, steps, events, duplicates, rejects,
    skipped), or None when there is none."""
    found = _CLOSING.search(stdout)
    return {k: int(v.replace(",", "")) for k, v in found.groupdict().items()} if found else None


def gzip_of_newlines(work: Path, gib: float) -> list[Figure]:
    """One collect of a gzip expanding to ``gib`` GiB of empty lines (issue 17): MB/s of
    decompressed input and peak RSS, bounded whatever the number of lines. Raises
    :class:`BenchError` unless the closing line adds up (lines = records + rejects + no metric)."""
    log = write_gzip_of_newlines(work / "newlines.log.gz", int(gib * 1024) << 20)
    size = int(gib * 1024) << 20
    dataset = work / "newlines-ds"
    shutil.rmtree(dataset, ignore_errors=True)
    try:
        argv = tierscope("collect", "files", log.path, "--dataset", dataset, "--run-id", RUN_ID, "--settle", "0")
        proc = run(argv, timeout_s=COLLECT_TIMEOUT_S)
    finally:
        log.path.unlink()
        shutil.rmtree(dataset, ignore_errors=True)
    if proc.timed_out:
        raise BenchError(f"collect of a gzip of {gib:g} GiB of newlines did not finish in {COLLECT_TIMEOUT_S:.0f} s")
    counts = closing_counts(proc.stdout)
    expected = {"lines": log.lines, "steps": log.steps, "events": 0, "duplicates": 0}
    if counts != expected | {"rejects": log.truncated, "skipped": log.noise}:
        raise BenchError(f"collect of the gzip of newlines ended {proc.stdout.strip()[-400:]!r}; expected {log}")
    name = f"collect files, gzip of newlines ({gib:g} GiB decompressed, {log.lines:,} lines)"
    return [
        Figure(SECTION, name, "MB/s", size / 1e6 / proc.wall_s, note="decompressed input",
               extra={"wall_s": proc.wall_s, "cpu_s": proc.cpu_s, "bytes": size, "lines": log.lines}),
        Figure(SECTION, f"peak RSS, {name}", "MB", proc.peak_rss_mb, higher_is_better=False,
               targets=(Target("<", MAX_RSS_MB),)),
    ]  # fmt: skip
