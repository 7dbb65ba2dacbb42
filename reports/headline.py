"""The report's answer in a few sentences: the fastest run, the cheapest per step, the best value."""

from __future__ import annotations

import polars as pl

from tierscope.contract import LOCAL_TIER_PATTERN
from tierscope.reports.i18n import Catalog


def _named(row: dict[str, object]) -> dict[str, object]:
    # a run described by its machines has no tier: its machines name it (1 x n1-standard-8 (1 x NVIDIA_TESLA_T4))
    return {"run": row["run_id"], "tier": row["tier"] or row.get("hardware") or "–"}


def fastest(summary: pl.DataFrame, t: Catalog) -> str | None:
    """The run with the highest steady global steps/s, and its speedup over the baseline; a run that says
    nothing of what it ran on (no tier, no machines) is named alone, not with a dash for its machines."""
    ok = summary.filter(pl.col("steady_global_steps_per_s").is_not_null())
    if ok.height == 0:
        return None
    row = ok.sort(["steady_global_steps_per_s", "run_id"], descending=[True, False]).row(0, named=True)
    rate = t.number(row["steady_global_steps_per_s"], 2)
    bare = "" if row["tier"] or row.get("hardware") else "_bare"
    if row["speedup_vs_baseline"] is None or row["run_id"] == row["baseline_run_id"]:  # not "1.00x itself"
        return t(f"headline.fastest_nobase{bare}", rate=rate, **_named(row))
    return t(
        f"headline.fastest{bare}",
        rate=rate,
        speedup=t.number(row["speedup_vs_baseline"], 2),
        baseline=row["baseline_run_id"],
        **_named(row),
    )


def cheapest(summary: pl.DataFrame, t: Catalog) -> str | None:
    """The run with the lowest USD per 1,000 steps; without dollar prices, the most steps per ML unit-hour."""
    usd = summary.filter(pl.col("usd_per_1000_steps").is_not_null())
    if usd.height:
        row = usd.sort(["usd_per_1000_steps", "run_id"]).row(0, named=True)
        return t("headline.cheapest_usd", usd=t.significant(row["usd_per_1000_steps"]), **_named(row))
    units = summary.filter(pl.col("steps_per_ml_unit_hour").is_not_null())
    if units.height:
        row = units.sort(["steps_per_ml_unit_hour", "run_id"], descending=[True, False]).row(0, named=True)
        return t("headline.cheapest_units", value=t.number(row["steps_per_ml_unit_hour"], 0), **_named(row))
    return None


def no_price(summary: pl.DataFrame, t: Catalog) -> str | None:
    """Where no run with a steady rate has a price (dollars or ML units), what would give one: the machines
    it ran on, where no run names any (``collect --machine/--accelerator/--tpu/--tier``; a run on one's own
    hardware, ``local``, names none a price list knows), else price rows for them (``--prices``). None
    where some run has a price."""
    rated = summary.filter(pl.col("steady_global_steps_per_s").is_not_null())
    if rated.height == 0 or (rated["usd_per_hour"].is_not_null() | rated["ml_units_per_hour"].is_not_null()).any():
        return None
    hardware = rated["hardware"] if "hardware" in rated.columns else pl.Series([None] * rated.height, dtype=pl.String)
    cloud = rated["tier"].is_not_null() & ~rated["tier"].str.contains(LOCAL_TIER_PATTERN)
    described = (cloud.fill_null(False) | hardware.is_not_null()).any()
    return t("headline.no_price_rows" if described else "headline.no_price_machines")


def cost_text(value: float, usd: bool, t: Catalog) -> str:
    """A cost with its unit: ``1.23 USD`` or ``0.12 ML unit-hours``."""
    return t("fmt.usd", value=t.significant(value)) if usd else t("fmt.ml_unit_hours", value=t.significant(value))


def best_value(costs: pl.DataFrame, steps: int, t: Catalog) -> str | None:
    """The run with the lowest price × time to ``steps`` steps (USD, else ML unit-hours), of two priced runs or more.

    ``costs``: :func:`tierscope.reports.frames.time_and_cost_to_steps`' frame. Price × time weighs a
    run that is much faster for a little more money above both the cheapest and the fastest. The time is at
    the sustained rate (what the job takes), the steady-state rate's beside it where it differs.
    """
    usd = costs["usd_to_n"].is_not_null().any()
    cost = "usd_to_n" if usd else "ml_unit_hours_to_n"
    priced = costs.filter(pl.col(cost).is_not_null())
    if priced.height < 2:
        return None
    row = priced.with_columns(score=pl.col(cost) * pl.col("seconds_to_n")).sort("score", "run_id").row(0, named=True)
    time, steady = t.duration(row["seconds_to_n"]), t.duration(row.get("steady_seconds_to_n"))
    if steady not in (time, "–"):  # the machines' pace beside what the job takes, where they differ as shown
        time = t("headline.value_steady", time=time, steady=steady)
    return t(
        "headline.value",
        n=t.number(steps),
        time=time,
        cost=cost_text(row[cost], usd, t),
        **_named(row),
    )


def would_have(unmeasured: pl.DataFrame | None, t: Catalog) -> list[str]:
    """For each run that was never measured (a failed tier), what the scaling model says it would have
    done, with the fit's caveat (exactly determined, an extrapolation) and, where nothing checks the
    model, what one more measured tier would settle. ``unmeasured``:
    :data:`tierscope.analysis.forecast.UNMEASURED_SCHEMA` rows (None or empty: no sentence)."""
    out: list[str] = []
    for row in (unmeasured if unmeasured is not None else pl.DataFrame()).iter_rows(named=True):
        values = {
            "run": row["run_id"], "tier": row["tier"] or "–",
            "tasks": t.counted("count.training_tasks", row["tasks"]),
            "model": t("model." + row["model"]), "rate": t.number(row["global_steps_per_s"], 1),
            "ratio": t.number(row["extrapolation"], 1), "fit_runs": t.count(row["fit_runs"]),
            "sizes": t.join([t.number(s) for s in row["fit_sizes"]]),
            "largest": t.number(max(row["fit_sizes"])), "middle": t.number(row["settling_tasks"]),
        }  # fmt: skip
        if row["ci_low"] is None:  # exactly determined: no interval, say why and what would settle it
            noise = t.interval(row["noise_ci_low"], row["noise_ci_high"], 1)
            key = "forecast.exact_extrapolation" if row["beyond_limit"] else "forecast.exact"
            out.append(t(key, noise=noise, **values))
            out.append(t("forecast.settle", **values))
        else:
            out.append(t("forecast.fitted", interval=t.interval(row["ci_low"], row["ci_high"], 1), **values))
            if row["beyond_limit"]:
                out.append(t("forecast.extrapolation", **values))
    return out


def headline(
    summary: pl.DataFrame,
    costs: pl.DataFrame | None,
    steps: int,
    t: Catalog,
    unmeasured: pl.DataFrame | None = None,
) -> list[str]:
    """The headline sentences, in the report's language. ``summary``:
    :data:`tierscope.analysis.summary.SUMMARY_SCHEMA`'s
    frame; ``costs``: time and price to ``steps`` steps, or None when not available; ``unmeasured``:
    the predictions for runs never measured (:func:`would_have`), after the failed-run sentence.

    A failed run is never the fastest, the cheapest or the best value, whatever rate it logged before
    it failed (as ``recommend`` never offers one): it is counted in the failed-run sentence."""
    failed = summary.filter(pl.col("status") == "failed")
    finished = summary.filter(pl.col("status") != "failed")
    first = fastest(finished, t)
    # a failed run's rate is no answer: say that it failed, not that no run has a rate
    none = "headline.none_finished" if failed["steady_global_steps_per_s"].is_not_null().any() else "headline.none"
    out = [first or t(none)]
    if first is not None:
        if costs is not None:
            costs = costs.filter(~pl.col("run_id").is_in(failed["run_id"].to_list()))
        priced = (cheapest(finished, t), best_value(costs, steps, t) if costs is not None else None)
        for sentence in (*priced, no_price(finished, t)):
            if sentence:
                out.append(sentence)
    if failed.height:
        out.append(t.counted("headline.failed", failed.height))
    return out + would_have(unmeasured, t)
