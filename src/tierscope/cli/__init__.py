"""The ``tierscope`` command: one typer app assembled from the command modules of this package.

Exit codes (for cron): 0 success, 1 error, 2 usage error, 75 dataset busy (EX_TEMPFAIL), 130
interrupted; :mod:`tierscope.cli.common` is the one place errors become them. Importing this
package (and so ``tierscope --help``) loads typer and the standard library only: each command
imports polars, the rooms, TensorFlow or google-cloud-logging inside its body, when it runs.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tierscope.cli import analysis, collect, dataset, demo, formats, report, train
from tierscope.cli.common import App

app = App(
    name="tierscope",
    help="Measure how much faster training gets on a bigger scale tier, and whether it is worth the money.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from tierscope import __version__

        print(f"tierscope {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit.")
    ] = False,
) -> None:
    pass


demo.register(app)
collect.register(app)
dataset.register(app)
formats.register(app)
analysis.register(app)
report.register(app)
train.register(app)


def main() -> None:
    app()
