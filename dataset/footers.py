"""What a data file's footer says of its columns, without reading them: rows, and per column the
least and greatest value and the nulls, from the row groups' statistics (as every Parquet writer
tierscope uses, pyarrow and polars, writes them).

A column a file lacks counts as all null (readers insert it so). A row group without statistics
for a column (another writer; a value too long for its statistics) leaves the column's figures
unknown for that file: the caller reads that file's values instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl


def column_statistics(
    files: Sequence[Path], run_of: Callable[[Path], str], columns: dict[str, pl.DataType]
) -> pl.DataFrame:
    """One row per file of ``files``: ``run_id`` (String, ``run_of(file)``), ``rows`` (Int64) and per
    column ``c`` of ``columns`` (name: dtype) ``c_min``, ``c_max`` (that dtype; null: all null or
    unknown), ``c_nulls`` (Int64) and ``c_known`` (Boolean: every row group states them).
    Raises :class:`OSError` for an unreadable footer."""
    # the footer alone, through pyarrow's Parquet reader itself: polars has no reader for statistics, and
    # pyarrow.parquet imports pyarrow.fs (its S3 and HDFS modules, ssl) to open a local path
    from tierscope.dataset.arrow_steps import read_footer

    rows: list[dict[str, object]] = []
    for path in files:
        meta = read_footer(path)
        names = [meta.schema.column(j).path for j in range(meta.num_columns)]
        row: dict[str, object] = {"run_id": run_of(path), "rows": meta.num_rows}
        for name, dtype in columns.items():
            row.update(_column(meta, names.index(name) if name in names else None, name, dtype))
        rows.append(row)
    schema: dict[str, pl.DataType] = {"run_id": pl.String(), "rows": pl.Int64()}
    for name, dtype in columns.items():
        schema |= {
            f"{name}_min": dtype,
            f"{name}_max": dtype,
            f"{name}_nulls": pl.Int64(),
            f"{name}_known": pl.Boolean(),
        }
    return pl.DataFrame(rows, schema=schema)


#: The Python type of a statistic a column of each dtype must have (another is taken as unknown).
_PYTHON_TYPES: dict[type[pl.DataType], type] = {pl.String: str, pl.Int64: int, pl.Int32: int}


def _column(meta: object, j: int | None, name: str, dtype: pl.DataType) -> dict[str, object]:
    """The figures of column ``name`` (index ``j`` in the file, None: absent) of a file's ``meta``."""
    want = _PYTHON_TYPES.get(type(dtype), object)
    low = high = None
    nulls = 0
    if j is None:  # not in the file: all null
        return {f"{name}_min": None, f"{name}_max": None, f"{name}_nulls": meta.num_rows, f"{name}_known": True}  # type: ignore[attr-defined]
    for g in range(meta.num_row_groups):  # type: ignore[attr-defined]
        group = meta.row_group(g)  # type: ignore[attr-defined]
        stats = group.column(j).statistics
        if stats is None or not stats.has_null_count:
            return {f"{name}_min": None, f"{name}_max": None, f"{name}_nulls": None, f"{name}_known": False}
        nulls += stats.null_count
        if stats.has_min_max:
            if not (isinstance(stats.min, want) and isinstance(stats.max, want)):
                return {f"{name}_min": None, f"{name}_max": None, f"{name}_nulls": None, f"{name}_known": False}
            low = stats.min if low is None else min(low, stats.min)
            high = stats.max if high is None else max(high, stats.max)
        elif stats.null_count != group.num_rows:  # values, but no bounds stated
            return {f"{name}_min": None, f"{name}_max": None, f"{name}_nulls": None, f"{name}_known": False}
    return {f"{name}_min": low, f"{name}_max": high, f"{name}_nulls": nulls, f"{name}_known": True}
