"""Step records written without polars: the data file a small append's collect stores
(:mod:`tierscope.collector.small_append`), byte for byte the one :func:`tierscope.dataset.store.write_temp`
writes for the same rows.

A process that imports polars for one small file pays ~0.16 CPU-s for the import alone; this module
imports only pyarrow (:func:`tierscope.dataset.store_options.import_writer_without_numpy` is the caller's to
call first). The columns and their Arrow types are those polars hands pyarrow for
:data:`tierscope.dataset.schema.STEP_SCHEMA` without ``run_id`` (the partition's name holds it), and the
writer's options :func:`tierscope.dataset.store._writer_options`'s; ``tests/collector/test_small_append.py``
checks both, and that the files' bytes are equal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The step table's columns as a data file holds them (:data:`tierscope.dataset.schema.STEP_SCHEMA` but
#: ``run_id``, in its order) and the Arrow type polars writes each as.
STEP_FILE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("tier", "large_string"),
    ("role", "large_string"),
    ("task_index", "int32"),
    ("step", "int64"),
    ("local_step", "int64"),
    ("loss", "double"),
    ("accuracy", "double"),
    ("eval_loss", "double"),
    ("eval_accuracy", "double"),
    ("elapsed_s", "double"),
    ("interval_s", "double"),
    ("global_steps_per_s", "double"),
    ("local_steps_per_s", "double"),
    ("examples_per_s", "double"),
    ("rate_derived", "bool"),
    ("position", "int64"),
    ("timestamp", "timestamp[us, tz=UTC]"),
    ("source", "large_string"),
    ("source_offset", "int64"),
    ("entry_id", "large_string"),
    ("format", "large_string"),
    ("pid", "int64"),
    ("examples_unit", "large_string"),
)

#: Written without a dictionary (see :data:`tierscope.dataset.store._PLAIN_TYPES`): growing integers,
#: clocks and booleans.
_PLAIN = ("int64", "timestamp[us, tz=UTC]", "bool")


def writer_options() -> dict[str, Any]:
    """The options :func:`tierscope.dataset.store._writer_options` gives ``write_table`` for a step file."""
    from tierscope.dataset.store_options import DICTIONARY_PAGE_BYTES

    return {
        "compression": "zstd",
        "compression_level": 1,
        "write_statistics": True,
        "write_page_checksum": True,
        "use_dictionary": [name for name, kind in STEP_FILE_COLUMNS if kind not in _PLAIN],
        "dictionary_pagesize_limit": DICTIONARY_PAGE_BYTES,
    }


def step_table(columns: dict[str, list[Any]], constants: dict[str, str]) -> Any:
    """A pyarrow table of :data:`STEP_FILE_COLUMNS`: ``columns``' values (lists of one length), each
    of ``constants`` (``tier``, ``source``) on every row, nulls elsewhere; the footer's
    ``tierscope.sources`` as :func:`~tierscope.dataset.store.write_temp` writes it."""
    import pyarrow as pa

    from tierscope.dataset.store_options import SOURCES_KEY

    rows = len(next(iter(columns.values())))
    arrays = []
    for name, kind in STEP_FILE_COLUMNS:
        dtype = pa.timestamp("us", tz="UTC") if kind.startswith("timestamp") else pa.type_for_alias(kind)
        if name in columns:
            arrays.append(pa.array(columns[name], type=dtype))
        elif name in constants and constants[name] is not None:
            arrays.append(pa.array([constants[name]] * rows, type=dtype))
        else:
            arrays.append(pa.nulls(rows, type=dtype))
    table = pa.Table.from_arrays(arrays, names=[name for name, _ in STEP_FILE_COLUMNS])
    sources = [constants["source"]] if constants.get("source") is not None and rows else []
    return table.replace_schema_metadata({SOURCES_KEY: json.dumps(sources).encode()})


#: What ``pyarrow.parquet.write_table`` gives its Parquet writer where the caller says nothing, and the
#: writer's own default differs (:func:`write_step_file` calls the writer directly).
_WRITE_TABLE_DEFAULTS: dict[str, Any] = {"version": "2.6", "data_page_version": "1.0", "writer_engine_version": "V2"}


def write_step_file(table: Any, path: Path) -> None:
    """Write ``table`` (:func:`step_table`) to ``path`` as the store writes a step file: the bytes
    ``pyarrow.parquet.write_table(table, path, **writer_options())`` writes.

    It calls the writer that function wraps (``pyarrow._parquet``) on a file it opens itself, because
    ``pyarrow.parquet`` imports ``pyarrow.fs`` (its S3 module, ``ssl``) to open a local path: ~0.025 CPU-s of
    a small append's collect. Raises :class:`OSError` if ``path`` cannot be written."""
    import pyarrow as pa

    try:
        from pyarrow._parquet import ParquetWriter
    except ImportError:  # a private module: should a pyarrow release move it, the public writer still works
        import pyarrow.parquet as pq

        pq.write_table(table, path, **writer_options())
        return
    with pa.OSFile(str(path), "wb") as sink:
        writer = ParquetWriter(sink, table.schema, **_WRITE_TABLE_DEFAULTS, **writer_options())
        writer.write_table(table, row_group_size=None)
        writer.close()


def read_footer(path: Path) -> Any:
    """The footer of the Parquet file ``path`` (``pyarrow.parquet.read_metadata(path)``, without importing
    ``pyarrow.parquet``: see :func:`write_step_file`). Raises :class:`OSError` if it cannot be read, and
    pyarrow's ``ArrowInvalid`` (a :class:`ValueError`) if it is not Parquet."""
    import pyarrow as pa

    try:
        from pyarrow._parquet import ParquetReader
    except ImportError:  # see write_step_file
        import pyarrow.parquet as pq

        return pq.read_metadata(path)
    with pa.OSFile(str(path), "rb") as source:
        reader = ParquetReader()
        reader.open(source)
        return reader.metadata
