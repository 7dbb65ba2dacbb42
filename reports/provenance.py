"""Where a report's numbers come from: sources, collection times, counts, price table rows, version."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import polars as pl

from tierscope import __version__
from tierscope.analysis.cost import tier_costs
from tierscope.analysis.summary import SummaryOptions, run_index
from tierscope.dataset.store import Dataset

#: At most this many source names are listed; the rest are counted.
MAX_SOURCES_LISTED = 30


@dataclass(frozen=True)
class PriceRow:
    """One price-table row a report used: the date it was looked up for and the pages it cites."""

    price_date: date
    units_source: str | None
    price_source: str | None


@dataclass
class Provenance:
    """``collected_*``: first and last time run facts were collected (UTC, None for an empty
    dataset). ``records``: step records; ``rejects``: lines kept aside. ``sources``: at most
    :data:`MAX_SOURCES_LISTED` source files or log names, ``sources_total`` of them in all."""

    dataset: str
    generated: datetime
    collected_first: datetime | None
    collected_last: datetime | None
    runs: int
    records: int
    rejects: int
    sources: list[str]
    sources_total: int
    region: str
    baseline: str | None
    prices: list[PriceRow] = field(default_factory=list)
    version: str = __version__


def provenance(dataset: Dataset, summary: pl.DataFrame, options: SummaryOptions | None = None) -> Provenance:
    """The provenance of a report on ``dataset`` whose summary is ``summary`` (computed with ``options``)."""
    options = options or SummaryOptions()
    sources = (
        pl.concat([dataset.scan("steps").select("source"), dataset.scan("events").select("source")])
        .unique()
        .drop_nulls()
        .sort("source")
        .collect()["source"]
    )
    collected = (
        dataset.scan("runs").select(first=pl.col("collected_at").min(), last=pl.col("collected_at").max()).collect()
    )
    costs = tier_costs(run_index(dataset), options.price_date or datetime.now(UTC).date(), options.region)
    used = (
        costs.filter(pl.col("ml_units_per_hour").is_not_null())
        .select("price_date", "units_source", "price_source")
        .unique()
        .sort("price_date", "units_source", "price_source", nulls_last=True)
    )
    return Provenance(
        dataset=str(dataset.root),
        generated=datetime.now(UTC),
        collected_first=collected["first"][0],
        collected_last=collected["last"][0],
        runs=summary.height,
        records=int(summary["records"].sum()),
        rejects=dataset.scan("rejects").select(pl.len()).collect().item(),
        sources=sources.head(MAX_SOURCES_LISTED).to_list(),
        sources_total=sources.len(),
        region=options.region,
        baseline=summary["baseline_run_id"].drop_nulls().first(),
        prices=[PriceRow(**row) for row in used.iter_rows(named=True)],
    )
