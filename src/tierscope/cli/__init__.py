"""The ``tierscope`` command: one typer app whose commands live in the command modules of this package.

Exit codes (for cron, defined in :mod:`tierscope.exits`): 0 success, 1 error, 2 usage error, 75
dataset busy (EX_TEMPFAIL), 130 interrupted (Ctrl-C), 143 stopped by SIGTERM;
:mod:`tierscope.cli.common` is the one place errors become them. Importing this package (and so
``tierscope --help``) loads typer and the standard library only, and no command module: the
top-level group imports a command's module when that command runs (:mod:`tierscope.cli.lazy`);
each command imports polars, the rooms, TensorFlow or google-cloud-logging inside its body.
"""

from __future__ import annotations

import gc
from typing import Annotated

import typer

# First, before any command loads polars: sets its allocator's decay (tierscope.cli.allocator).
from tierscope.cli import allocator  # noqa: F401  (imported for its effect)
from tierscope.cli.common import App
from tierscope.cli.lazy import lazy_group

#: The top-level commands in the order ``--help`` lists them (a session's workflow: try the demo, collect,
#: read the summary, predict and plan, write the report; then the tools around it): the module of
#: tierscope.cli whose ``register(app)`` adds each, and the first paragraph of its help, spelled out so
#: the listing need not import them (tests/cli/test_startup.py checks both against the modules).
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "demo",
        "Collect the bundled 2016 experiment (a laptop, BASIC, STANDARD_1, PREMIUM_1), print its summary, "
        "write a report.",
    ),
    "collect": ("collect", "Collect step logs into a dataset."),
    "summary": (
        "analysis",
        "Show per configuration its status, steady-state and mean global steps/s, speedup, ML units and price.",
    ),
    "predict": (
        "analysis",
        "Fit Amdahl's law and the USL to the measured runs and predict the steady global steps/s at --tasks.",
    ),
    "recommend": (
        "analysis",
        "Pick the cheapest tier that meets --deadline, or the fastest within --budget, among the measured runs "
        "and the tiers predicted from them.",
    ),
    "machines": (
        "machines",
        "List the machine types, accelerators and TPU slices tierscope knows, with their accelerators and chips.",
    ),
    "report": ("report", "Write a self-contained HTML report (opens offline) of every run in the dataset."),
    "sweep": (
        "sweep",
        "Run the same training on several machine configurations (Vertex AI, or --local) and collect speed and "
        "price side by side.",
    ),
    "formats": (
        "formats",
        "List the step-log formats tierscope reads, one example line each; with --try FILE, how FILE is read.",
    ),
    "rejects": (
        "collect",
        "List the lines kept aside as rejects: the file, the line number, the run, the reason and the raw text.",
    ),
    "dataset": ("dataset", "Use a dataset from other tools."),
    "prices": ("prices", "Price rows: list them, or fetch Vertex AI's from the Cloud Billing Catalog."),
    "train": ("train", "Run the reference TensorFlow trainer."),
    "spec": ("train", "Print the cloud job request (JSON) that runs the trainer on a scale tier."),
    "doctor": (
        "collect",
        "Check every data file's footer, schema and pages and every state file; name each corrupt one.",
    ),
    "compact": (
        "collect",
        "Merge each partition's small files into one (atomically; readers see every record once).",
    ),
}
#: ``--help``'s headings over the commands, each with its commands in the order of :data:`COMMANDS`.
SECTIONS: dict[str, tuple[str, ...]] = {
    "Commands": ("demo", "collect", "summary", "predict", "recommend", "report", "sweep"),
    "Logs, data and prices": ("formats", "rejects", "dataset", "prices", "machines"),
    "Reference trainer": ("train", "spec"),
    "Maintenance": ("doctor", "compact"),
}

app = App(
    name="tierscope",
    help="Measure how much faster training gets on a bigger machine configuration, and whether it is worth the "
    "money.\n\nStart with `tierscope demo` (the bundled 2016 runs), then your own logs: `tierscope collect files "
    "LOG... --dataset ds`, `tierscope summary --dataset ds`.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=lazy_group(COMMANDS, SECTIONS),
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


def main() -> None:
    """The console script: run the command, then leave without the interpreter's final garbage
    collection, which walks every object polars, pyarrow and numpy created at import (0.08-0.16 s
    of a 0.45 s collect with nothing new; 0.2 s of a large collect). Everything the command wrote
    is closed and synced by then; atexit handlers still run, and only objects in reference cycles
    are left to the operating system instead of collected.

    Ctrl-C and SIGTERM stop the command with a line and exit 130 / 143
    (:func:`tierscope.stopping.catch_stop_signals`; the console script has caught them already,
    an entry script installed before it did not); once the command has ended, a signal no longer
    changes its exit code (:func:`tierscope.stopping.stops_done`)."""
    from tierscope.stopping import catch_stop_signals, stops_done

    catch_stop_signals()
    try:
        app()
    finally:
        stops_done()
        gc.freeze()
