"""``tierscope summary``: a thin wrapper over :func:`analysis.summary.summary`."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path
from typing import Annotated

import polars as pl
import typer
from rich.table import Table

from analysis.summary import BaselineError, SummaryOptions, summary
from collector.cli import DatasetOpt, fail, out_console
from collector.dataset import Dataset
from collector.errors import CollectorError

BaselineOpt = Annotated[
    str | None, typer.Option("--baseline", help="Run id to compare against (default: the BASIC run).")
]
PriceDateOpt = Annotated[
    datetime | None,
    typer.Option(
        "--price-date", formats=["%Y-%m-%d"], help="Price table date for runs of unknown date (default: today)."
    ),
]
RegionOpt = Annotated[str, typer.Option("--region", help="Price region: us, europe or asia.")]


def options(baseline: str | None, price_date: datetime | None, region: str) -> SummaryOptions:
    return SummaryOptions(baseline=baseline, price_date=price_date.date() if price_date else None, region=region)


def load_summary(dataset: Path, opts: SummaryOptions) -> pl.DataFrame:
    """The summary frame, or a one-line error and exit 1 (empty dataset, corrupt file, bad baseline)."""
    ds = Dataset(dataset)
    if not ds.exists():
        raise fail(CollectorError(f"{dataset} holds no tierscope dataset; run `tierscope collect files` first"))
    try:
        return summary(ds, opts)
    except (CollectorError, BaselineError) as exc:
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
    table = Table(
        "run", "tier", "status", "records", "tasks", "steady steps/s", "mean steps/s", "ML units/h",
        "steps per ML unit-h", "speedup", "failure",
        title=f"tierscope summary (global steps/s; speedup against {_cell(baseline)})",
    )  # fmt: skip
    for r in frame.iter_rows(named=True):
        table.add_row(
            r["run_id"], _cell(r["tier"]), r["status"], _cell(r["records"]), _cell(r["tasks"]),
            _cell(r["steady_global_steps_per_s"]), _cell(r["mean_global_steps_per_s"]),
            _cell(r["ml_units_per_hour"], 4), _cell(r["steps_per_ml_unit_hour"], 1),
            _cell(r["speedup_vs_baseline"], 2), _cell(r["failure_reason"]),
        )  # fmt: skip
    out_console().print(table)


def to_json(frame: pl.DataFrame) -> str:
    """The summary as a JSON array, one object per run (dates as ISO strings)."""

    def default(value: object) -> str:
        if isinstance(value, date | datetime):
            return value.isoformat()
        raise TypeError(type(value).__name__)

    return json.dumps(frame.to_dicts(), indent=2, default=default)


def summary_cmd(
    dataset: DatasetOpt = Path("dataset"),
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON array, one object per run.")] = False,
    baseline: BaselineOpt = None,
    price_date: PriceDateOpt = None,
    region: RegionOpt = "us",
) -> None:
    """Per run: status, steady-state and mean global steps/s, ML units, cost and speedup."""
    frame = load_summary(dataset, options(baseline, price_date, region))
    if as_json:
        print(to_json(frame))
    else:
        print_summary(frame)


def register(app: typer.Typer) -> None:
    app.command("summary")(summary_cmd)
