"""tierscope's benchmarks: one table of figures, each beside its baseline and target.

    python -m benchmarks.run            # full sizes (a few minutes)
    python -m benchmarks.run --quick    # small sizes, under a minute
    python -m benchmarks.run --json bench.json --lines 4000000 --sections ingest

Inputs are generated deterministically into a temporary directory (``--work`` to choose
it); every whole-process figure runs ``tierscope`` from this checkout in a subprocess and
keeps the fastest of ``--repeat`` runs (other load on the machine only ever adds time), or, for a
figure in CPU seconds (the child's rusage: the analysis section), the median of interleaved runs,
with the wall time and the load average beside it. See docs/benchmarks.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a file: make this checkout importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import os
import platform
import shutil
import tempfile
import time
from typing import Annotated

import polars as pl
import typer

from benchmarks import analysis_report, cloud, ingest, startup, trainer
from benchmarks.measure import REPO
from benchmarks.table import Figure, render, write_json

SECTIONS = ("ingest", "analysis", "cloud", "trainer", "startup")

#: (full, --quick) defaults of each size.
SIZES = {
    "lines": (2_000_000, 200_000),
    "rss_log_gb": (2.0, 0.1),
    "newlines_gz_gib": (2.0, 1 / 32),
    "records": (10_000_000, 500_000),
    "runs": (50, 50),
    "big_run_records": (20_000_000, 1_000_000),
    "run_size_records": (30_000_000, 1_200_000),
    "entries": (100_000, 10_000),
    "trainer_steps": (2000, 300),
    #: The trainer's overhead is a median and a spread: it needs more repeats than a fastest-of.
    "trainer_repeat": (7, 5),
    "repeat": (3, 2),
}

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def _size(value: float | None, name: str, quick: bool) -> float:
    return value if value is not None else SIZES[name][1 if quick else 0]


@app.command()
def main(
    quick: Annotated[bool, typer.Option("--quick", help="Small sizes: the whole table in under a minute.")] = False,
    lines: Annotated[int | None, typer.Option(help="Ingest: lines of the generated log (2,000,000 ≈ 240 MB).")] = None,
    rss_log_gb: Annotated[
        float | None, typer.Option(help="Ingest: GB of the log for the memory bound (0 skips it).")
    ] = None,
    newlines_gz_gib: Annotated[
        float | None, typer.Option(help="Ingest: GiB of newlines, decompressed, of the gzip collected (0 skips it).")
    ] = None,
    records: Annotated[int | None, typer.Option(help="Analysis: step records in the dataset.")] = None,
    runs: Annotated[int | None, typer.Option(help="Analysis: runs they are spread over.")] = None,
    big_run_records: Annotated[
        int | None, typer.Option(help="Analysis: records of the one large run summarised for peak RSS (0 skips it).")
    ] = None,
    run_size_records: Annotated[
        int | None,
        typer.Option(help="Analysis: records summarised in runs of 600,000 and of 200,000, compared (0 skips it)."),
    ] = None,
    entries: Annotated[int | None, typer.Option(help="Cloud Logging: entries served by the fake server.")] = None,
    trainer_steps: Annotated[int | None, typer.Option(help="Trainer: steps per timed training run.")] = None,
    trainer_repeat: Annotated[
        int | None, typer.Option(help="Trainer: runs of each log variant; the median counts.")
    ] = None,
    repeat: Annotated[int | None, typer.Option(help="Runs of each timed command; the fastest counts.")] = None,
    sections: Annotated[
        list[str] | None, typer.Option("--sections", help=f"Only these: {', '.join(SECTIONS)} (repeatable).")
    ] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write every figure to this JSON file.")] = None,
    work: Annotated[
        Path | None, typer.Option(help="Directory for generated inputs (default: a temporary one).")
    ] = None,
) -> None:
    """Generate the inputs, measure, and print one table (and --json)."""
    chosen = sections or list(SECTIONS)
    unknown = set(chosen) - set(SECTIONS)
    if unknown:
        raise typer.BadParameter(f"unknown section(s) {', '.join(sorted(unknown))}; choose from {', '.join(SECTIONS)}")
    rep = int(_size(repeat, "repeat", quick))
    workdir = Path(work) if work else Path(tempfile.mkdtemp(prefix="tierscope-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    started = time.perf_counter()
    figures: list[Figure] = []

    def progress(section: str) -> None:
        print(f"{section}: done after {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

    try:
        if "ingest" in chosen:
            opts = ingest.IngestOptions(
                int(_size(lines, "lines", quick)),
                rep,
                _size(rss_log_gb, "rss_log_gb", quick),
                _size(newlines_gz_gib, "newlines_gz_gib", quick),
            )
            figures += ingest.measure(workdir, opts)
            progress("ingest")
        if "analysis" in chosen:
            figures += analysis_report.measure(
                workdir,
                analysis_report.AnalysisOptions(
                    int(_size(records, "records", quick)),
                    int(_size(runs, "runs", quick)),
                    rep,
                    int(_size(big_run_records, "big_run_records", quick)),
                    int(_size(run_size_records, "run_size_records", quick)),
                ),
            )
            progress("analysis")
        if "cloud" in chosen:
            figures += cloud.measure(workdir, cloud.CloudOptions(int(_size(entries, "entries", quick))))
            progress("cloud")
        if "trainer" in chosen:
            figures += trainer.measure(
                trainer.TrainerOptions(
                    int(_size(trainer_steps, "trainer_steps", quick)),
                    int(_size(trainer_repeat, "trainer_repeat", quick)),
                )
            )
        if "startup" in chosen:
            figures += startup.measure(workdir, startup.StartupOptions(rep))
            progress("startup")
    finally:
        if work is None:
            shutil.rmtree(workdir, ignore_errors=True)
    load_after = os.getloadavg()
    cores = os.cpu_count() or 1
    title = (
        f"tierscope benchmarks ({'quick' if quick else 'full'}; {cores} cores; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after; {time.perf_counter() - started:.0f} s)"
    )
    render(figures, title)
    if max(load_before[0], load_after[0]) > cores:
        print(f"note: the machine was busy (load above {cores} cores): times are inflated; compare runs with care.")
    if json_path:
        meta = {
            "quick": quick,
            "sections": chosen,
            "repeat": rep,
            "cores": cores,
            "load_average_before": load_before,
            "load_average_after": load_after,
            "python": platform.python_version(),
            "polars": pl.__version__,
            "platform": platform.platform(),
            "checkout": str(REPO),
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        write_json(json_path, figures, meta)
        print(f"wrote {json_path}")


if __name__ == "__main__":
    app()
