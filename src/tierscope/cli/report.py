"""``tierscope report``: a thin wrapper over :func:`tierscope.reports.render.write_report`."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tierscope.cli.common import (
    DEFAULT_DATASET,
    LANGS,
    App,
    BaselineOpt,
    DatasetOpt,
    PriceDateOpt,
    PricesOpt,
    RegionOpt,
    RunsOpt,
    TargetAccuracyOpt,
    TargetLossOpt,
    TierSelectOpt,
    check_lang,
    open_dataset,
    summary_options,
)

if TYPE_CHECKING:
    from tierscope.dataset.store import Dataset


def report_cmd(
    dataset: DatasetOpt = Path(DEFAULT_DATASET),
    out: Annotated[Path, typer.Option("--out", "-o", help="The HTML file to write.", metavar="FILE")] = Path(
        "report.html"
    ),
    lang: Annotated[
        str | None,
        typer.Option(help=f"The report's language: {' or '.join(LANGS)} (default: the locale's).", metavar="LANG"),
    ] = None,
    baseline: BaselineOpt = None,
    price_date: PriceDateOpt = None,
    region: RegionOpt = "us",
    prices: PricesOpt = None,
    steps: Annotated[
        int | None,
        typer.Option(
            "--steps",
            min=1,
            help="N for time and price to N steps (default: the longest run's last step).",
            metavar="N",
        ),
    ] = None,
    figures: Annotated[
        Path | None,
        typer.Option("--figures", help="Also write each chart as PNG and SVG into this directory.", metavar="DIR"),
    ] = None,
    open_: Annotated[bool, typer.Option("--open", help="Open the report in the default browser.")] = False,
    full_paths: Annotated[
        bool,
        typer.Option(
            "--full-paths",
            help="Show the dataset's and the logs' full paths (default: relative to the dataset's folder, "
            "else file names: a report is often sent on).",
        ),
    ] = False,
    runs: RunsOpt = None,
    tier: TierSelectOpt = None,
    target_loss: TargetLossOpt = None,
    target_accuracy: TargetAccuracyOpt = None,
) -> None:
    """Write a self-contained HTML report (opens offline) of every run in the dataset."""
    if out.is_dir():
        raise typer.BadParameter(
            f"{out} is a directory; give the HTML file to write, e.g. {out / 'report.html'}", param_hint="--out"
        )
    if out.exists() and not out.is_file():
        # the report is written beside it and renamed over it: a device or a pipe would be replaced
        raise typer.BadParameter(
            f"{out} is not a regular file (a device, a pipe or a socket); give the HTML file to write",
            param_hint="--out",
        )
    if out.is_symlink():  # written through: the rename over --out would replace the link with a file
        out = out.resolve()
    check_lang(lang)
    ds = open_dataset(dataset)
    outside_dataset(ds, out, "--out")
    from tierscope.reports.outfile import check_replaceable

    check_replaceable(out)  # before the analysis: a plan or notes named by mistake are refused at once
    if figures is not None:
        outside_dataset(ds, figures, "--figures")
    from tierscope.ahead import import_ahead
    from tierscope.analysis import analyze
    from tierscope.reports.options import ReportOptions, analysis_options

    opts = ReportOptions(lang=lang, figures=figures, full_paths=full_paths)
    asked = summary_options(
        baseline,
        price_date,
        region,
        runs=runs,
        tiers=tier,
        target_loss=target_loss,
        target_accuracy=target_accuracy,
        prices=prices,
    )
    # The renderer (Altair, jinja2) is imported while the analysis runs (the scaling fit needs no scipy).
    analysed = threading.Event()
    import_ahead("tierscope.reports.render", until=analysed)
    try:
        analysis = analyze(ds, analysis_options(asked, steps))
    finally:
        analysed.set()
    from tierscope.cli.output import print_run_notes
    from tierscope.reports.render import write_report

    print_run_notes(analysis.notes)

    # missing folders are made (a report into reports/2026-12/ is the usual wish), and said: a typo in a folder
    # name would otherwise leave the report where nobody looks
    made = [missing_folder(out.parent), missing_folder(figures) if figures is not None else None]
    path = write_report(analysis, out, opts)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    if figures is not None:
        print(f"figures (PNG and SVG): {figures}")
    for folder in dict.fromkeys(f for f in made if f is not None):
        print(f"made the folder {folder}: it did not exist")
    if open_:
        open_in_browser(path)


def missing_folder(folder: Path) -> Path | None:
    """The outermost folder of ``folder`` and its parents that does not exist (None: ``folder`` exists): what
    writing into ``folder`` makes."""
    top = None
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        top = candidate
    return top


def _has_display() -> bool:
    """Whether a graphical browser could show a page here: always on macOS and Windows; elsewhere only
    with an X or Wayland display (over ssh, in a container or cron there is none)."""
    import os
    import sys

    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(path: Path) -> None:
    """Open ``path`` in the default browser; where none can open it (no display, no browser), say on stderr
    where the report is and how to see it, instead of returning without a word. Never fails the command:
    the report is written."""
    from rich.text import Text

    from tierscope.cli.common import err_console

    url = path.resolve().as_uri()
    opened = False
    if _has_display():
        import webbrowser

        try:
            opened = webbrowser.open(url)
        except webbrowser.Error:
            opened = False
    if not opened:
        why = "no browser could be started" if _has_display() else "no display here (no DISPLAY or WAYLAND_DISPLAY)"
        err_console().print(
            Text(
                f"note: --open: {why}; the report is {path.resolve()}: "
                f"copy it to a machine with a browser, or open {url}"
            ),
            soft_wrap=True,
        )


def outside_dataset(ds: Dataset, path: Path, option: str) -> None:
    """Raise a usage error if ``path`` (what ``option`` writes) lies inside the local dataset ``ds``:
    a report or a figure written there would replace or sit among its data and state files."""
    from tierscope.dataset.objects import GsPath

    if isinstance(ds.root, GsPath):
        return
    root = Path(ds.root).resolve()
    if path.resolve().is_relative_to(root):
        raise typer.BadParameter(
            f"{path} lies inside the dataset {ds.root}; write it outside, e.g. {root.parent / path.name}",
            param_hint=option,
        )


def register(app: App) -> None:
    app.command("report")(report_cmd)
