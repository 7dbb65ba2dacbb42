"""BigQuery over a dataset on Cloud Storage: the ``CREATE EXTERNAL TABLE`` statements of its tables.

Each table (steps, events, rejects, runs: :data:`tierscope.dataset.store.TABLES`) is a
hive-partitioned external table over its ``part-*.parquet`` objects, ``run_id`` its
partition column (a directory ``run_id=<run>``, not a column of the files), the other
columns typed as the files store them (:data:`BIGQUERY_TYPES`). Syntax as documented at
https://cloud.google.com/bigquery/docs/reference/standard-sql/data-definition-language#create_external_table_statement
and https://cloud.google.com/bigquery/docs/hive-partitioned-queries (read 2026-12-01).

The ``uris`` wildcard ends in ``.parquet``, so a long run id's ``.run_id`` marker object
(:data:`tierscope.dataset.store.RUN_ID_FILE`) is never read as data.
"""

from __future__ import annotations

import re

import polars as pl

from tierscope.dataset.store import TABLES, Table
from tierscope.errors import UsageError

#: Partition column of every table (the hive directory key).
PARTITION_COLUMN = "run_id"

#: BigQuery's type for each Parquet column type tierscope writes (a polars dtype class).
BIGQUERY_TYPES: dict[type[pl.DataType], str] = {
    pl.String: "STRING",
    pl.Int32: "INT64",  # BigQuery has one integer type; Parquet INT32 reads as INT64
    pl.Int64: "INT64",
    pl.Float64: "FLOAT64",
    pl.Boolean: "BOOL",
    pl.Date: "DATE",
}

#: A BigQuery table name: ``dataset.table`` or ``project.dataset.table`` (projects may hold ``-``).
_TABLE_NAME = re.compile(r"^(?:[A-Za-z0-9_.:-]+\.)?[A-Za-z0-9_]+\.([A-Za-z0-9_]*)steps$")


def bigquery_type(dtype: pl.DataType) -> str:
    """BigQuery's type for a column written as ``dtype``: a UTC Datetime is TIMESTAMP (Parquet
    ``isAdjustedToUTC``), a Datetime without zone DATETIME. Raises ``KeyError`` for another dtype."""
    if isinstance(dtype, pl.Datetime):
        return "TIMESTAMP" if dtype.time_zone else "DATETIME"
    return BIGQUERY_TYPES[type(dtype)]


def table_names(steps_table: str) -> dict[str, str]:
    """Each tierscope table's BigQuery name, from the steps table's (``project.ds.steps`` ->
    ``project.ds.events``...; ``project.ds.team_steps`` -> ``project.ds.team_events``...).
    Raises :class:`~tierscope.errors.UsageError` for a name that does not end in ``steps``."""
    match = _TABLE_NAME.match(steps_table)
    if match is None:
        raise UsageError(
            f"--table {steps_table!r} is not a BigQuery name of the steps table; give it as "
            "project.dataset.steps (or project.dataset.PREFIXsteps: the other tables get the same prefix)"
        )
    stem = steps_table[: -len("steps")]
    return {name: stem + name for name in TABLES}


#: The characters of a Cloud Storage bucket name (https://cloud.google.com/storage/docs/buckets#naming;
#: its lengths are the server's to check).
_BUCKET_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$")


def _literal(text: str) -> str:
    """``text`` as a BigQuery string literal: a quote or backslash in an object prefix is
    escaped, so it cannot end the literal and add SQL of its own."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def external_table_ddl(dataset_url: str, table: Table, name: str) -> str:
    """The ``CREATE OR REPLACE EXTERNAL TABLE`` statement of ``table`` of the dataset at
    ``dataset_url`` (``gs://bucket/prefix``) as the BigQuery table ``name``."""
    prefix = f"{dataset_url.rstrip('/')}/{table.name}"
    columns = ",\n".join(
        f"  {column} {bigquery_type(dtype)}" for column, dtype in table.schema.items() if column != PARTITION_COLUMN
    )
    partition = bigquery_type(table.schema[PARTITION_COLUMN])
    return (
        f"CREATE OR REPLACE EXTERNAL TABLE `{name}` (\n{columns}\n)\n"
        f"WITH PARTITION COLUMNS (\n  {PARTITION_COLUMN} {partition}\n)\n"
        "OPTIONS (\n"
        "  format = 'PARQUET',\n"
        f"  uris = [{_literal(prefix + '/*.parquet')}],\n"
        f"  hive_partition_uri_prefix = {_literal(prefix)},\n"
        "  require_hive_partition_filter = false\n"
        ");"
    )


def bigquery_ddl(dataset_url: str, steps_table: str) -> list[str]:
    """One statement per table of the dataset at ``dataset_url``, named after ``steps_table``
    (:func:`table_names`). Raises :class:`~tierscope.errors.UsageError` for a dataset that is not a ``gs://``
    URL (BigQuery reads Cloud Storage), names an invalid bucket, holds a control character, or for a
    malformed table name. A quote or backslash in the prefix is escaped in the string literals."""
    if not dataset_url.startswith("gs://") or len(dataset_url.rstrip("/")) <= len("gs://"):
        raise UsageError(
            f"--dataset {dataset_url!r} is not on Cloud Storage; BigQuery reads gs://bucket/prefix URLs "
            "(copy a local dataset there with `gcloud storage rsync -r DIR gs://bucket/prefix`)"
        )
    bucket = dataset_url[len("gs://") :].split("/", 1)[0]
    if not _BUCKET_NAME.match(bucket) or any(ord(c) < 0x20 or ord(c) == 0x7F for c in dataset_url):
        raise UsageError(
            f"--dataset {dataset_url!r} is not a Cloud Storage URL BigQuery can read: a bucket name is "
            "lowercase letters, digits, '.', '_' or '-', and the prefix holds no control characters"
        )
    names = table_names(steps_table)
    return [external_table_ddl(dataset_url, table, names[table.name]) for table in TABLES.values()]
