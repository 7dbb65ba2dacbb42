"""Where an analysis' numbers come from: sources, collection times, counts, price table rows, version."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import polars as pl

#: At most this many source names are listed; the rest are counted.
MAX_SOURCES_LISTED = 30


@dataclass(frozen=True)
class PriceRow:
    """One price-table row the analysis used: the date it was looked up for and the pages it cites, and
    what a run priced by it is told (its ``price_note`` in English, ``said`` its sentences as
    :func:`tierscope.analysis.price_notes.to_json` wrote them; None: nothing); ``rows_said``: the price
    rows of today's machines (``price_source``) in the same form."""

    price_date: date
    units_source: str | None
    price_source: str | None
    note: str | None = None
    said: str | None = None
    rows_said: str | None = None


@dataclass
class Provenance:
    """``dataset``: its root. ``generated``: when the analysis ran (UTC). ``collected_*``: first and
    last time run facts were collected (UTC, None for an empty dataset). ``runs``: runs in the
    summary; ``records``: step records; ``rejects``: lines kept aside. ``sources``: at most
    :data:`MAX_SOURCES_LISTED` source files or log names (sorted), ``sources_total`` of them in all.
    ``region``, ``baseline``: as analysed. ``prices``: the price-table rows behind the costs.
    ``version``: tierscope's."""

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
    version: str = ""


def provenance(
    dataset: str,
    summary: pl.DataFrame,
    costs: pl.DataFrame,
    facts: pl.DataFrame,
    sources: pl.Series,
    rejects: int,
    region: str,
) -> Provenance:
    """The provenance of an analysis of ``dataset`` (its root) from what the pass already holds:
    ``summary`` (:data:`tierscope.analysis.summary.SUMMARY_SCHEMA`), ``costs``
    (:func:`tierscope.analysis.cost.run_costs`), ``facts`` (the runs table, ``collected_at``),
    ``sources`` (String: every source of a step record or event, any order, repeats allowed) and
    the number of ``rejects``."""
    import tierscope  # its version is looked up on first use (importlib.metadata)

    names = sources.drop_nulls().unique().sort()
    used = (
        costs.filter(
            pl.col("ml_units_per_hour").is_not_null()
            | pl.col("price_rows").is_not_null()
            | pl.col("price_note").is_not_null()  # no price, and why (a date before the table's rows)
        )
        .with_columns(
            # today's machines have no ML units: their rows stand in the price source
            price_source=pl.when(pl.col("ml_units_per_hour").is_null()).then("price_rows").otherwise("price_source"),
            note="price_note",
            said="price_said",
            rows_said=pl.when(pl.col("ml_units_per_hour").is_null()).then("price_rows_said"),
        )
        .select("price_date", "units_source", "price_source", "note", "said", "rows_said")
        .unique()
        .sort("price_date", "units_source", "price_source", "note", nulls_last=True)
    )
    collected = facts.get_column("collected_at")
    return Provenance(
        dataset=dataset,
        generated=datetime.now(UTC),
        collected_first=collected.min(),
        collected_last=collected.max(),
        runs=summary.height,
        records=int(summary["records"].sum()),
        rejects=rejects,
        sources=names.head(MAX_SOURCES_LISTED).to_list(),
        sources_total=names.len(),
        region=region,
        baseline=summary["baseline_run_id"].drop_nulls().first(),
        prices=[PriceRow(**row) for row in used.iter_rows(named=True)],
        version=tierscope.__version__,
    )
