"""What a collect stored, as digests to compare before and after a change to the collector.

    python -m benchmarks.collect_digest DATASET [TABLE ...]     # default tables: steps rejects

Prints JSON, per table: ``rows``; ``content``, the SHA-256 of the rows as CSV in stored order
(files in name order, which is write order: the names begin with the time), every column of the
table's schema; ``schema``, the columns and dtypes as the dataset's reader returns them; and
``files``, what the Parquet footers say of every data file, file names left out (they hold the
time and a random part): the Arrow schema stored (names, types, nullability), rows per row group,
and per column chunk its codec, encodings and whether it has statistics (min, max, nulls). Two
collects of the same log by a collector that stores the same records and rejects, written the
same way, print the same JSON. Standard library, polars and pyarrow only.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from tierscope.dataset.store import TABLES, Dataset


def file_layout(path: Path) -> dict[str, Any]:
    """What ``path``'s footer says of how it is written (see the module doc)."""
    meta = pq.read_metadata(path)
    schema = pq.read_schema(path)
    groups = []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        columns = []
        for c in range(group.num_columns):
            chunk = group.column(c)
            stats = chunk.statistics
            columns.append(
                {
                    "column": chunk.path_in_schema,
                    "codec": chunk.compression,
                    "encodings": sorted(chunk.encodings),
                    "dictionary": chunk.has_dictionary_page,
                    "statistics": None
                    if stats is None
                    else {"min_max": stats.has_min_max, "nulls": stats.has_null_count},
                }
            )
        groups.append({"rows": group.num_rows, "columns": columns})
    fields = [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]
    keys = sorted(k.decode() for k in (schema.metadata or {}))
    return {"rows": meta.num_rows, "fields": fields, "metadata_keys": keys, "row_groups": groups}


def table_digest(dataset: Dataset, table: str) -> dict[str, Any]:
    """The digest of ``table`` in ``dataset`` (see the module doc)."""
    frame = dataset.read(table)
    content = hashlib.sha256(frame.write_csv().encode()).hexdigest()
    files = [file_layout(p) for p in dataset.files(table)]
    schema = {name: str(dtype) for name, dtype in frame.schema.items()}
    return {"rows": frame.height, "content": content, "schema": schema, "files": files}


def main(argv: list[str]) -> dict[str, Any]:
    root, tables = Path(argv[0]), argv[1:] or ["steps", "rejects"]
    unknown = set(tables) - set(TABLES)
    if unknown:
        raise SystemExit(f"no table {', '.join(sorted(unknown))}; choose from {', '.join(TABLES)}")
    dataset = Dataset(root)
    with pl.Config(set_fmt_float="full"):
        return {table: table_digest(dataset, table) for table in tables}


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    print(json.dumps(main(sys.argv[1:]), indent=1, sort_keys=True))
