"""A data file whose pages do not decode, though its footer reads (a file named without a digest:
written before digests, or by another tool), stops an analysis with the error that names it and
what to do, as ``Dataset.read`` does, not with a polars traceback."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.support.ingest_helpers import collect, write_steps
from tierscope.analysis import analyze
from tierscope.dataset.errors import DatasetCorruptError
from tierscope.dataset.store import TABLES, Dataset, check_file


def _undigested_with_a_damaged_page(ds: Dataset) -> Path:
    """The run's one steps file rewritten without a digest in its name, a byte of its pages flipped."""
    (written,) = ds.files("steps")
    table = pq.read_table(written)
    written.unlink()
    plain = written.with_name("part-legacy.parquet")
    pq.write_table(table.drop_columns(["run_id"]) if "run_id" in table.column_names else table, plain)
    meta = pq.read_metadata(plain)
    step = [meta.schema.column(j).name for j in range(meta.num_columns)].index("step")
    chunk = meta.row_group(0).column(step)
    data = bytearray(plain.read_bytes())
    start = chunk.data_page_offset
    data[start : start + 16] = b"\xff" * 16  # the step column's first page header: no reader decodes it
    plain.write_bytes(bytes(data))
    assert check_file(plain, TABLES["steps"]) is None  # the footer check a scan makes passes
    assert check_file(plain, TABLES["steps"], deep=True) is not None  # its pages do not decode
    return plain


def test_a_page_that_does_not_decode_is_named_by_the_analysis(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    write_steps(log, range(1, 2001))
    ds = Dataset(tmp_path / "ds")
    collect(ds, log)
    damaged = _undigested_with_a_damaged_page(ds)
    with pytest.raises(DatasetCorruptError, match="tierscope doctor") as caught:
        analyze(Dataset(tmp_path / "ds"))
    assert caught.value.path == damaged
