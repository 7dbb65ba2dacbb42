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

from datetime import date
from pathlib import Path

import polars as pl

from tierscope.analysis.topology import DATA, run_topology

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
    and ``price_source`` (String).
    """
    units = load_units() if units is None else units
    prices = load_prices() if prices is None else prices
    if "topology" not in runs.columns:
        runs = runs.with_columns(topology=pl.lit(None, pl.String))
    keyed = runs.select(
        "run_id",
        pl.col("tier").str.to_uppercase().alias("name"),
        pl.col("date").fill_null(default_date).alias("price_date"),
        custom=pl.col("topology").is_not_null(),
    ).sort("price_date")
    with_units = keyed.join_asof(
        _units_of(units, "tier").rename({"ml_units_per_hour": "tier_units", "source": "tier_source"}),
        left_on="price_date",
        right_on="effective_date",
        by="name",
        strategy="backward",
        check_sortedness=False,  # sorted by date above, hence within each tier too
    ).join(_machine_units(keyed, run_topology(runs, tiers), units), on="run_id", how="left")
    region_prices = prices.filter(pl.col("region") == region).sort("effective_date")
    with_price = with_units.with_columns(
        ml_units_per_hour=pl.when(pl.col("custom")).then("machine_units").otherwise("tier_units"),
        units_source=pl.when(pl.col("custom")).then("machine_source").otherwise("tier_source"),
        units_basis=pl.when(pl.col("custom")).then(pl.lit("machine types")).otherwise(pl.lit("tier")),
    ).join_asof(
        region_prices.select("effective_date", "usd_per_ml_unit_hour", pl.col("source").alias("price_source")),
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
    )


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
        _units_of(units, "machine_type"),
        left_on="price_date",
        right_on="effective_date",
        by="name",
        strategy="backward",
        check_sortedness=False,
    )
    return priced.group_by("run_id").agg(
        machine_units=pl.when(pl.col("ml_units_per_hour").null_count() == 0).then(
            (pl.col("count") * pl.col("ml_units_per_hour")).sum()
        ),
        machine_source=pl.col("source").drop_nulls().unique().sort().str.join("; "),
    )
