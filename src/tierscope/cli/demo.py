"""``tierscope demo``: a thin wrapper over :func:`tierscope.demo.run_demo`."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Annotated

import typer

from tierscope.cli.common import DEMO_OUT, LANGS, App, WideOpt, check_lang, check_out_dir


def demo_cmd(
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Directory for the dataset and report.html.", metavar="DIR")
    ] = Path(DEMO_OUT),
    lang: Annotated[
        str | None,
        typer.Option(help=f"The report's language: {' or '.join(LANGS)} (default: the locale's).", metavar="LANG"),
    ] = None,
    wide: WideOpt = False,
) -> None:
    """Collect the bundled 2016 experiment (a laptop, BASIC, STANDARD_1, PREMIUM_1), print its summary, write a report.

    The whole tool on real data, with no input of yours: the dataset goes to OUT/dataset and
    the report to OUT/report.html. Running it again adds nothing and rewrites the report.
    """
    check_lang(lang)  # before anything is collected
    check_out_dir(out, "--out")
    from tierscope.cli.output import print_counts, print_summary
    from tierscope.cli.prose import say
    from tierscope.demo import run_demo

    result = run_demo(out, lang)
    print_counts(result.collected, quiet=False, wide=wide)
    print_summary(result.summary, wide=wide)
    for sentence in result.forecast:  # PREMIUM_1 failed: what the fit says of it, and how far to trust it
        say(sentence)
    *places, command, then = next_steps(out)
    print("\n".join(places))
    print(command)  # whole, to copy: a command is never wrapped
    say(then)


def next_steps(out: Path) -> list[str]:
    """Where the demo left its results and the commands to run next on its dataset, the paths as given."""
    data = shlex.quote(str(out / "dataset"))
    return [
        f"dataset: {out / 'dataset'}",
        f"report:  {out / 'report.html'}",
        f"next:    tierscope recommend --dataset {data} --steps 1000000 --deadline 24h --quota ml-units=25",
        f"Then `tierscope predict --dataset {data} --tasks 10`, or your own logs: "
        '`tierscope collect files LOG... --dataset ds --tier TIER` (the README\'s "Your own log in three commands").',
    ]


def register(app: App) -> None:
    app.command("demo")(demo_cmd)
