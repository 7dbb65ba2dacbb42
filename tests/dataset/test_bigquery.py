"""``tierscope dataset bigquery-ddl``: BigQuery's external tables over a dataset on Cloud Storage,
and the steady-state query of docs/team-dataset.md, run by DuckDB over the same Parquet, against ``summary``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.support import ROOT
from tierscope.analysis.steady_sql import steady_state_query
from tierscope.cli import app
from tierscope.dataset.bigquery import bigquery_ddl, table_names
from tierscope.dataset.schema import REJECT_SCHEMA
from tierscope.dataset.store import TABLES, Dataset
from tierscope.errors import UsageError

runner = CliRunner()

#: The steps table's statement, written out by hand from dataset/schema.py's STEP_SCHEMA (run_id,
#: the partition key, is a directory, not a column of the files) and BigQuery's DDL reference.
EXPECTED_STEPS = """\
CREATE OR REPLACE EXTERNAL TABLE `my-project.tierscope.steps` (
  tier STRING,
  role STRING,
  task_index INT64,
  step INT64,
  local_step INT64,
  loss FLOAT64,
  accuracy FLOAT64,
  eval_loss FLOAT64,
  eval_accuracy FLOAT64,
  elapsed_s FLOAT64,
  interval_s FLOAT64,
  global_steps_per_s FLOAT64,
  local_steps_per_s FLOAT64,
  examples_per_s FLOAT64,
  rate_derived BOOL,
  position INT64,
  timestamp TIMESTAMP,
  source STRING,
  source_offset INT64,
  entry_id STRING,
  format STRING,
  pid INT64,
  examples_unit STRING
)
WITH PARTITION COLUMNS (
  run_id STRING
)
OPTIONS (
  format = 'PARQUET',
  uris = ['gs://team-bucket/tierscope/steps/*.parquet'],
  hive_partition_uri_prefix = 'gs://team-bucket/tierscope/steps',
  require_hive_partition_filter = false
);"""


def test_bigquery_ddl_prints_one_statement_per_table() -> None:
    result = runner.invoke(
        app,
        [
            "dataset",
            "bigquery-ddl",
            "--dataset",
            "gs://team-bucket/tierscope/",
            "--table",
            "my-project.tierscope.steps",
        ],
    )
    assert result.exit_code == 0, result.output
    statements = result.output.strip().split("\n\n")
    assert statements[0] == EXPECTED_STEPS
    names = [re.match(r"CREATE OR REPLACE EXTERNAL TABLE `([^`]+)`", s).group(1) for s in statements]  # type: ignore[union-attr]
    assert names == [f"my-project.tierscope.{t}" for t in ("steps", "events", "rejects", "runs")]
    assert "  date DATE,\n" in statements[3] and "  collected_at TIMESTAMP\n" in statements[3]


def test_the_tables_are_named_after_the_steps_table_and_bad_arguments_are_usage_errors() -> None:
    assert table_names("ds.team_steps") == {t: f"ds.team_{t}" for t in ("steps", "events", "rejects", "runs")}
    wrong_table = runner.invoke(app, ["dataset", "bigquery-ddl", "-d", "gs://b/ds", "--table", "p.ds.runs"])
    assert wrong_table.exit_code == 2
    assert "error: --table 'p.ds.runs' is not a BigQuery name of the steps table" in wrong_table.output
    local = runner.invoke(app, ["dataset", "bigquery-ddl", "-d", "ds", "--table", "p.ds.steps"])
    assert local.exit_code == 2
    assert "error: --dataset 'ds' is not on Cloud Storage" in local.output


#: BigQuery's type of each Parquet physical/logical type tierscope's files hold
#: (https://cloud.google.com/bigquery/docs/loading-data-cloud-storage-parquet, type conversions).
PARQUET_TO_BIGQUERY = {
    "string": "STRING",
    "large_string": "STRING",
    "int32": "INT64",
    "int64": "INT64",
    "double": "FLOAT64",
    "bool": "BOOL",
    "date32[day]": "DATE",
    "timestamp[us, tz=UTC]": "TIMESTAMP",
}


def test_column_types_are_those_of_the_parquet_files(dataset_2016: Dataset, tmp_path: Path) -> None:
    # The demo has no rejects: one written by the store the way a collect writes them.
    rejected = Dataset(tmp_path / "ds")
    row = {"run_id": "r", "source": "a.log", "source_offset": 3, "format": "cloudml", "reason": "bad", "raw": "x"}
    rejected.append("rejects", pl.DataFrame([row], schema=REJECT_SCHEMA))
    statements = bigquery_ddl("gs://b/ds", "p.ds.steps")
    for table, statement in zip(TABLES, statements, strict=True):
        columns = statement.split("(\n", 1)[1].split("\n)", 1)[0]
        declared = dict(line.strip().rstrip(",").split(" ") for line in columns.splitlines())
        root = rejected.root if table == "rejects" else dataset_2016.root
        part = next((root / table).rglob("part-*.parquet"))
        schema = pq.read_schema(part)
        stored = {field.name: PARQUET_TO_BIGQUERY[str(field.type)] for field in schema}
        assert declared == stored, table


def test_the_steady_state_query_gives_summarys_figures(dataset_2016: Dataset) -> None:
    # The 2016 logs record no evaluation or checkpoint save mid-run: the query reads the steps table alone,
    # so pauses logged as events (which summary leaves out) are not in its scope.
    duckdb = pytest.importorskip("duckdb", reason="duckdb is a test dependency (pip install '.[test]')")
    steps = f"read_parquet('{dataset_2016.root}/steps/*/part-*.parquet', hive_partitioning = true)"
    got = {run: rate for run, rate, _ in duckdb.sql(steady_state_query(steps, "duckdb")).fetchall()}
    summary = runner.invoke(app, ["summary", "-d", str(dataset_2016.root), "--json"])
    assert summary.exit_code == 0, summary.output
    expected = {r["run_id"]: r["steady_global_steps_per_s"] for r in json.loads(summary.output)}
    # premium_1 never trained (gcloud crashed): no steady rate in either.
    assert expected.pop("premium_1") is None
    assert got.keys() == expected.keys() == {"local", "basic", "standard_1"}
    for run, rate in expected.items():
        assert got[run] == pytest.approx(rate, rel=1e-12), run
    # By hand: basic's 9 steady intervals (its first is warm-up) log 4.734, 4.448, 4.682, 4.738,
    # 4.410, 4.808, 4.767, 4.480, 4.731 global steps/s over 100 steps each; the slowest step time,
    # 1/4.410 s, is 1.073x the median 1/4.731 s (within the stall bound: all kept), so the steady rate
    # is 900 steps / (100/4.734 + ... + 100/4.731 = 193.98 s) = 4.640 (the README's demo table;
    # the clock's 193.981 s gives the same to 4 digits).
    basic = (4.734, 4.448, 4.682, 4.738, 4.41, 4.808, 4.767, 4.48, 4.731)
    assert got["basic"] == pytest.approx(900 / sum(100 / r for r in basic), rel=1e-12)
    assert got["basic"] == pytest.approx(4.6396, abs=5e-5)


def test_the_readme_shows_the_query_bigquery_runs() -> None:
    doc = (ROOT / "docs" / "team-dataset.md").read_text(encoding="utf-8")
    section = doc.split("## Querying the dataset with BigQuery", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sql\n", 1)[1].split("```", 1)[0]
    assert block == steady_state_query("`my-project.tierscope.steps`").rstrip() + ";\n"
    printed = runner.invoke(
        app,
        [
            "dataset",
            "bigquery-ddl",
            "-d",
            "gs://team-bucket/tierscope",
            "--table",
            "my-project.tierscope.steps",
            "--query",
        ],
    )
    assert printed.output.endswith(block)


def test_a_quote_in_the_prefix_is_escaped_and_a_bad_bucket_is_a_usage_error() -> None:
    # The prefix was pasted into the string literals as given: a quote ended the literal and
    # the rest of --dataset became SQL of its own.
    url = "gs://team-ml/p'], x = 1); DROP TABLE y; --\\"
    [steps, *_] = bigquery_ddl(url, "p.d.steps")
    assert "  uris = ['gs://team-ml/p\\'], x = 1); DROP TABLE y; --\\\\/steps/*.parquet'],\n" in steps
    assert "  hive_partition_uri_prefix = 'gs://team-ml/p\\'], x = 1); DROP TABLE y; --\\\\/steps',\n" in steps
    for bad in ("gs://Bad!/p", "gs://-team/p", "gs://team-ml/p\nDROP TABLE y"):
        with pytest.raises(UsageError, match="is not a Cloud Storage URL BigQuery can read"):
            bigquery_ddl(bad, "p.d.steps")
