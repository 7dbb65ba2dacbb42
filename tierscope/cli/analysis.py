"""``tierscope summary``, ``predict`` and ``recommend``: thin wrappers over
:func:`tierscope.analysis.summary.summary`, :func:`tierscope.analysis.forecast.predict` and
:func:`tierscope.analysis.forecast.recommend`."""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path
from typing import Annotated

import polars as pl
import typer
from rich.table import Table
from rich.text import Text

from tierscope.analysis.summary import SummaryOptions, summary
from tierscope.cli.collect import DatasetOpt, err, existing_dataset, fail, out_console
from tierscope.dataset.store import Dataset
from tierscope.errors import TierscopeError

BaselineOpt = Annotated[
    str | None, typer.Option("--baseline", help="Run id to compare against (default: the BASIC run).")
]
PriceDateOpt = Annotated[
    datetime | None,
    typer.Option(
        "--price-date", formats=["%Y-%m-%d"], help="Price table date for runs of unknown date (default: today)."
    ),
]


def _known_region(region: str) -> str:
    """``region`` if the price table has rows for it; a usage error otherwise (an unknown one priced nothing)."""
    from tierscope.analysis.cost import load_prices

    known = sorted(load_prices().get_column("region").unique())
    if region not in known:
        raise typer.BadParameter(f"{region!r} is not a region of the price table; use one of {', '.join(known)}")
    return region


RegionOpt = Annotated[str, typer.Option("--region", callback=_known_region, help="Price region: us, europe or asia.")]


def options(baseline: str | None, price_date: datetime | None, region: str, steps: int | None = None) -> SummaryOptions:
    return SummaryOptions(
        baseline=baseline, price_date=price_date.date() if price_date else None, region=region, steps=steps
    )


def load_summary(dataset: Path, opts: SummaryOptions) -> pl.DataFrame:
    """The summary frame, or a one-line error and exit 1 (empty dataset, corrupt file, bad baseline)."""
    ds = open_dataset(dataset)
    try:
        return summary(ds, opts)
    except TierscopeError as exc:
        raise fail(exc) from None


def open_dataset(dataset: Path) -> Dataset:
    """The dataset at ``dataset``, or a one-line error and exit 1 when there is none."""
    try:
        return existing_dataset(dataset)
    except TierscopeError as exc:
        raise fail(exc) from None


def _cell(value: object, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def print_summary(frame: pl.DataFrame) -> None:
    """The summary as a readable table on stdout."""
    baseline = frame["baseline_run_id"].drop_nulls().first()
    target = frame["target_steps"].drop_nulls().first() if "target_steps" in frame.columns else None
    to_target = ["hours to N", "USD to N"] if target is not None else []
    reach = f"; N = {target:,} steps" if target is not None else ""
    table = Table(
        "run", "tier", "status", "records", "tasks", "steady steps/s", "mean steps/s", "ML units/h",
        "steps per ML unit-h", "speedup", *to_target, "failure",
        title=f"tierscope summary (global steps/s; speedup against {_cell(baseline)}{reach})",
    )  # fmt: skip
    for r in frame.iter_rows(named=True):
        # --steps: the time and price to reach the target (README: "adds hours and USD")
        target_cells = [_cell(r["hours_to_target"], 2), _cell(r["usd_to_target"], 2)] if to_target else []
        table.add_row(
            r["run_id"], _cell(r["tier"]), r["status"], _cell(r["records"]), _cell(r["tasks"]),
            _cell(r["steady_global_steps_per_s"]), _cell(r["mean_global_steps_per_s"]),
            _cell(r["ml_units_per_hour"], 4), _cell(r["steps_per_ml_unit_hour"], 1),
            _cell(r["speedup_vs_baseline"], 2), *target_cells, _cell(r["failure_reason"]),
        )  # fmt: skip
    out_console().print(table)


def _default(value: object) -> str:
    if isinstance(value, date | datetime):
        return value.isoformat()
    raise TypeError(type(value).__name__)


def to_json(frame: pl.DataFrame) -> str:
    """The summary as a JSON array, one object per run (dates as ISO strings)."""
    return json.dumps(frame.to_dicts(), indent=2, default=_default)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d)?\s*$")
_UNIT_H = {"s": 1 / 3600, "m": 1 / 60, "min": 1 / 60, "h": 1.0, "d": 24.0, None: 1.0}


def parse_hours(text: str) -> float:
    """``2h``, ``90m``, ``3600s``, ``1.5d`` or a bare number of hours, in hours. Raises :class:`typer.BadParameter`."""
    match = _DURATION.match(text)
    if not match or float(match.group(1)) <= 0:
        raise typer.BadParameter(
            f"{text!r} is not a duration; write e.g. 2h, 90m, 3600s or 1.5d", param_hint="--deadline"
        )
    return float(match.group(1)) * _UNIT_H[match.group(2)]


def predict_cmd(
    dataset: DatasetOpt = Path("dataset"),
    tasks: Annotated[int, typer.Option("--tasks", min=1, help="Training tasks to predict for (PREMIUM_1: 20).")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON object: fits and predictions.")] = False,
    price_date: PriceDateOpt = None,
    region: RegionOpt = "us",
) -> None:
    """Fit Amdahl's law and the USL to the measured runs and predict steady global steps/s at --tasks."""
    from tierscope.analysis.forecast import predict  # scipy: ~0.5 s of start-up every other command need not pay

    ds = open_dataset(dataset)
    try:
        fitted, predicted = predict(ds, tasks, options(None, price_date, region))
    except TierscopeError as exc:
        raise fail(exc) from None
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
        interval = f"{_cell(r['ci_low'], 4)} - {_cell(r['ci_high'], 4)}" if r["ci_low"] is not None else "-"
        table.add_row(r["model"], r["parameter"], _cell(r["estimate"], 4), interval, r["status"])
    console = out_console()
    console.print(table)
    for r in predicted.iter_rows(named=True):
        if r["global_steps_per_s"] is None:
            console.print(f"{r['model']}: {r['message']}")
        else:
            console.print(
                f"{r['model']}: {r['global_steps_per_s']:.2f} global steps/s at {tasks} tasks "
                f"(95 % interval {r['ci_low']:.2f} - {r['ci_high']:.2f}); {r['message']}"
            )


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
    hours = parse_hours(deadline) if deadline is not None else None
    from tierscope.analysis.forecast import recommend  # scipy: see predict_cmd

    ds = open_dataset(dataset)
    try:
        result = recommend(ds, steps, hours, budget, options(None, price_date, region))
    except (TierscopeError) as exc:
        raise fail(exc) from None
    if as_json:
        doc = {"choice": result.choice, "reason": result.reason, "candidates": result.candidates.to_dicts()}
        print(json.dumps(doc, indent=2, default=_default))
        return
    table = Table("candidate", "basis", "tasks", "steps/s", "hours", "USD", "meets", title=f"to reach {steps:,} steps")
    for r in result.candidates.iter_rows(named=True):
        table.add_row(
            r["candidate"], r["basis"], _cell(r["tasks"]), _cell(r["global_steps_per_s"], 2),
            _cell(r["hours"], 2), _cell(r["usd"], 2), "yes" if r["meets"] else "no",
        )  # fmt: skip
    console = out_console()
    console.print(table)
    console.print(result.reason)


def warn_unpriced(frame: pl.DataFrame) -> None:
    """A note on stderr for each cloud run the price table does not know (a typo, a new tier)."""
    unpriced = frame.filter(
        pl.col("ml_units_per_hour").is_null()
        & pl.col("tier").is_not_null()
        & ~pl.col("tier").str.to_lowercase().str.starts_with("local")
    )
    for row in unpriced.iter_rows(named=True):
        err.print(
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
    frame = load_summary(dataset, options(baseline, price_date, region, steps))
    warn_unpriced(frame)
    if as_json:
        print(to_json(frame))
    else:
        print_summary(frame)


def register(app: typer.Typer) -> None:
    app.command("summary")(summary_cmd)
    app.command("predict")(predict_cmd)
    app.command("recommend")(recommend_cmd)
