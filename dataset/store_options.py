"""Constants, file names and the writer's import of the dataset's Parquet files, which a writer without polars needs too
(:mod:`tierscope.dataset.arrow_steps`); :mod:`tierscope.dataset.store` imports polars, this module nothing."""

from __future__ import annotations

import hashlib
import os
import re
import sys
import time
from pathlib import Path
from typing import BinaryIO

from tierscope.dataset import journal

#: Largest dictionary page per column chunk: a column whose values repeat (a role, a loss printed
#: with three decimals, a rate) stays dictionary-encoded; one whose values are nearly all distinct
#: (elapsed seconds) gives up after this many bytes instead of building a dictionary as large as it.
DICTIONARY_PAGE_BYTES = 128 * 1024

#: Footer key of every data file written since checksums: the JSON list of the ``source``
#: values its rows came from (what ``doctor --fix`` asks the collector to re-read).
SOURCES_KEY = b"tierscope.sources"


def import_writer(module: str = "pyarrow.parquet") -> None:
    """Import what :func:`tierscope.dataset.store.write_temp` writes with (pyarrow): a caller about to write can have it
    done ahead, on a thread of its own. ``module``: ``pyarrow._parquet`` for a writer that calls pyarrow's Parquet
    writer itself (:func:`tierscope.dataset.arrow_steps.write_step_file`)."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:  # pyarrow._parquet is private: a release that moves it leaves the public writer
        import pyarrow.parquet  # noqa: F401


def import_writer_without_numpy(module: str = "pyarrow.parquet") -> None:
    """Import the writer (:func:`import_writer`, ``module``) without numpy, when this process has loaded neither.

    pyarrow imports numpy if it can (numpy is optional to it since pyarrow 16), which is most of
    pyarrow's import (0.06 of 0.10 CPU-s) and starts OpenBLAS; writing polars frames to Parquet
    uses none of it. Afterwards pyarrow converts no numpy arrays in this process (numpy itself can
    still be imported), so only a process that writes the dataset and nothing else (a command line
    ``collect``) should call this, before any other thread imports.
    """
    if "pyarrow" in sys.modules or "numpy" in sys.modules:
        return import_writer(module)
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` raises ImportError meanwhile
    try:
        import_writer(module)
    finally:
        if sys.modules.get("numpy", False) is None:
            del sys.modules["numpy"]


def new_part_path(directory: Path, stamp: str | None = None) -> Path:
    """A fresh, unique ``part-<UTC time>-<random>.parquet`` name in ``directory`` (the digest
    of the content is added by :func:`write_temp`'s caller once the file is written).

    The time has microseconds, so a partition's files sort (as readers list them) in the order
    they were written: the records of a log appended batch after batch are read back in log
    order, which the analysis relies on where it can (:mod:`tierscope.analysis.records`).
    ``stamp``: the time part to use instead of now (:func:`part_stamp` of another file).
    """
    if stamp is None:
        now = time.time_ns() // 1000
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 1_000_000)) + f"{now % 1_000_000:06d}Z"
    return directory / f"part-{stamp}-{os.urandom(6).hex()}.parquet"  # uuid4's first 12 hex digits, without uuid


_STAMP = re.compile(r"^part-(\d{8}T\d{6,12}Z)-")


def part_stamp(path: Path) -> str | None:
    """The time part of a ``part-<UTC time>-...`` file name (None: a name without one)."""
    found = _STAMP.match(path.name.removeprefix(journal.STAGED_PREFIX))
    return found.group(1) if found else None


#: Hex digits of the SHA-256 of a data file's bytes kept in its name (64 bits: random damage
#: passes unseen with probability 2^-64).
DIGEST_CHARS = 16
_DIGEST_NAME = re.compile(rf"^(?:{re.escape(journal.STAGED_PREFIX)})?part-.+-([0-9a-f]{{{DIGEST_CHARS}}})\.parquet$")


def file_digest(handle: BinaryIO) -> str:
    """The first :data:`DIGEST_CHARS` hex digits of the SHA-256 of ``handle``'s bytes (read from its start)."""
    handle.seek(0)
    return hashlib.file_digest(handle, "sha256").hexdigest()[:DIGEST_CHARS]


def named_digest(path: Path) -> str | None:
    """The digest recorded in a data file's name, or None for files written before digests."""
    found = _DIGEST_NAME.match(path.name)
    return found.group(1) if found else None


def with_digest(final: Path, digest: str) -> Path:
    """``part-<time>-<random>.parquet`` with ``-<digest>`` before the suffix."""
    return final.with_name(f"{final.stem}-{digest}{final.suffix}")
