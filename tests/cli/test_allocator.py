"""tierscope.cli.allocator: ``collect`` keeps freed pages 10 s, every other command 3 s, and a
user's own ``_RJEM_MALLOC_CONF`` wins; set before polars loads (jemalloc reads it then)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tierscope.cli.allocator import COLLECT_BLAS_THREADS, COLLECT_MALLOC_CONF, MALLOC_CONF, command

_SHOW = (
    "import os, sys; sys.argv = ['tierscope', *sys.argv[1:]]; import tierscope.cli; "
    "print(os.environ['_RJEM_MALLOC_CONF']); print('polars' in sys.modules)"
)


def _conf(*argv: str, user: str | None = None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    if user is not None:
        env["_RJEM_MALLOC_CONF"] = user
    done = subprocess.run([sys.executable, "-c", _SHOW, *argv], env=env, capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.mark.parametrize(
    ("argv", "want"),
    [
        (["tierscope", "collect", "files", "a.log"], "collect"),
        (["tierscope", "--version"], None),
        (["tierscope"], None),
        (["tierscope", "summary", "-d", "collect"], "summary"),
    ],
)
def test_command(argv: list[str], want: str | None) -> None:
    assert command(argv) == want


def test_collect_keeps_pages_longer_than_the_rest() -> None:
    # Printed by the process itself: the setting is in place, and polars not loaded yet, once
    # tierscope.cli is imported.
    assert _conf("collect", "files", "a.log") == [COLLECT_MALLOC_CONF, "False"]
    assert _conf("summary", "-d", "collect") == [MALLOC_CONF, "False"]
    assert _conf("collect", user="dirty_decay_ms:0") == ["dirty_decay_ms:0", "False"]


def test_collect_starts_no_blas_threads_unless_the_user_asks() -> None:
    show = (
        "import os, sys; sys.argv = ['tierscope', *sys.argv[1:]]; import tierscope.cli; "
        "print(os.environ.get('OPENBLAS_NUM_THREADS', '-'))"
    )

    def threads(*argv: str, user: str | None = None) -> str:
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if user is not None:
            env["OPENBLAS_NUM_THREADS"] = user
        done = subprocess.run([sys.executable, "-c", show, *argv], env=env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    assert threads("collect", "files", "a.log") == COLLECT_BLAS_THREADS
    assert threads("summary", "-d", "collect") == "-"
    assert threads("collect", "files", "a.log", user="4") == "4"


_HEAP = """
import ctypes, sys
sys.argv = ['tierscope', *sys.argv[1:]]
import tierscope.cli

class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
libc.malloc.restype = ctypes.c_void_p
before = libc.mallinfo2().hblks  # allocations that are mappings of their own
held = libc.malloc(8 << 20)  # a batch's array of a million float64
print(libc.mallinfo2().hblks - before)
libc.free(ctypes.c_void_p(held))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_analysis_commands_take_arrays_from_the_heap_unless_the_user_sets_glibc() -> None:
    # An 8 MB allocation: its own mapping under glibc's default thresholds (mapped at 128 KB, raised to the
    # largest freed mapping), from the heap with the analysis' (under 64 MiB); collect and a user's own
    # MALLOC_MMAP_THRESHOLD_ keep glibc's.
    def mappings(*argv: str, user: str | None = None) -> int:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
        if user is not None:
            env["MALLOC_MMAP_THRESHOLD_"] = user
        done = subprocess.run([sys.executable, "-c", _HEAP, *argv], env=env, capture_output=True, text=True, check=True)
        return int(done.stdout.split()[-1])

    assert mappings("summary", "-d", "x") == 0
    assert mappings("collect", "files", "a.log") == 1
    assert mappings("summary", "-d", "x", user="131072") == 1
