"""The decay of freed pages in polars' allocator (jemalloc), set when this module is imported: by
:mod:`tierscope.cli`, before any command loads polars (jemalloc reads ``_RJEM_MALLOC_CONF`` when
polars' library loads). A user's own ``_RJEM_MALLOC_CONF`` wins. Also, for ``collect``, one thread
for OpenBLAS (:data:`COLLECT_BLAS_THREADS`), unless the user set ``OPENBLAS_NUM_THREADS``."""

from __future__ import annotations

import os
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
