"""What a scale tier costs: ML units per hour and price, from dated tables shipped as data.

``data/ml_units.csv`` (columns ``effective_date, kind, name, ml_units_per_hour, source``):
each row gives a scale tier's (``kind = tier``) or a machine type's (``kind = machine_type``)
ML units per hour from ``effective_date`` on, and the page and date it comes from.
``data/unit_prices.csv`` (``effective_date, region, usd_per_ml_unit_hour, source``): the
price of one ML unit-hour per region. For a given date the newest row on or before it
wins. The 2016 beta rows give units only: the 2016 post quotes no dollar price.

A run with a manifest topology (a CUSTOM tier, :mod:`tierscope.analysis.topology`) costs the sum
over its replicas of each machine type's ML units; any other run costs its tier's row.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import polars as pl

from tierscope.analysis.price_notes import STALE_DAYS, Said, english, to_json
from tierscope.analysis.prices import PriceTable, area_of, quote, region_of
from tierscope.analysis.topology import DATA, load_tiers, run_hardware, run_topology
from tierscope.contract import LOCAL_TIER_PATTERN

LOCAL_TIER_RE = re.compile(LOCAL_TIER_PATTERN)

UNITS_SCHEMA = {
    "effective_date": pl.Date(),
    "kind": pl.String(),
    "name": pl.String(),
    "ml_units_per_hour": pl.Float64(),
    "source": pl.String(),
}
PRICES_SCHEMA = {
    "effective_date": pl.Date(),
    "region": pl.String(),
    "usd_per_ml_unit_hour": pl.Float64(),
    "source": pl.String(),
}


def load_units(path: Path | None = None) -> pl.DataFrame:
    """The ML-units table (``UNITS_SCHEMA``); ``path`` overrides the bundled one."""
    return pl.read_csv(path or DATA.joinpath("ml_units.csv").read_bytes(), schema=UNITS_SCHEMA)


def load_prices(path: Path | None = None) -> pl.DataFrame:
    """The price-per-ML-unit-hour table (``PRICES_SCHEMA``); ``path`` overrides the bundled one."""
    return pl.read_csv(path or DATA.joinpath("unit_prices.csv").read_bytes(), schema=PRICES_SCHEMA)


def tier_costs(
    runs: pl.DataFrame,
    default_date: date,
    region: str = "us",
    units: pl.DataFrame | None = None,
    prices: pl.DataFrame | None = None,
    tiers: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """ML units/hour and USD/hour of each run on the run's date.

    ``runs`` has ``run_id`` (String), ``tier`` (String), ``date`` (Date, null: use
    ``default_date``) and optionally ``topology`` (String JSON from the manifest). Returns
    ``run_id``, ``price_date`` (Date), ``ml_units_per_hour``, ``usd_per_hour`` (Float64,
    null where the table has no row: a laptop, an unknown tier or machine type, or a date
    before any price), ``units_basis`` (``tier`` or ``machine types``), ``units_source``
    and ``price_source`` (String); and the dates behind them (Date): ``units_from`` (the oldest
    units row used), ``units_table_date`` (the table in force), ``price_from`` (the USD row used),
    ``units_newest`` and ``price_newest`` (each table's newest row, in ``region``), ``units_first`` (the
    first date the table prices the run's tier or every one of its machine types; null: it never does).
    """
    units = load_units() if units is None else units
    prices = load_prices() if prices is None else prices
    if "topology" not in runs.columns:
        runs = runs.with_columns(topology=pl.lit(None, pl.String))
    same_as = _tier_of_topology(runs, tiers)
    keyed = (
        runs.join(same_as, on="run_id", how="left")
        .select(
            "run_id",
            pl.coalesce("same_tier", pl.col("tier").str.to_uppercase()).alias("name"),
            pl.col("date").fill_null(default_date).alias("price_date"),
            custom=pl.col("topology").is_not_null() & pl.col("same_tier").is_null(),
            same_tier="same_tier",
        )
        .sort("price_date")
    )
    with_units = keyed.join_asof(
        _units_of(units, "tier").rename(
            {"ml_units_per_hour": "tier_units", "source": "tier_source", "effective_date": "tier_from"}
        ),
        left_on="price_date",
        right_on="tier_from",
        by="name",
        strategy="backward",
        check_sortedness=False,  # sorted by date above, hence within each tier too
    ).join(_machine_units(keyed, run_topology(runs, tiers), units), on="run_id", how="left")
    firsts = units.group_by("kind", "name").agg(first=pl.col("effective_date").min())
    with_units = with_units.join(
        firsts.filter(pl.col("kind") == "tier").select("name", tier_first="first"), on="name", how="left"
    )
    region_prices = prices.filter(pl.col("region") == region).sort("effective_date")
    with_price = with_units.with_columns(
        ml_units_per_hour=pl.when(pl.col("custom")).then("machine_units").otherwise("tier_units"),
        units_source=pl.when(pl.col("custom")).then("machine_source").otherwise("tier_source"),
        units_basis=pl.when(pl.col("custom"))
        .then(pl.lit("machine types"))
        .when(pl.col("same_tier").is_not_null())
        .then(pl.format("tier {} (the same machines)", "same_tier"))
        .otherwise(pl.lit("tier")),
        units_from=pl.when(pl.col("custom")).then("machine_from").otherwise("tier_from"),
        units_first=pl.when(pl.col("custom")).then("machine_first").otherwise("tier_first"),
    ).join_asof(
        region_prices.select(
            "effective_date",
            "usd_per_ml_unit_hour",
            pl.col("source").alias("price_source"),
            price_from="effective_date",
        ),
        left_on="price_date",
        right_on="effective_date",
        strategy="backward",
    )
    return with_price.select(
        "run_id",
        "price_date",
        "ml_units_per_hour",
        (pl.col("ml_units_per_hour") * pl.col("usd_per_ml_unit_hour")).alias("usd_per_hour"),
        pl.when(pl.col("ml_units_per_hour").is_not_null()).then("units_basis").alias("units_basis"),
        "units_source",
        "price_source",
        "units_from",
        pl.col("price_date")
        .map_elements(lambda day: _table_date(units, day), return_dtype=pl.Date)
        .alias("units_table_date"),
        pl.when(pl.col("usd_per_ml_unit_hour").is_not_null()).then("price_from").alias("price_from"),
        pl.lit(units["effective_date"].max(), pl.Date).alias("units_newest"),
        pl.lit(region_prices["effective_date"].max(), pl.Date).alias("price_newest"),
        "units_first",
    )


def _table_date(units: pl.DataFrame, day: date) -> date | None:
    """The newest ML-units table (its effective date) on or before ``day``."""
    return units.filter(pl.col("effective_date") <= day)["effective_date"].max()  # type: ignore[return-value]


def _tier_of_topology(runs: pl.DataFrame, tiers: pl.DataFrame | None) -> pl.DataFrame:
    """``run_id, same_tier``: the runs whose manifest topology is exactly a tier's composition (a CUSTOM job
    on STANDARD_1's machines), priced as that tier: the page's tier price is the price of those machines."""
    tiers = load_tiers() if tiers is None else tiers
    shapes = {
        tier: frozenset(rows.select("role", "count", "machine_type").rows()) for (tier,), rows in tiers.group_by("tier")
    }
    out = []
    for run_id, text in runs.filter(pl.col("topology").is_not_null()).select("run_id", "topology").iter_rows():
        try:
            pools = json.loads(text).items()
            # only a topology of bare machine types and counts: one naming accelerators or spot is not a tier
            shape = frozenset(
                (role, int(spec["count"]), spec["machine_type"])
                for role, spec in pools
                if int(spec["count"]) and set(spec) <= {"machine_type", "count"}
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        found = [tier for tier, want in shapes.items() if want == shape]
        if found:
            out.append({"run_id": run_id, "same_tier": found[0]})
    return pl.DataFrame(out, schema={"run_id": pl.String, "same_tier": pl.String})


def _units_of(units: pl.DataFrame, kind: str) -> pl.DataFrame:
    return (
        units.filter(pl.col("kind") == kind)
        .sort("effective_date")
        .select("name", "effective_date", "ml_units_per_hour", "source")
    )


def _machine_units(keyed: pl.DataFrame, topology: pl.DataFrame, units: pl.DataFrame) -> pl.DataFrame:
    """``run_id, machine_units, machine_source``: the sum over replicas; null if any type has no row."""
    replicas = (
        topology.join(keyed.select("run_id", "price_date"), on="run_id")
        .rename({"machine_type": "name"})
        .sort("price_date")
    )
    priced = replicas.join_asof(
        _units_of(units, "machine_type").with_columns(units_from="effective_date"),
        left_on="price_date",
        right_on="effective_date",
        by="name",
        strategy="backward",
        check_sortedness=False,
    )
    firsts = (
        units.filter(pl.col("kind") == "machine_type").group_by("name").agg(type_first=pl.col("effective_date").min())
    )
    return (
        priced.join(firsts, on="name", how="left")
        .group_by("run_id")
        .agg(
            machine_units=pl.when(pl.col("ml_units_per_hour").null_count() == 0).then(
                (pl.col("count") * pl.col("ml_units_per_hour")).sum()
            ),
            machine_source=pl.col("source").drop_nulls().unique().sort().str.join("; "),
            machine_from=pl.col("units_from").min(),
            # the table prices every machine type from the latest of their first rows; never if one has none
            machine_first=pl.when(pl.col("type_first").null_count() == 0).then(pl.col("type_first").max()),
        )
    )


def _legacy_stale(cost: dict, on: date) -> Said | None:
    """The sentence flagging a legacy run's ML-unit or USD row older than ``STALE_DAYS`` at ``on`` and
    the newest of its table (an older row followed by a newer one is known to have held until then:
    the 2016 rows price the runs of 2016); None: neither. ``cost``: a row of :func:`tier_costs`."""
    units = cost["units_table_date"]
    units_old = units == cost["units_newest"] and (on - units).days > STALE_DAYS
    usd = cost["price_from"]
    usd_old = usd is not None and usd == cost["price_newest"] and (on - usd).days > STALE_DAYS
    if not (units_old or usd_old):
        return None
    what = (
        Said.of("legacy_stale.both", units=units, usd=usd)
        if units_old and usd_old
        else Said.of("legacy_stale.units", date=units)
        if units_old
        else Said.of("legacy_stale.usd", date=usd)
    )
    newest = max(d for d in (units, usd) if d is not None)
    return Said.of("legacy_stale", what=what, days=(on - newest).days, on=on, limit=STALE_DAYS)


def _legacy_said(row: dict, cost: dict, on: date) -> tuple[list[Said], bool]:
    """The price note's sentences of a legacy run (its ``row`` of the run index, ``cost`` of :func:`tier_costs`,
    priced on ``on``) and whether a row was stale: ML units of an older table, stale rows, or, with no ML
    units, a date before the table's first row for its tier or machine types."""
    if cost["ml_units_per_hour"] is None:
        first = cost["units_first"]
        if first is not None and on < first:
            name = row["tier"] if row["topology"] is None else Said.of("machine_types")
            return [Said.of("before_table", on=on, name=name, first=first)], False
        return [], False
    said = []
    if cost["units_from"] is not None and cost["units_from"] < cost["units_table_date"]:
        said.append(Said.of("units_older", units_from=cost["units_from"], table=cost["units_table_date"]))
    stale = _legacy_stale(cost, on)
    if stale is not None:
        said.append(stale)
    return said, stale is not None


#: Columns of :func:`run_costs`.
COST_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "price_date": pl.Date(),
    "price_date_origin": pl.String(),  # "run" (its own date), "log" (its first timed record), "--price-date", "today"
    "ml_units_per_hour": pl.Float64(),  # legacy tiers and machine types; null for today's machines
    "usd_per_hour": pl.Float64(),
    "units_basis": pl.String(),  # tier / machine types / tier X (the same machines) / price rows
    "units_source": pl.String(),
    "price_source": pl.String(),
    "price_rows": pl.String(),  # every row behind usd_per_hour: quantity x resource region pricing price date (source)
    "price_stale": pl.Boolean(),  # a row older than prices.STALE_DAYS at price_date
    "price_note": pl.String(),  # stale rows and the remedy, a missing row, a row of another date
    "price_said": pl.String(),  # price_note's sentences as keys and values (price_notes.to_json), for the report
    "price_rows_said": pl.String(),  # the same of today's machines' price_rows
}


def run_costs(
    runs: pl.DataFrame,
    default_date: date,
    region: str = "us",
    table: PriceTable | None = None,
    date_asked: bool = False,
) -> pl.DataFrame:
    """Each run's hourly price on its own date (else ``default_date``: ``--price-date`` when ``date_asked``,
    else today): :data:`COST_SCHEMA`, one row per run of ``runs``.

    ``runs``: the run index (``run_id, tier, date, topology``). A run on today's machines (its pools,
    :func:`tierscope.analysis.topology.run_hardware`) is priced from the price rows
    (:func:`tierscope.analysis.prices.quote`, in its pools' region, else ``region``); a legacy tier or
    machine type in ML units (:func:`tier_costs`, in ``region``'s area); a laptop, or a run whose hardware is
    unknown, not at all. ``region``: a legacy area (``us``) or a Google Cloud region (``us-central1``).
    """
    table = table or PriceTable()
    if "topology" not in runs.columns:
        runs = runs.with_columns(topology=pl.lit(None, pl.String))
    legacy = tier_costs(runs, default_date, area_of(region))
    origin = "--price-date" if date_asked else "today"
    where = region_of(region)
    rows = []
    by_run = {r["run_id"]: r for r in legacy.iter_rows(named=True)}
    for row in runs.iter_rows(named=True):
        cost = by_run[row["run_id"]]
        on = row["date"] or default_date
        dated = row.get("date_origin") or ("run" if row["date"] else origin)
        entry: dict[str, object] = {"run_id": row["run_id"], "price_date": on, "price_date_origin": dated,
                                    "price_stale": False}  # fmt: skip
        local = bool(row["tier"]) and LOCAL_TIER_RE.search(row["tier"]) is not None
        hardware = None if local else run_hardware(row["tier"], row["topology"])
        if hardware is not None and not hardware.legacy:
            quoted = quote(hardware, on, where, table)
            rows_used = quoted.sources() or None
            said = quoted.said()
            entry |= {
                "usd_per_hour": quoted.usd_per_hour, "units_basis": "price rows", "price_source": rows_used,
                "price_rows": rows_used, "price_stale": quoted.stale, "price_rows_said": to_json(quoted.rows_said()),
            }  # fmt: skip
        else:
            entry |= {k: cost[k] for k in ("ml_units_per_hour", "usd_per_hour", "units_basis", "units_source",
                                           "price_source")}  # fmt: skip
            if cost["ml_units_per_hour"] is not None:
                entry["price_rows"] = "; ".join(
                    s for s in (f"ML units: {cost['units_source']}", cost["price_source"] and
                                f"USD per ML unit-hour: {cost['price_source']}") if s
                )  # fmt: skip
            said, entry["price_stale"] = _legacy_said(row, cost, on)
        entry |= {"price_note": english(said), "price_said": to_json(said)}
        rows.append(entry)
    return pl.DataFrame(rows, schema=COST_SCHEMA)
