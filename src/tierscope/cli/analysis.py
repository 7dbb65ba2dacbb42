"""``tierscope summary``, ``predict`` and ``recommend``: thin wrappers over
:func:`tierscope.analysis.summary.summary`, :func:`tierscope.analysis.forecast.predict` and
:func:`tierscope.analysis.forecast.recommend`, which each body imports when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tierscope.cli.common import (
    DEFAULT_DATASET,
    App,
    BaselineOpt,
    DatasetOpt,
    FormatChoice,
    FormatOpt,
    JsonOpt,
    PlanPriceDateOpt,
    PriceDateOpt,
    PricesOpt,
    RegionOpt,
    RunsOpt,
    TargetAccuracyOpt,
    TargetLossOpt,
    TierSelectOpt,
    WideOpt,
    err_console,
    finite,
    open_dataset,
    output_format,
    summary_options,
)
from tierscope.errors import TierscopeError

if TYPE_CHECKING:
    import polars as pl

    from tierscope.analysis.analyze import Analysis
    from tierscope.analysis.options import AnalysisOptions
    from tierscope.dataset.store import Dataset


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


def _analysis(dataset: Path, options: AnalysisOptions) -> Analysis:
    from tierscope.analysis import analyze
    from tierscope.cli.output import print_run_notes

    ds = open_dataset(dataset)
    analysis = analyze(ds, options)
    print_run_notes(analysis.notes + held_back(ds, analysis))
    return analysis


def held_back(ds: Dataset, analysis: Analysis) -> list[tuple[str, str]]:
    """What the last collect of each analysed run's files left unread while they were being written
    (:func:`tierscope.collector.held.unread_at_end`): a failure or a last report not yet in its figures."""
    from tierscope.cli.output import shown_path
    from tierscope.collector.held import unread_at_end
    from tierscope.collector.positions import OffsetStore

    if not isinstance(ds.root, Path):
        return []  # a dataset on Cloud Storage: its state is not downloaded for a note
    shown = set(analysis.summary.get_column("run_id").to_list()) if "run_id" in analysis.summary.columns else set()
    held = unread_at_end(OffsetStore(ds.state_dir).states(), lambda path: shown_path(path, False))
    return [(run, said) for run, said in held if run in shown]


def predict_cmd(
    dataset: DatasetOpt = Path(DEFAULT_DATASET),
    tasks: Annotated[
        int,
        typer.Option(
            "--tasks", min=1, help="The number of training tasks to predict for (PREMIUM_1 has 20).", metavar="N"
        ),
    ] = 20,
    fmt: FormatOpt = FormatChoice.table,
    as_json: JsonOpt = False,
    runs: RunsOpt = None,
    tier: TierSelectOpt = None,
    wide: WideOpt = False,
) -> None:
    """Fit Amdahl's law and the USL to the measured runs and predict the steady global steps/s at --tasks.

    Runs with accelerators are fitted against their GPUs or TPU chips (--tasks counts those), over one
    accelerator type only: the runs of another type are left out, and the output says why. JSON gives the
    points fitted, the fits and the predictions; CSV and the table give the fits' parameters and each
    model's prediction as rows.
    """
    from tierscope.analysis.forecast import predict
    from tierscope.cli import numbers as n
    from tierscope.cli.tables import Column, Grid, emit

    fmt = output_format(fmt, as_json)
    fitted, predicted = predict(_analysis(dataset, summary_options(None, None, "us", runs=runs, tiers=tier)), tasks)
    grid = Grid(
        [Column("model", "label"), Column("parameter", "label"), Column("estimate"), Column("95 % interval"),
         Column("status", "label")],
        title="scaling fits (steady global steps/s against "
        + ("training tasks)" if fitted.basis == "task" else f"{fitted.accelerator} {fitted.basis}s)"),
    )  # fmt: skip
    grid.notes.extend(fitted.left_out)
    records = []
    for r in fitted.table.iter_rows(named=True):
        grid.add(r["model"], r["parameter"], n.fixed(r["estimate"], 4), _interval(r, 4), r["status"])
        records.append({k: r[k] for k in ("model", "parameter", "estimate", "ci_low", "ci_high", "status", "message")})
    for r in predicted.iter_rows(named=True):
        name = f"steps/s at {n.plural(tasks, fitted.basis)}"
        records.append({"model": r["model"], "parameter": name, "estimate": r["global_steps_per_s"],
                        "ci_low": r["ci_low"], "ci_high": r["ci_high"], "status": r["status"],
                        "message": r["message"]})  # fmt: skip
        if r["global_steps_per_s"] is None:
            grid.notes.append(f"{r['model']}: {r['message']}")
        else:
            grid.add(r["model"], name, n.fixed(r["global_steps_per_s"], 2), _interval(r, 2), r["status"])
            grid.notes.extend(prediction_lines(r, tasks, fitted.basis))
    doc = {"points": fitted.points.to_dicts(), "fits": fitted.table.to_dicts(), "predictions": predicted.to_dicts(),
           "basis": fitted.basis, "accelerator": fitted.accelerator, "left_out": fitted.left_out}  # fmt: skip
    emit(fmt, grid, records, doc, wide)


def _interval(row: dict, digits: int) -> str:
    from tierscope.cli import numbers as n

    if row["ci_low"] is None or row["ci_high"] is None:
        return n.MISSING
    return f"{n.fixed(row['ci_low'], digits)} - {n.fixed(row['ci_high'], digits)}"


def _check_priceable(analysis: Analysis) -> None:
    """Raise when every run with a steady rate ran on own hardware: no price date prices those."""
    import polars as pl

    from tierscope.contract import LOCAL_TIER_PATTERN

    measured = analysis.summary.filter(pl.col("steady_global_steps_per_s").is_not_null())
    # a run known by its machines (no tier) is priceable
    unknown = pl.col("tier").is_null() & pl.col("hardware").is_null()
    local = measured.filter(unknown | pl.col("tier").str.contains(LOCAL_TIER_PATTERN))
    if measured.height and local.height == measured.height:
        untiered = local.filter(pl.col("tier").is_null())["run_id"].to_list()
        if untiered:  # a cloud run collected without --tier is not a laptop: say what it lacks
            raise TierscopeError(
                f"no measured run has machines to price (none: {', '.join(untiered)}): collect its logs again "
                "with what it ran on, --machine TYPE [--accelerator TYPE:N] or --tpu SLICE (a legacy scale tier: "
                "--tier TIER; or a manifest's keys), or use `tierscope predict` for throughput alone"
            )
        raise TierscopeError(
            f"every measured run ({', '.join(local['run_id'])}) ran locally, and local runs are never priced "
            "(own hardware has no ML units): no --price-date can price them; collect a cloud run's step "
            "logs to plan with, or use `tierscope predict` for throughput alone"
        )


def prediction_lines(r: dict, tasks: int, noun: str = "task") -> list[str]:
    """One model's prediction (a :data:`tierscope.analysis.scaling.PREDICTION_SCHEMA` row) in words: the
    figure and its interval (or why it has none), then the caveat and the fit's verdict, each a note of
    its own (a note is one paragraph: a newline inside one is shown escaped, as ``\\x0a``)."""
    if r["global_steps_per_s"] is None:
        return [f"{r['model']}: {r['message']}"]
    from tierscope.analysis.scaling import FITTED  # loaded by the analysis already

    if r["ci_low"] is None:
        noise = f"{r['noise_ci_low']:.2f} - {r['noise_ci_high']:.2f}"
        # a fitted model's interval is left out only where it leaves the sane range: the caveat says why
        why = "see the caveat" if r["status"] == FITTED else r["status"]
        interval = f"no 95 % interval: {why}; measurement noise alone {noise}"
    else:
        interval = f"95 % interval {r['ci_low']:.2f} - {r['ci_high']:.2f}, model error included"
    from tierscope.cli.numbers import plural

    lines = [f"{r['model']}: {r['global_steps_per_s']:.2f} global steps/s at {plural(tasks, noun)} ({interval})"]
    if r["caveat"]:
        lines.append(f"  Caveat: {r['caveat']}.")
    if not (r["ci_low"] is None and r["status"] == FITTED):  # its message speaks of an interval not given here
        lines.append(f"  {r['message']}")
    return lines


def _why_not(row: dict[str, Any], hours: float | None, budget: float | None, said: str | None) -> str:
    """Why a candidate does not meet the target: its refusal, its failure, or the deadline or budget it
    misses, in the user's own words ("58.71 h > 6h")."""
    from tierscope.cli import numbers as n

    if row["refused"]:
        return f"refused: {row['refused']}"
    if row["evidence"]:
        return str(row["evidence"])
    if row["meets"]:
        return n.MISSING
    if row["hours"] is None:
        return "no rate to plan from"
    misses = []
    if hours is not None and row["hours"] > hours:
        # say which rate missed it, and the steady rate's hours where they would have met it
        at = f" at the {row['rate_basis']} rate" if row.get("rate_basis") else ""
        steady = row.get("steady_hours")
        met = row.get("rate_basis") == "sustained" and steady is not None and steady <= hours
        beside = f" (the steady rate's {n.hours(steady)} h would meet it)" if met else ""
        misses.append(f"missed: {n.hours(row['hours'])} h > {said}{at}{beside}")
    if row["usd"] is None:
        # Fast enough or not, a candidate without a price cannot be weighed by cost.
        misses.append("no price")
    elif budget is not None and row["usd"] > budget:
        misses.append(f"USD {n.money(row['usd'])} > USD {n.money(budget)}")
    return "; ".join(misses) or n.MISSING


def _price_notes(candidates: pl.DataFrame) -> list[str]:
    """The candidates' price notes (an old or a later price row), each once, naming its candidates."""
    from tierscope.cli.tables import named

    notes: dict[str, list[str]] = {}
    for row in candidates.iter_rows(named=True):
        if row["price_note"]:
            notes.setdefault(row["price_note"], []).append(named(str(row["candidate"])))
    return [f"{', '.join(names)}: {note}" for note, names in notes.items()]


def recommend_cmd(
    steps: Annotated[
        int,
        typer.Option(
            "--steps",
            min=1,
            help="The global steps the job must reach: steps of the baseline's work where batches differ "
            "(each candidate's own steps are shown).",
            metavar="N",
        ),
    ],
    dataset: DatasetOpt = Path(DEFAULT_DATASET),
    deadline: Annotated[
        str | None,
        typer.Option(
            "--deadline",
            help="The time limit, e.g. 2h, 90m, 3600s or 1.5d (a bare number is hours).",
            metavar="DURATION",
        ),
    ] = None,
    budget: Annotated[
        float | None, typer.Option("--budget", min=0, callback=finite, help="The price limit in USD.", metavar="USD")
    ] = None,
    quota: Annotated[
        list[str] | None,
        typer.Option(
            "--quota",
            help="A quota no candidate may exceed, NAME=LIMIT: NVIDIA_A100_GPUS=8, TPU_V5_LITEPOD_CHIPS=8, CPUS=96, "
            "ml-units=25; repeat for more.",
            metavar="NAME=LIMIT",
        ),
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest", help="A run manifest whose quotas and prices keys apply too.", metavar="FILE", dir_okay=False
        ),
    ] = None,
    fmt: FormatOpt = FormatChoice.table,
    as_json: JsonOpt = False,
    price_date: PlanPriceDateOpt = None,
    region: RegionOpt = "us",
    runs: RunsOpt = None,
    tier: TierSelectOpt = None,
    wide: WideOpt = False,
    prices: PricesOpt = None,
    baseline: BaselineOpt = None,
) -> None:
    """Pick the cheapest tier that meets --deadline, or the fastest within --budget, among the measured runs
    and the tiers predicted from them.

    Measured configurations come first, then predictions within the fitted accelerator type; a failed run is
    never a candidate, only evidence; a candidate above a --quota is refused with the reason. Every candidate
    is priced on --price-date (default: today), naming its price rows. JSON gives the choice, the reason and
    every candidate; CSV the candidates.

    Exit status: 0 a configuration is recommended; 3 none meets --deadline, --budget and the quotas (every
    candidate is still printed, the nearest first, with why not); 1 an error (no rate or no price to plan
    from); 2 a usage error.
    """
    if (deadline is None) == (budget is None):
        raise typer.BadParameter("give exactly one of --deadline or --budget", param_hint="--deadline/--budget")
    hours = deadline_hours(deadline) if deadline is not None else None
    fmt = output_format(fmt, as_json)
    from tierscope.analysis.forecast import recommend
    from tierscope.analysis.quotas import parse
    from tierscope.cli import numbers as n
    from tierscope.cli.tables import Column, Grid, emit

    limits = parse(quota or ())
    options = summary_options(baseline, price_date, region, runs=runs, tiers=tier, prices=prices)
    if manifest is not None:
        from tierscope.analysis.quotas import manifest_extras

        asked_quotas, files, rows = manifest_extras(manifest)
        limits = parse(asked_quotas, f"{manifest}: quotas") | limits  # the command line over the manifest
        options.prices = (*files, *options.prices)
        options.price_rows = rows
    analysis = _analysis(dataset, options)
    _check_priceable(analysis)
    said = " ".join(deadline.split()) if deadline is not None else None
    if said is not None and said.replace(".", "", 1).isdigit():
        said += " h"  # a bare number is hours: echoed with its unit, never as "within 72"
    result = recommend(analysis, steps, hours, budget, limits, said)
    from tierscope.cli.output import (
        compute_engine_words,
        left_out,
        predicted_basis,
        priced_region,
        recommend_basis,
        startup_basis,
    )

    shipped = compute_engine_words(result.candidates["price_rows"])
    where = priced_region(region, result.candidates, analysis.runs)

    # each candidate's own steps: a column only where they differ from N (N is the baseline's work)
    own = result.candidates["target_examples"].drop_nulls().len() > 0
    grid = Grid(
        [Column("candidate", "name"), Column("basis", "label"), Column("tasks"), Column("devices", "label", drop=2),
         Column("steps/s"), Column("rate", "label"), Column("steady steps/s", drop=3),
         *([Column("steps")] if own else []), Column("hours"),
         Column("hours at steady", wide=True), Column("USD"), Column("meets", "label"),
         Column("why not", "text", drop=1), Column("configuration", "text", wide=True),
         Column("price rows", "text", wide=True)],
        title=f"to reach {n.plural(steps, 'step')}, priced on {analysis.options.price_day()}",
        notes=[result.reason, *recommend_basis(result.candidates, analysis.summary),
               *predicted_basis(result.candidates, analysis.summary, wide),
               *startup_basis(result.candidates, analysis.summary),
               *left_out(result.candidates, analysis.summary),
               f"Prices of region {where}: {shipped}." if shipped else f"Prices of region {where}.",
               *_price_notes(result.candidates)],
    )  # fmt: skip
    for r in result.candidates.iter_rows(named=True):
        why = _why_not(r, hours, budget, said)
        devices = n.MISSING if r["devices"] is None else n.plural(r["devices"], r["device_basis"])
        grid.add(
            r["candidate"], r["basis"], n.count(r["tasks"]), devices, n.fixed(r["global_steps_per_s"], 2),
            r["rate_basis"] or n.MISSING, n.fixed(r["steady_global_steps_per_s"], 2),
            *([n.count(r["steps"])] if own else []), n.hours(r["hours"]),
            n.hours(r["steady_hours"]), n.money(r["usd"]), "yes" if r["meets"] else "no", why,
            r["hardware"] or r["tier"] or n.MISSING, r["price_rows"] or n.MISSING,
        )  # fmt: skip
    candidates = [
        {**r, "why_not": None if (why := _why_not(r, hours, budget, said)) == n.MISSING else why}
        for r in result.candidates.to_dicts()
    ]
    if result.caveat and fmt == FormatChoice.table:
        from tierscope.cli.prose import say

        say(result.caveat)  # the first paragraph: nobody may read the choice without it
    doc = {"caveat": result.caveat, "choice": result.choice, "reason": result.reason, "quotas": limits,
           "candidates": candidates}  # fmt: skip
    emit(fmt, grid, candidates, doc, wide)
    if result.choice is None:
        from tierscope.exits import EXIT_NONE_MEETS

        raise typer.Exit(EXIT_NONE_MEETS)  # the table is printed: a script reads "nothing meets" from the code


def warn_unpriced(frame: pl.DataFrame) -> None:
    """A note on stderr for each cloud run the price table does not know (a typo, a new tier)."""
    import polars as pl
    from rich.text import Text

    from tierscope.contract import LOCAL_TIER_PATTERN

    unpriced = frame.filter(
        pl.col("ml_units_per_hour").is_null()
        & pl.col("usd_per_hour").is_null()
        & pl.col("tier").is_not_null()
        & ~pl.col("tier").str.contains(LOCAL_TIER_PATTERN)
        & pl.col("hardware").is_null()  # today's machines without a row: the summary's notes say which row
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
    dataset: DatasetOpt = Path(DEFAULT_DATASET),
    fmt: FormatOpt = FormatChoice.table,
    as_json: JsonOpt = False,
    baseline: BaselineOpt = None,
    price_date: PriceDateOpt = None,
    region: RegionOpt = "us",
    steps: Annotated[
        int | None,
        typer.Option(
            "--steps", min=1, help="A target of global steps: adds the hours and USD to reach it.", metavar="N"
        ),
    ] = None,
    runs: RunsOpt = None,
    tier: TierSelectOpt = None,
    wide: WideOpt = False,
    target_loss: TargetLossOpt = None,
    target_accuracy: TargetAccuracyOpt = None,
    prices: PricesOpt = None,
    each_run: Annotated[
        bool,
        typer.Option(
            "--each-run", help="A row per run, the runs of a configuration each on its own (default: one row each)."
        ),
    ] = False,
) -> None:
    """Show per configuration its status, steady-state and mean global steps/s, speedup, ML units and price.

    A configuration is the runs given one config (a manifest's config key, collect --config): one row, its
    steady rate the mean of its runs' with a 95 % interval between them; a run without one is its own row.
    --each-run shows a row per run instead.

    Each run is priced on its own date (the manifest's, else its log's first day), else on --price-date.
    JSON and CSV give every column of the summary, values unrounded, with the price rows behind each price
    (price_rows; --wide shows them too). --target-loss / --target-accuracy add each run's global step, time
    and price at that target (time_to_target_s, step_at_target, cost_to_target).
    """
    from tierscope.cli.output import summary_grid
    from tierscope.cli.tables import emit

    fmt = output_format(fmt, as_json)
    asked = summary_options(baseline, price_date, region, steps, runs, tier, target_loss, target_accuracy, prices)
    analysis = _analysis(dataset, asked)
    frame = analysis.summary if each_run or analysis.configurations is None else analysis.configurations
    warn_unpriced(frame)
    kind = "loss" if target_loss is not None else "accuracy" if target_accuracy is not None else None
    grid = summary_grid(frame, region, kind, baseline, asked.price_date)
    emit(fmt, grid, frame.to_dicts(), wide=wide)


def register(app: App) -> None:
    app.command("summary")(summary_cmd)
    app.command("predict")(predict_cmd)
    app.command("recommend")(recommend_cmd)
