"""``tierscope summary``, ``predict`` and ``recommend``: thin wrappers over
:func:`tierscope.analysis.summary.summary`, :func:`tierscope.analysis.forecast.predict` and
:func:`tierscope.analysis.forecast.recommend`, which each body imports when it runs."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tierscope.cli.common import (
    App,
    BaselineOpt,
    DatasetOpt,
    PriceDateOpt,
    RegionOpt,
    err_console,
    open_dataset,
    out_console,
    summary_options,
)

if TYPE_CHECKING:
    import polars as pl


def _default(value: object) -> str:
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(type(value).__name__)


def to_json(frame: pl.DataFrame) -> str:
    """The summary as a JSON array, one object per run (dates as ISO strings)."""
    return json.dumps(frame.to_dicts(), indent=2, default=_default)


def deadline_hours(text: str) -> float:
    """``--deadline``: ``2h``, ``90m``, ``3600s``, ``1.5d`` or a bare number of hours, in hours (> 0).

    Raises :class:`typer.BadParameter` (exit 2).
    """
    from tierscope.cli.durations import parse_duration

    try:
        hours = parse_duration(text, bare_unit="h").total_seconds() / 3600
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--deadline") from None
    if hours <= 0:
        raise typer.BadParameter(f"{text!r} is no time at all; give a deadline above 0", param_hint="--deadline")
    return hours


def predict_cmd(
    dataset: DatasetOpt = Path("dataset"),
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="Training tasks to predict for (PREMIUM_1: 20).")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object: fits and predictions.")] = False,
    price_date: PriceDateOpt = None,
    region: RegionOpt = "us",
) -> None:
    """Fit Amdahl's law and the USL to the measured runs and predict steady global steps/s at --tasks."""
    from rich.table import Table

    from tierscope.analysis.forecast import predict
    from tierscope.cli.output import cell

    ds = open_dataset(dataset)
    from tierscope.analysis import analyze

    fitted, predicted = predict(analyze(ds, summary_options(None, price_date, region)), tasks)
    if as_json:
        doc = {
            "points": fitted.points.to_dicts(),
            "fits": fitted.table.to_dicts(),
            "predictions": predicted.to_dicts(),
        }
        print(json.dumps(doc, indent=2, default=_default))
        return
    table = Table(
        "model",
        "parameter",
        "estimate",
        "95 % interval",
        "status",
        title="scaling fits (steady global steps/s vs training tasks)",
    )
    for r in fitted.table.iter_rows(named=True):
        interval = f"{cell(r['ci_low'], 4)} - {cell(r['ci_high'], 4)}" if r["ci_low"] is not None else "-"
        table.add_row(r["model"], r["parameter"], cell(r["estimate"], 4), interval, r["status"])
    console = out_console()
    console.print(table)
    for r in predicted.iter_rows(named=True):
        console.print(prediction_line(r, tasks))


def prediction_line(r: dict, tasks: int) -> str:
    """One model's prediction (a :data:`tierscope.analysis.scaling.PREDICTION_SCHEMA` row) in words: the
    figure and its interval (or why it has none), then the caveat and the fit's verdict on lines of their own."""
    if r["global_steps_per_s"] is None:
        return f"{r['model']}: {r['message']}"
    if r["ci_low"] is None:
        noise = f"{r['noise_ci_low']:.2f} - {r['noise_ci_high']:.2f}"
        interval = f"no 95 % interval: {r['status']}; measurement noise alone {noise}"
    else:
        interval = f"95 % interval {r['ci_low']:.2f} - {r['ci_high']:.2f}, model error included"
    lines = [f"{r['model']}: {r['global_steps_per_s']:.2f} global steps/s at {tasks} tasks ({interval})"]
    if r["caveat"]:
        lines.append(f"  Caveat: {r['caveat']}.")
    lines.append(f"  {r['message']}")
    return "\n".join(lines)


def recommend_cmd(
    steps: Annotated[int, typer.Option("--steps", min=1, help="Global steps the job must reach.")],
    dataset: DatasetOpt = Path("dataset"),
    deadline: Annotated[str | None, typer.Option("--deadline", help="Time limit: 2h, 90m, 3600s, 1.5d.")] = None,
    budget: Annotated[float | None, typer.Option("--budget", min=0, help="Price limit in USD.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object: choice, reason, candidates.")] = False,
    price_date: PriceDateOpt = None,
    region: RegionOpt = "us",
) -> None:
    """The cheapest tier meeting --deadline, or the fastest within --budget, from measured and predicted tiers."""
    if (deadline is None) == (budget is None):
        raise typer.BadParameter("give exactly one of --deadline or --budget", param_hint="--deadline/--budget")
    hours = deadline_hours(deadline) if deadline is not None else None
    from rich.table import Table

    from tierscope.analysis.forecast import recommend
    from tierscope.cli.output import cell

    ds = open_dataset(dataset)
    from tierscope.analysis import analyze

    result = recommend(analyze(ds, summary_options(None, price_date, region)), steps, hours, budget)
    if as_json:
        doc = {
            "caveat": result.caveat,
            "choice": result.choice,
            "reason": result.reason,
            "candidates": result.candidates.to_dicts(),
        }
        print(json.dumps(doc, indent=2, default=_default))
        return
    table = Table(
        "candidate", "basis", "status", "tasks", "steps/s", "hours", "USD", "meets", title=f"to reach {steps:,} steps"
    )
    for r in result.candidates.iter_rows(named=True):
        table.add_row(
            r["candidate"], r["basis"], r["status"], cell(r["tasks"]), cell(r["global_steps_per_s"], 2),
            cell(r["hours"], 2), cell(r["usd"], 2), "yes" if r["meets"] else "no",
        )  # fmt: skip
    console = out_console()
    if result.caveat:  # before the table: nobody may read the choice without it
        console.print(result.caveat, soft_wrap=True)
    console.print(table)
    console.print(result.reason)


def warn_unpriced(frame: pl.DataFrame) -> None:
    """A note on stderr for each cloud run the price table does not know (a typo, a new tier)."""
    import polars as pl
    from rich.text import Text

    from tierscope.contract import LOCAL_TIER_PATTERN

    unpriced = frame.filter(
        pl.col("ml_units_per_hour").is_null()
        & pl.col("tier").is_not_null()
        & ~pl.col("tier").str.contains(LOCAL_TIER_PATTERN)
    )
    for row in unpriced.iter_rows(named=True):
        err_console().print(
            Text(
                f"note: tier {row['tier']!r} of run {row['run_id']!r} has no row in the price table "
                f"(analysis/data/ml_units.csv) on {row['price_date']}: its ML units and cost are left empty"
            ),
            soft_wrap=True,
        )


def summary_cmd(
    dataset: DatasetOpt = Path("dataset"),
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array, one object per run.")] = False,
    baseline: BaselineOpt = None,
    price_date: PriceDateOpt = None,
    region: RegionOpt = "us",
    steps: Annotated[
        int | None, typer.Option("--steps", min=1, help="Target global steps for the time/price columns.")
    ] = None,
) -> None:
    """Per run: status, steady-state and mean global steps/s, ML units, cost and speedup."""
    from tierscope.analysis import analyze
    from tierscope.cli.output import print_summary

    frame = analyze(open_dataset(dataset), summary_options(baseline, price_date, region, steps)).summary
    warn_unpriced(frame)
    if as_json:
        print(to_json(frame))
    else:
        print_summary(frame)


def register(app: App) -> None:
    app.command("summary")(summary_cmd)
    app.command("predict")(predict_cmd)
    app.command("recommend")(recommend_cmd)
