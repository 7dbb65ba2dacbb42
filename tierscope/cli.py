"""The ``tierscope`` command: one typer app assembled from each package's thin CLI module.

Exit codes (for cron): 0 success, 1 error, 2 usage error, 75 dataset busy (EX_TEMPFAIL).
Heavy imports (TensorFlow, google-cloud-logging, altair) happen inside the commands
that need them, so ``tierscope collect files`` starts fast.
"""

from __future__ import annotations

import typer

from analysis.cli import register as register_analysis
from collector.cli import register as register_collector
from reports.cli import register as register_reports
from trainer.cli import register as register_trainer

app = typer.Typer(
    name="tierscope",
    help="Measure how much faster training gets on a bigger scale tier, and whether it is worth the money.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

register_collector(app)
register_analysis(app)
register_reports(app)
register_trainer(app)


def main() -> None:
    app()
