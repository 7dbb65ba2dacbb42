"""The ``tierscope`` command: one typer app assembled from each package's thin CLI module.

Exit codes (for cron): 0 success, 1 error, 2 usage error, 75 dataset busy (EX_TEMPFAIL).
Heavy imports (TensorFlow, google-cloud-logging, altair) happen inside the commands
that need them, so ``tierscope collect files`` starts fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tierscope.cli.analysis import register as register_analysis
from tierscope.cli.collect import register as register_collector
from tierscope.cli.formats import register as register_formats
from tierscope.cli.report import register as register_reports
from tierscope.cli.train import register as register_trainer

app = typer.Typer(
    name="tierscope",
    help="Measure how much faster training gets on a bigger scale tier, and whether it is worth the money.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command("demo")
def demo_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the dataset and report.html.")] = Path(
        "tierscope-demo"
    ),
    lang: Annotated[str | None, typer.Option(help="Report language: en or ja (default: locale).")] = None,
) -> None:
    """Collect the bundled 2016 experiment (a laptop, BASIC, STANDARD_1, PREMIUM_1), print its summary, write a report.

    The whole tool on real data, with no input of yours: the dataset goes to OUT/dataset and
    the report to OUT/report.html. Running it again adds nothing and rewrites the report.
    """
    from tierscope.cli.analysis import print_summary
    from tierscope.cli.collect import print_counts
    from tierscope.demo import run_demo

    result = run_demo(out, lang)
    print_counts(result.collected, quiet=False)
    print_summary(result.summary)
    print(f"dataset: {result.dataset.root}\nreport:  {result.report}")


register_collector(app)
register_formats(app)
register_analysis(app)
register_reports(app)
register_trainer(app)


def main() -> None:
    app()
