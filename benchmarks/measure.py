"""Running one command as a whole process and measuring it: wall time, CPU time, peak RSS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from benchmarks import USER_MALLOC_CONF

T = TypeVar("T")

#: The checkout this file belongs to: subprocesses import the code from here, not from an install.
REPO = Path(__file__).resolve().parent.parent


class BenchError(RuntimeError):
    """A benchmarked command failed, or produced a wrong result (the figure would be meaningless)."""


@dataclass(frozen=True)
class Proc:
    """One finished process: ``wall_s`` and ``cpu_s`` (user + system, from the child's own rusage) in
    seconds, ``peak_rss_mb`` (the largest resident set it reached, in MB of 10^6 bytes), its output
    and exit code, and ``load_1m``: the machine's 1-minute load average when it ended (what else ran
    beside it: wall time grows with it, CPU time barely)."""

    argv: tuple[str, ...]
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    stdout: str
    stderr: str
    returncode: int
    timed_out: bool = False
    load_1m: float = float("nan")


def env() -> dict[str, str]:
    """The environment for benchmarked processes: this checkout first on ``PYTHONPATH``, and
    bytecode cached as an installed package has it (``PYTHONDONTWRITEBYTECODE`` set in a
    shell would make every start-up compile tierscope's modules anew, 0.1 s and more), and the
    allocator setting as the user's shell has it, not as importing polars here left it
    (:data:`benchmarks.USER_MALLOC_CONF`)."""
    out = dict(os.environ)
    out.pop("PYTHONDONTWRITEBYTECODE", None)
    out.pop("_RJEM_MALLOC_CONF", None)
    if USER_MALLOC_CONF is not None:
        out["_RJEM_MALLOC_CONF"] = USER_MALLOC_CONF
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), out.get("PYTHONPATH")) if p)
    return out


def python(*args: str | Path) -> list[str]:
    """``python ARGS`` with the interpreter running the benchmark."""
    return [sys.executable, *map(str, args)]


def tierscope(*args: str | Path) -> list[str]:
    """The ``tierscope`` command, as ``python -m tierscope`` of the interpreter running the benchmark
    (which must have tierscope installed: the rooms are mapped into the package at install)."""
    return python("-m", "tierscope", *args)


def run(argv: list[str], check: bool = True, timeout_s: float = 0.0) -> Proc:
    """Run ``argv`` to the end and measure it, through :mod:`benchmarks.spawn` (see there why).

    Peak RSS is ``wait4``'s for this one child (``getrusage(RUSAGE_CHILDREN)`` would give
    the largest of every child so far). Raises :class:`BenchError` if ``check`` and the exit
    code is not 0, with the end of its stderr. A command still running after ``timeout_s``
    seconds (0: no limit) is killed and comes back with ``timed_out`` (never an error).
    """
    with tempfile.TemporaryDirectory() as tmp:
        usage_path = Path(tmp) / "usage.json"
        launcher = [sys.executable, "-S", str(Path(__file__).with_name("spawn.py")), str(usage_path), str(timeout_s)]
        done = subprocess.run([*launcher, *argv], capture_output=True, env=env(), cwd=REPO, check=False)
        usage = json.loads(usage_path.read_text()) if usage_path.exists() else {}
    result = Proc(
        argv=tuple(argv),
        wall_s=usage.get("wall_s", float("nan")),
        cpu_s=usage.get("cpu_s", float("nan")),
        peak_rss_mb=usage.get("peak_rss_kb", 0) * 1024 / 1e6,  # Linux reports kilobytes
        stdout=done.stdout.decode(errors="replace"),
        stderr=done.stderr.decode(errors="replace"),
        returncode=done.returncode,
        timed_out=usage.get("timed_out", False),
        load_1m=os.getloadavg()[0],
    )
    if check and result.returncode != 0 and not result.timed_out:
        raise BenchError(f"{' '.join(argv)} exited with {result.returncode}:\n{result.stderr[-2000:]}")
    return result


def best(runs: list[Proc]) -> Proc:
    """The fastest of repeated runs: other load on the machine only ever adds time."""
    return min(runs, key=lambda p: p.wall_s)


def middle(runs: list[Proc]) -> Proc:
    """The run of median CPU time (the lower middle of an even count): CPU seconds move little with
    other load on the machine, where wall time moves several-fold, so the median of interleaved runs
    is what two commands are compared by."""
    ordered = sorted(runs, key=lambda p: p.cpu_s)
    return ordered[(len(ordered) - 1) // 2]


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Seconds ``fn()`` took, and what it returned."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value
