"""The decay of freed pages in polars' allocator (jemalloc), set when this module is imported: by
:mod:`tierscope.cli`, before any command loads polars (jemalloc reads ``_RJEM_MALLOC_CONF`` when
polars' library loads). A user's own ``_RJEM_MALLOC_CONF`` wins. Also, for ``collect``, one thread
for OpenBLAS (:data:`COLLECT_BLAS_THREADS`), unless the user set ``OPENBLAS_NUM_THREADS``; and for every
other command, glibc's heap keeps the pages numpy's arrays free (:func:`keep_freed_heap`)."""

from __future__ import annotations

import ctypes
import os
import platform
import sys

#: Every command but ``collect``. jemalloc hands freed pages back to the system within about a
#: second, and the analysis frees a batch of runs' frames and allocates the next one's every few
#: hundred ms, so every batch faulted its pages in afresh (`summary` of 10 M records: 600,000 page
#: faults, 3 s of system time, a fifth of its CPU). Kept 3 s they are mostly reused (about 10 % less
#: CPU); 10 s (jemalloc's own default) saves a little more but holds more pages while a run of 20 M
#: records is taken in pieces (peak RSS 1.0 -> 1.19 GB). One arena for every thread (jemalloc gives
#: each of polars' threads its own, up to 4 a core): pages one thread freed are reused by the next,
#: not held beside it until they decay; the pieced 20 M-record summary holding every freed page
#: holds 1.04 GB so, 1.31 GB with an arena a thread.
MALLOC_CONF = "dirty_decay_ms:3000,narenas:1"
#: ``collect``: it frees a batch's frames (about 15 times the batch's 32 MB) and allocates the next
#: one's within a second; kept 10 s, dirty and then muzzy (``MADV_FREE``), they are reused instead of
#: faulted in afresh. Collect of the 2,000,000-line log (medians of interleaved runs): 217,000 -> 149,000
#: page faults, 1.28 -> 0.98 s of system time, 7.8 -> 7.2 s of CPU; peak RSS 527 -> 589 MB, bounded
#: by the batches whatever the log's size.
COLLECT_MALLOC_CONF = "dirty_decay_ms:10000,muzzy_decay_ms:10000"
#: ``collect``'s OpenBLAS threads (``OPENBLAS_NUM_THREADS``, read when numpy loads). A collect does no
#: linear algebra, but pyarrow's import loads numpy, whose OpenBLAS starts a thread per core that
#: spins waiting for work: 50-100 ms of CPU on the 2,000,000-line log (1.5-3 % of its samples), on
#: the cores the parse and the store share.
COLLECT_BLAS_THREADS = "1"


def command(argv: list[str]) -> str | None:
    """The command ``argv`` (``sys.argv``) runs: its first argument that is not an option (the top
    level has only ``--version``), or None."""
    return next((arg for arg in argv[1:] if not arg.startswith("-")), None)


_COLLECT = command(sys.argv) == "collect"
os.environ.setdefault("_RJEM_MALLOC_CONF", COLLECT_MALLOC_CONF if _COLLECT else MALLOC_CONF)
if _COLLECT:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", COLLECT_BLAS_THREADS)


#: glibc's ``mallopt`` parameters (``<malloc.h>``): the size from which an allocation is its own mapping,
#: and the free space at the heap's top beyond which it is handed back to the system.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: numpy's arrays of a batch (a few MB each: 400,000 rows of 8 bytes) come from glibc's malloc, not from
#: polars' jemalloc. By default glibc maps each such array on its own and unmaps it when freed, so every
#: array of every batch faults its pages in afresh: ``summary`` of 10 M records took 500,000 page faults
#: and 1.4 s of system time, a seventh of its CPU. Arrays under 64 MiB taken from the heap, and up to
#: 256 MiB of free heap kept, are reused instead: 200,000 faults, 0.8 s, peak RSS alike. Larger arrays (a
#: run of 20 M records' columns) are still mapped and unmapped on their own, so they add nothing held.
HEAP_MMAP_BYTES = 64 << 20
HEAP_TRIM_BYTES = 256 << 20


def keep_freed_heap() -> bool:
    """Set glibc's thresholds to :data:`HEAP_MMAP_BYTES` and :data:`HEAP_TRIM_BYTES` (``mallopt``), unless
    the user set either (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``) or the C library is not
    glibc. Returns whether they were set."""
    if platform.libc_ver()[0] != "glibc" or {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"} & set(os.environ):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, HEAP_MMAP_BYTES)) and bool(mallopt(_M_TRIM_THRESHOLD, HEAP_TRIM_BYTES))


if not _COLLECT:
    keep_freed_heap()
