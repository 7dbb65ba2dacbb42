"""Throughput of the format chain on a plain cloudml log (MB/s), with and without launcher prefixes.

Run: ``PYTHONPATH=. python benchmarks/formats_chain.py``. Not a test: timings vary by machine.
"""

from __future__ import annotations

import time

import polars as pl

from tierscope.collector.formats import ParseContext, parse_lines, sniff_format
from tierscope.collector.formats.cloudml import CloudMLSamples

LINE = "Train [worker/3], step {}:loss:2.319, accuracy:0.290 (3.093 sec) 64.662 global_steps/s, 3.556 local_steps/s"


def frame(n: int, prefix: str = "") -> pl.DataFrame:
    lines = pl.Series("line", [prefix + LINE.format(i) for i in range(n)])
    return pl.DataFrame({"source_offset": pl.int_range(1, n + 1, eager=True), "line": lines})


def rate(lines: pl.DataFrame, run: object) -> float:
    size = lines.get_column("line").str.len_bytes().sum() / 1e6
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return size / best


def main() -> None:
    n = 500_000
    plain = frame(n)
    tagged = frame(n, "[worker-3] ")
    first = sniff_format(plain.get_column("line"))
    print(f"{n} lines, sniffed {first}")
    only = CloudMLSamples()
    tagless = plain.with_columns(tag=None)
    print(f"cloudml parser alone:         {rate(plain, lambda: only.parse(tagless, ParseContext())):7.1f} MB/s")
    print(f"chain, plain cloudml:         {rate(plain, lambda: parse_lines(plain, first=first)):7.1f} MB/s")
    print(f"chain, --format cloudml:      {rate(plain, lambda: parse_lines(plain, only='cloudml')):7.1f} MB/s")
    print(f"chain, [worker-3] prefixed:   {rate(tagged, lambda: parse_lines(tagged, first=first)):7.1f} MB/s")


if __name__ == "__main__":
    main()
