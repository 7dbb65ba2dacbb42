"""``tierscope dataset ...``: what other tools need to read a dataset (BigQuery's table definitions)."""

from __future__ import annotations

from typing import Annotated

import typer

from tierscope.cli.common import App

dataset_app = App(help="Use a dataset from other tools.", no_args_is_help=True)


@dataset_app.command("bigquery-ddl")
def bigquery_ddl_cmd(
    dataset: Annotated[
        str,
        typer.Option(
            "--dataset", "-d", help="The dataset on Cloud Storage: gs://bucket/prefix/.", metavar="gs://BUCKET/PREFIX"
        ),
    ],
    table: Annotated[
        str,
        typer.Option(
            help="BigQuery name of the steps table, project.dataset.steps; the other tables are named "
            "alike (project.dataset.events, ...; a prefix before 'steps' is kept).",
            metavar="TABLE",
        ),
    ],
    query: Annotated[
        bool, typer.Option("--query", help="Also print the steady-state query over the steps table.")
    ] = False,
) -> None:
    """Print the CREATE EXTERNAL TABLE statements that let BigQuery query the dataset's tables
    (hive-partitioned by run_id), for `bq query --use_legacy_sql=false` or the console."""
    from tierscope.dataset.bigquery import bigquery_ddl, table_names

    statements = bigquery_ddl(dataset, table)
    if query:
        from tierscope.analysis.steady_sql import steady_state_query

        statements.append(steady_state_query(f"`{table_names(table)['steps']}`").rstrip() + ";")
    print("\n\n".join(statements))


def register(app: App) -> None:
    app.add_typer(dataset_app, name="dataset")
