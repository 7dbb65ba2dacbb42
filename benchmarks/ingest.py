"""Section (a): ingest. ``tierscope collect files`` on a generated 2016-format log, whole
process and parse step alone, against three baselines on the same file, each a whole process
run in turn with it (:func:`rounds`): the floor (polars reading the lines alone), the 20-line
polars one-regex script and the streaming-plan bound (:mod:`benchmarks.polars_ingest`) and the
plain-``re`` loop (:mod:`benchmarks.baseline_ingest`). The ratios to the floor are given in wall
seconds (fastest runs) and in CPU seconds (medians), which other load on the machine moves little."""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from benchmarks import incremental
from benchmarks.generate import LogFile, write_cloudml_log, write_gzip_of_newlines
from benchmarks.measure import BenchError, Proc, best, middle, python, run, tierscope, timed
from benchmarks.table import Figure, Target
from tierscope.collector.formats import parse_lines, sniff_format
from tierscope.collector.sources.files import iter_line_batches
from tierscope.dataset.store import Dataset

SECTION = "ingest"
RUN_ID = "bench"
#: Targets (2-core machine).
MIN_MB_S = 250.0
MIN_RATIO = 6.0
MAX_RSS_MB = 1000.0
#: At most this many times the floor, at least this many times faster than the polars script.
MAX_TIMES_FLOOR = 2.5
#: At most this many times the floor's CPU seconds (medians of the rounds).
MAX_TIMES_FLOOR_CPU = 4.3
MIN_FASTER_THAN_SCRIPT = 1.5
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


def parse_in_process(log: Path) -> tuple[float, float, float, int]:
    """(seconds reading lines + parsing, seconds in :func:`parse_lines` alone, CPU seconds of the
    process (every thread) in :func:`parse_lines`, steps found). The CPU seconds are the work done,
    whatever the load: on a busy machine the wall clock mostly measures the waiting. As in a
    collect, the format sniffed on the first batch is tried first (without it the formats before
    cloudml in the chain read every line: 0.2-0.3 CPU-s more on the 2,000,000-line log)."""
    parse_s = parse_cpu_s = 0.0
    steps = 0

    def read_and_parse() -> None:
        nonlocal parse_s, parse_cpu_s, steps
        first: str | None = None
        for number, batch in enumerate(iter_line_batches(log)):
            if number == 0:
                first = sniff_format(batch.lines.get_column("line"))
            cpu = time.process_time()
            seconds, parsed = timed(lambda b=batch, f=first: parse_lines(b.lines, first=f))
            parse_cpu_s += time.process_time() - cpu
            parse_s += seconds
            steps += parsed.steps.height

    total_s, _ = timed(read_and_parse)
    return total_s, parse_s, parse_cpu_s, steps


@dataclass(frozen=True)
class Rounds:
    """The interleaved whole-process runs on one log: tierscope and each baseline, one of each a round."""

    ours: list[Proc]
    floor: list[Proc]
    script: list[Proc]
    loop: list[Proc]
    stream: list[Proc]

    @property
    def loop_s(self) -> float:
        """The ``re`` baseline's read-match-convert loop alone (its own clock), the fastest."""
        return min(json.loads(p.stdout)["loop_s"] for p in self.loop)


def rounds(work: Path, log: LogFile, repeat: int) -> Rounds:
    """``repeat`` rounds of: ``collect files``, the floor, the polars script, the ``re`` loop, the
    streaming plan; each a whole process, in turn, so a spell of load on the shared machine falls on
    all of them alike."""
    dataset, base_ds, script_out = work / "ingest-ds", work / "baseline-ds", work / "polars-script.parquet"
    done = Rounds([], [], [], [], [])
    try:
        for _ in range(repeat):
            done.ours.append(collect(log.path, dataset))
            check_collected(dataset, log)
            done.floor.append(run(python("-m", "benchmarks.polars_ingest", "floor", log.path)))
            done.script.append(run(python("-m", "benchmarks.polars_ingest", "script", log.path, script_out)))
            shutil.rmtree(base_ds, ignore_errors=True)
            done.loop.append(run(python("-m", "benchmarks.baseline_ingest", log.path, base_ds, RUN_ID)))
            done.stream.append(run(python("-m", "benchmarks.polars_ingest", "stream", log.path, script_out)))
    finally:
        shutil.rmtree(dataset, ignore_errors=True)
        shutil.rmtree(base_ds, ignore_errors=True)
        script_out.unlink(missing_ok=True)
    for proc, want in ((done.floor[0], log.lines), (done.script[0], log.steps), (done.stream[0], log.steps)):
        got = json.loads(proc.stdout)["rows"]
        if got != want:
            raise BenchError(f"{' '.join(proc.argv)} read {got} rows of {log.path}; the generator wrote {want}")
    return done


def versus(name: str, done: Rounds) -> list[Figure]:
    """The ratios of ``collect files`` (fastest of each) to the floor, the polars script and
    the ``re`` loop, each a figure of its own with its target."""
    ours, floor, script, loop = (best(p).wall_s for p in (done.ours, done.floor, done.script, done.loop))
    extra = {"wall_s": ours, "floor_s": floor, "polars_script_s": script, "re_loop_s": loop}
    cpu_ours, cpu_floor, cpu_stream = (middle(p).cpu_s for p in (done.ours, done.floor, done.stream))
    cpu = {
        "all_cpu_s": [p.cpu_s for p in done.ours],
        "floor_all_cpu_s": [p.cpu_s for p in done.floor],
        "stream_all_cpu_s": [p.cpu_s for p in done.stream],
    }
    return [
        Figure(SECTION, f"{name}: times the floor (polars reading the lines, nothing else)", "×", ours / floor,
               higher_is_better=False, targets=(Target("<=", MAX_TIMES_FLOOR),),
               note=f"{ours:.2f} s vs {floor:.2f} s", extra=extra),
        Figure(SECTION, f"{name}: times the floor, CPU seconds", "×", cpu_ours / cpu_floor,
               higher_is_better=False, targets=(Target("<=", MAX_TIMES_FLOOR_CPU),),
               note=f"{cpu_ours:.2f} vs {cpu_floor:.2f} CPU-s", extra=cpu, wall_s=best(done.ours).wall_s,
               load_1m=middle(done.ours).load_1m),
        Figure(SECTION, f"{name}: streaming-plan bound (the fast path in one polars streaming plan, no rejects, "
               "dedupe, checksums, offsets or fsync): times the floor, CPU seconds", "×", cpu_stream / cpu_floor,
               higher_is_better=False, note=f"{cpu_stream:.2f} vs {cpu_floor:.2f} CPU-s"),
        Figure(SECTION, f"{name}: times faster than the 20-line polars one-regex script", "×", script / ours,
               targets=(Target(">=", MIN_FASTER_THAN_SCRIPT),), note=f"{script:.2f} s vs {ours:.2f} s"),
        Figure(SECTION, f"{name}: times faster than the plain re loop", "×", loop / ours,
               targets=(Target(">=", MIN_RATIO),), note=f"{loop:.2f} s vs {ours:.2f} s"),
    ]  # fmt: skip


def measure(work: Path, opts: IngestOptions) -> list[Figure]:
    log = write_cloudml_log(work / "ingest.log", opts.lines)
    mb = log.bytes / 1e6
    done = rounds(work, log, opts.repeat)
    ours, base_runs = done.ours, done.loop
    ours_best, base_best = best(ours), best(base_runs)
    base_loop_s = done.loop_s
    in_process = [parse_in_process(log.path) for _ in range(opts.repeat)]
    read_parse_s = min(t for t, _, _, _ in in_process)
    parse_s = min(p for _, p, _, _ in in_process)
    parse_cpu_s = min(c for _, _, c, _ in in_process)
    size = f"{log.lines:,} lines, {mb:,.0f} MB"
    whole = f"collect files, whole process ({size})"
    figures = [
        *versus(whole, done),
        Figure(SECTION, whole, "MB/s", mb / ours_best.wall_s, mb / base_best.wall_s,
               targets=(Target(">=", MIN_MB_S), Target(">=", MIN_RATIO, on="ratio")),
               extra={"wall_s": ours_best.wall_s, "cpu_s": ours_best.cpu_s, "baseline_wall_s": base_best.wall_s,
                      "all_wall_s": [p.wall_s for p in ours], "baseline_all_wall_s": [p.wall_s for p in base_runs],
                      "floor_all_wall_s": [p.wall_s for p in done.floor],
                      "polars_script_all_wall_s": [p.wall_s for p in done.script]}),
        Figure(SECTION, whole, "lines/s", log.lines / ours_best.wall_s, log.lines / base_best.wall_s),
        Figure(SECTION, "collect files, whole process: seconds", "s", ours_best.wall_s, base_best.wall_s,
               higher_is_better=False, note=f"CPU {ours_best.cpu_s:.1f} s vs {base_best.cpu_s:.1f} s (user+sys)",
               extra={"cpu_s": ours_best.cpu_s, "baseline_cpu_s": base_best.cpu_s}),
        Figure(SECTION, "read lines + parse, in process (baseline: its read-match-convert loop)", "MB/s",
               mb / read_parse_s, mb / base_loop_s, extra={"seconds": read_parse_s, "baseline_s": base_loop_s}),
        Figure(SECTION, "parse step alone (parse_lines)", "MB/s", mb / parse_s, extra={"seconds": parse_s}),
        Figure(SECTION, "parse step alone (parse_lines)", "lines/s", log.lines / parse_s),
        Figure(SECTION, "parse step alone (parse_lines): CPU seconds, every thread", "s", parse_cpu_s,
               higher_is_better=False, note=f"{parse_cpu_s / parse_s:.2f} cores busy on average while parsing"),
        Figure(SECTION, f"peak RSS, collect files ({mb:,.0f} MB log)", "MB",
               max(p.peak_rss_mb for p in ours), max(p.peak_rss_mb for p in base_runs), higher_is_better=False,
               targets=(Target("<", MAX_RSS_MB),)),
    ]  # fmt: skip
    figures += incremental.measure(work, log, opts.repeat, RUN_ID, check_collected)
    log.path.unlink()
    if opts.rss_log_gb > 0:
        figures += large_log(work, opts.rss_log_gb)
    if opts.newlines_gz_gib > 0:
        figures += gzip_of_newlines(work, opts.newlines_gz_gib)
    return figures


def large_log(work: Path, gb: float) -> list[Figure]:
    """One round on a ``gb`` GB log: peak RSS of the collect (flat if it streams in batches) and
    its ratios to the baselines on that log."""
    log = write_cloudml_log(work / "large.log", int(gb * 1e9 / BYTES_PER_LINE))
    size = log.bytes
    try:
        done = rounds(work, log, 1)
    finally:
        log.path.unlink()
    [proc] = done.ours
    gb_real = size / 1e9
    name = f"collect files, whole process ({log.lines:,} lines, {gb_real:.2f} GB)"
    return [
        Figure(SECTION, f"peak RSS, {name}", "MB", proc.peak_rss_mb, higher_is_better=False,
               targets=(Target("<", MAX_RSS_MB),)),
        Figure(SECTION, name, "MB/s", size / 1e6 / proc.wall_s, targets=(Target(">=", MIN_MB_S),),
               extra={"wall_s": proc.wall_s, "cpu_s": proc.cpu_s}),
        *versus(name, done),
    ]  # fmt: skip


#: The closing line of ``collect files`` (:func:`tierscope.cli.output.closing_line`), its six figures (records
#: where a line holds several: the "from N lines" and "rejected pieces" parts, absent on the logs measured here).
_CLOSING = re.compile(
    r"read (?P<lines>[\d,]+) lines?: stored (?P<steps>[\d,]+) step records?(?: from [\d,]+ lines?)? "
    r"and (?P<events>[\d,]+) events?(?: from [\d,]+ lines?)?, "
    r"(?P<duplicates>[\d,]+) duplicates?(?: from [\d,]+ lines?)? already stored, "
    r"kept aside (?P<rejects>[\d,]+) rejected lines?(?: and [\d,]+ rejected pieces? of (?:a )?lines?)?"
    r"(?: \(see `tierscope rejects`\))?, (?P<skipped>[\d,]+) lines? had no metric"
)


def closing_counts(stdout: str) -> dict[str, int] | None:
    """The figures of the closing line in ``stdout`` (lines, steps, events, duplicates, rejects,
    skipped), or None when there is none."""
    found = _CLOSING.search(stdout)
    return {k: int(v.replace(",", "")) for k, v in found.groupdict().items()} if found else None


def gzip_of_newlines(work: Path, gib: float) -> list[Figure]:
    """One collect of a gzip expanding to ``gib`` GiB of empty lines: MB/s of
    decompressed input and peak RSS, bounded whatever the number of lines. Raises
    :class:`BenchError` unless the closing line adds up (lines = records + rejects + no metric)."""
    log = write_gzip_of_newlines(work / "newlines.log.gz", int(gib * 1024) << 20)
    size = int(gib * 1024) << 20
    dataset = work / "newlines-ds"
    shutil.rmtree(dataset, ignore_errors=True)
    try:
        # the file is a bomb by design (1,000 times its size): read whole, as the benchmark measures reading
        argv = tierscope(
            "collect", "files", log.path, "--dataset", dataset, "--run-id", RUN_ID, "--settle", "0",
            "--max-expand", "100000",
        )  # fmt: skip
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
