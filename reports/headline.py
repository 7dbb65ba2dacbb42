"""The report's answer in a few sentences: the fastest run, the cheapest per step, the best value."""

from __future__ import annotations

import polars as pl

from tierscope.analysis.prices import on_compute_engine
from tierscope.analysis.summary import examples_word, shared_examples_word
from tierscope.contract import LOCAL_TIER_PATTERN
from tierscope.reports.i18n import Catalog


def _named(row: dict[str, object]) -> dict[str, object]:
    # a run described by its machines has no tier: its machines name it (1 x n1-standard-8 (1 x NVIDIA_TESLA_T4))
    return {"run": row["run_id"], "tier": row["tier"] or row.get("hardware") or "–"}


def _unit(summary: pl.DataFrame, t: Catalog) -> dict[str, str]:
    """The words for the summary's examples (:func:`tierscope.analysis.summary.examples_word`: tokens where
    the logs measured tokens/s): ``unit`` (plural) and ``one`` (singular), in ``t``'s language."""
    word = _word(summary)
    return {"unit": t(f"unit.{word}"), "one": t(f"unit.{word.removesuffix('s')}")}


def _word(summary: pl.DataFrame) -> str:
    """The examples the headline speaks of: the runs' one unit, else (tokens beside images) the baseline's, the
    runs compared on examples/s counting it (:func:`tierscope.analysis.summary.shared_examples_word`)."""
    shared = shared_examples_word(summary)
    if shared is not None:
        return shared
    base = summary.filter(pl.col("run_id") == pl.col("baseline_run_id"))["examples_unit"].drop_nulls()
    return base[0] if base.len() else examples_word(summary)


def on_examples(summary: pl.DataFrame) -> bool:
    """Whether the summary compares some run with its baseline on examples/s (``speedup_basis``): its runs'
    steps process different numbers of examples, so a step is no unit to rank them by."""
    return "speedup_basis" in summary.columns and bool((summary["speedup_basis"] == "examples/s").any())


def apart_why(row: dict[str, object], t: Catalog) -> str:
    """How a run's work differs from the baseline's (an :data:`~tierscope.analysis.comparable.APART_SCHEMA` row), in
    ``t``'s language: the formats that read their records, what their examples/s count."""
    parts = []
    if row["formats"] is not None:
        parts.append(t("apart.formats", formats=row["formats"], baseline_formats=row["baseline_formats"]))
    if row["examples_unit"] is not None:
        unit, base = (t(f"unit.{row[k]}") for k in ("examples_unit", "baseline_examples_unit"))
        parts.append(t("apart.unit", unit=unit, baseline_unit=base))
    return t.join(parts)


def _kept_apart(row: dict[str, object], apart: pl.DataFrame | None) -> dict[str, object] | None:
    """The :data:`~tierscope.analysis.comparable.APART_SCHEMA` row of a run of the runs table's ``row`` (a run, or a
    configuration with its ``run_ids``) kept apart from the baseline; None: none of its runs was."""
    if apart is None:
        return None
    ids = str(row.get("run_ids") or row["run_id"]).split(", ")
    kept = apart.filter(~pl.col("named") & pl.col("run_id").is_in(ids))
    return kept.row(0, named=True) if kept.height else None


def fastest(summary: pl.DataFrame, t: Catalog, apart: pl.DataFrame | None = None) -> str | None:
    """The run with the highest steady global steps/s, and its speedup over the baseline; where the summary
    compares on examples/s (:func:`on_examples`), the run with the highest speedup (its examples/s over the
    baseline's), said in examples/s. A run that says nothing of what it ran on (no tier, no machines) is named
    alone, not with a dash for its machines."""
    ok = summary.filter(pl.col("steady_global_steps_per_s").is_not_null())
    if ok.height == 0:
        return None
    examples = on_examples(ok) and ok["speedup_vs_baseline"].is_not_null().any()
    if examples:
        ok = ok.filter(pl.col("speedup_vs_baseline").is_not_null())
        rank, unit, digits = "speedup_vs_baseline", "_examples", 0
        rate_of = "examples_per_s"
    else:
        rank, unit, digits, rate_of = "steady_global_steps_per_s", "", 2, "steady_global_steps_per_s"
    row = ok.sort([rank, "run_id"], descending=[True, False]).row(0, named=True)
    rate = t.number(row[rate_of], digits)
    bare = "" if row["tier"] or row.get("hardware") else "_bare"
    if row["speedup_vs_baseline"] is None or row["run_id"] == row["baseline_run_id"]:  # not "1.00x itself"
        said = t(f"headline.fastest{unit}_nobase{bare}", rate=rate, **_named(row), **_unit(summary, t))
        # a dash where its speedup would be: the reader asks why the fastest run is not compared
        kept = _kept_apart(row, apart) if row["speedup_vs_baseline"] is None else None
        why = apart_why(kept, t) if kept is not None else ""
        if kept is None or not why:
            return said
        return f"{said} {t('apart.headline', run=row['run_id'], baseline=kept['baseline_run_id'], why=why)}"
    return t(
        f"headline.fastest{unit}{bare}",
        **_unit(summary, t),
        rate=rate,
        speedup=t.number(row["speedup_vs_baseline"], 2),
        baseline=row["baseline_run_id"],
        **_named(row),
    )


def cheapest(summary: pl.DataFrame, t: Catalog) -> str | None:
    """The run with the lowest USD per 1,000 steps, or per million examples where the summary compares on
    examples/s (:func:`on_examples`: its ``usd_per_million_examples``); without dollar prices, the
    most steps per ML unit-hour (examples where on examples/s)."""
    examples = on_examples(summary)
    if examples:
        # a million tokens and a million images are no one price: the runs of the unit spoken of alone
        usd = summary.filter(
            pl.col("usd_per_million_examples").is_not_null() & pl.col("examples_unit").eq_missing(_word(summary))
        )
        if usd.height:
            row = usd.sort(["usd_per_million_examples", "run_id"]).row(0, named=True)
            usd_text = t.significant(row["usd_per_million_examples"])
            return t("headline.cheapest_usd_examples", usd=usd_text, **_named(row), **_unit(summary, t))
    usd = summary.filter(pl.col("usd_per_1000_steps").is_not_null())
    if usd.height and not examples:
        row = usd.sort(["usd_per_1000_steps", "run_id"]).row(0, named=True)
        return t("headline.cheapest_usd", usd=t.significant(row["usd_per_1000_steps"]), **_named(row))
    if examples:
        per_unit = pl.col("examples_per_s") * 3600 / pl.col("ml_units_per_hour")
        units = summary.with_columns(_per=per_unit).filter(pl.col("_per").is_not_null() & pl.col("_per").is_finite())
        if units.height:
            row = units.sort(["_per", "run_id"], descending=[True, False]).row(0, named=True)
            value = t.number(row["_per"], 0)
            return t("headline.cheapest_units_examples", value=value, **_named(row), **_unit(summary, t))
        return None
    units = summary.filter(pl.col("steps_per_ml_unit_hour").is_not_null())
    if units.height:
        row = units.sort(["steps_per_ml_unit_hour", "run_id"], descending=[True, False]).row(0, named=True)
        return t("headline.cheapest_units", value=t.number(row["steps_per_ml_unit_hour"], 0), **_named(row))
    return None


def compute_engine(summary: pl.DataFrame, t: Catalog) -> str | None:
    """What the prices shown are, where one rests on a shipped Compute Engine row
    (:func:`tierscope.analysis.prices.on_compute_engine`); None otherwise."""
    rows = summary["price_rows"] if "price_rows" in summary.columns else []
    return t("headline.compute_engine") if on_compute_engine(rows) else None


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


def best_value(
    costs: pl.DataFrame, steps: int, t: Catalog, work: tuple[str, float] | None = None, unit: str = "examples"
) -> str | None:
    """The run with the lowest price × time to ``steps`` steps (USD, else ML unit-hours), of two priced runs or more.

    ``costs``: :func:`tierscope.reports.frames.time_and_cost_to_steps`' frame. Price × time weighs a
    run that is much faster for a little more money above both the cheapest and the fastest. The time is at
    the sustained rate (what the job takes), the steady-state rate's beside it where it differs. ``work``:
    ``(baseline run, examples)`` where ``steps`` are steps of the baseline's work (the summary's
    ``target_examples``): the sentence says the work, each run having done its own steps; ``unit``: what
    those examples are (``examples`` or ``tokens``, :func:`tierscope.analysis.summary.examples_word`).
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
    once = row.get("once_s") or 0.0
    # Said, because the time is not N / the rate shown in the table, and its price not N x the price per step.
    both = "_both" if time != t.duration(row["seconds_to_n"]) else ""  # the steady-state time is beside it
    paid_once = " " + t(f"headline.value_once{both}", once=t.duration(once)) if once > 0 else ""
    return _value_sentence(row, steps, t, work, unit, time, cost_text(row[cost], usd, t)) + paid_once


def _value_sentence(
    row: dict[str, object], steps: int, t: Catalog, work: tuple[str, float] | None, unit: str, time: str, cost: str
) -> str:
    """:func:`best_value`'s sentence of ``row``'s ``time`` and ``cost`` to ``steps`` steps (or ``work``)."""
    if work is not None:
        return t(
            "headline.value_work",
            n=t.number(steps),
            baseline=work[0],
            examples=t.number(work[1], 0),
            unit=t(f"unit.{unit}"),
            time=time,
            cost=cost,
            **_named(row),
        )
    return t("headline.value", n=t.number(steps), time=time, cost=cost, **_named(row))


def _work(summary: pl.DataFrame) -> tuple[str, float] | None:
    """``(baseline run, examples)`` the summary's target is, where it is work rather than steps."""
    if "target_examples" not in summary.columns:
        return None
    examples, baseline = summary["target_examples"].drop_nulls(), summary["baseline_run_id"].drop_nulls()
    return (baseline[0], examples[0]) if examples.len() and baseline.len() else None


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
    apart: pl.DataFrame | None = None,
) -> list[str]:
    """The headline sentences, in the report's language. ``summary``:
    :data:`tierscope.analysis.summary.SUMMARY_SCHEMA`'s
    frame; ``costs``: time and price to ``steps`` steps, or None when not available; ``unmeasured``:
    the predictions for runs never measured (:func:`would_have`), after the failed-run sentence; ``apart``: the
    runs kept apart from the baseline (:data:`tierscope.analysis.comparable.APART_SCHEMA`), why said where the
    fastest is one.

    A failed run is never the fastest, the cheapest or the best value, whatever rate it logged before
    it failed (as ``recommend`` never offers one): it is counted in the failed-run sentence."""
    failed = summary.filter(pl.col("status") == "failed")
    finished = summary.filter(pl.col("status") != "failed")
    # The answer ranks the baseline's job only: a run of another job (analysis/comparable.py) is no candidate, its
    # steps being other work; it is named as left out, and the table below still shows it.
    other = [] if apart is None else apart.filter(~pl.col("named"))["run_id"].to_list()
    left_out = finished.filter(pl.col("run_id").is_in(other))
    if left_out.height and left_out.height < finished.height:
        finished = finished.filter(~pl.col("run_id").is_in(other))
        if costs is not None:
            costs = costs.filter(~pl.col("run_id").is_in(other))
    else:
        left_out = finished.clear()
    first = fastest(finished, t, apart)
    # a failed run's rate is no answer: say that it failed, not that no run has a rate
    none = "headline.none_finished" if failed["steady_global_steps_per_s"].is_not_null().any() else "headline.none"
    out = [first or t(none)]
    if first is not None:
        if costs is not None:
            costs = costs.filter(~pl.col("run_id").is_in(failed["run_id"].to_list()))
        priced = (
            cheapest(finished, t),
            best_value(costs, steps, t, _work(summary), _word(summary)) if costs is not None else None,
        )
        for sentence in (*priced, no_price(finished, t), compute_engine(finished, t)):
            if sentence:
                out.append(sentence)
    if left_out.height:
        runs = ", ".join(sorted(left_out["run_id"].to_list()))
        baseline = left_out["baseline_run_id"].drop_nulls()
        base = str(baseline[0]) if baseline.len() else str(apart["baseline_run_id"][0])  # type: ignore[index]
        n = left_out.height
        out.append(
            t(f"headline.apart_left_out.{'one' if n == 1 else 'other'}", n=t.number(n), runs=runs, baseline=base)
        )
    if failed.height:
        out.append(t.counted("headline.failed", failed.height))
    return out + would_have(unmeasured, t)
