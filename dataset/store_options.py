"""Constants of the dataset's Parquet files, and the writer's import, that a writer without polars needs too
(:mod:`tierscope.dataset.arrow_steps`); :mod:`tierscope.dataset.store` imports polars, this module nothing."""

from __future__ import annotations

import sys

#: Largest dictionary page per column chunk: a column whose values repeat (a role, a loss printed
#: with three decimals, a rate) stays dictionary-encoded; one whose values are nearly all distinct
#: (elapsed seconds) gives up after this many bytes instead of building a dictionary as large as it.
DICTIONARY_PAGE_BYTES = 128 * 1024

#: Footer key of every data file written since checksums: the JSON list of the ``source``
#: values its rows came from (what ``doctor --fix`` asks the collector to re-read).
SOURCES_KEY = b"tierscope.sources"


def import_writer() -> None:
    """Import what :func:`tierscope.dataset.store.write_temp` writes with (pyarrow): a caller about to write can have it
    done ahead, on a thread of its own."""
    import pyarrow.parquet  # noqa: F401


def import_writer_without_numpy() -> None:
    """Import the writer (:func:`import_writer`) without numpy, when this process has loaded neither.

    pyarrow imports numpy if it can (numpy is optional to it since pyarrow 16), which is most of
    pyarrow's import (0.06 of 0.10 CPU-s) and starts OpenBLAS; writing polars frames to Parquet
    uses none of it. Afterwards pyarrow converts no numpy arrays in this process (numpy itself can
    still be imported), so only a process that writes the dataset and nothing else (a command line
    ``collect``) should call this, before any other thread imports.
    """
    if "pyarrow" in sys.modules or "numpy" in sys.modules:
        return import_writer()
    sys.modules["numpy"] = None  # type: ignore[assignment]  # `import numpy` raises ImportError meanwhile
    try:
        import_writer()
    finally:
        if sys.modules.get("numpy", False) is None:
            del sys.modules["numpy"]
