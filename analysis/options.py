"""What an analysis pass is asked: the baseline, the price date and region, a target, and what to add."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from tierscope.analysis.bootstrap import BOOTSTRAP_SEED
from tierscope.analysis.prices import PriceRow, PriceTable

#: The report's N when the dataset holds no step record to take the longest run's last step from.
DEFAULT_TARGET_STEPS = 1000


@dataclass
class AnalysisOptions:
    """The options of :func:`tierscope.analysis.analyze`.

    ``baseline``: a run id (default: see :func:`tierscope.analysis.summary.pick_baseline`).
    ``price_date``: the date for runs whose date is unknown (default: today, UTC); ``predict``
    and ``recommend`` price every candidate on it. ``region``: the price table's region
    (``us``, ``europe``, ``asia``). ``steps``: a target number of global steps for the time and
    price columns: an int, ``"longest"`` (the longest run's last global step, else
    :data:`DEFAULT_TARGET_STEPS`), or None (no target). ``seed``: the bootstrap seed
    (:mod:`tierscope.analysis.bootstrap`). ``charts``: also bucket the throughput series a
    report draws (:mod:`tierscope.analysis.series`), while the intervals are at hand.
    ``fits``: also fit Amdahl and the USL (:func:`tierscope.analysis.forecast.fit`).
    ``runs`` and ``tiers``: analyse only these run ids, only runs of these scale tiers (compared
    case-insensitively); empty: every run. Both given: the runs of those tiers among those ids.
    ``target_loss`` / ``target_accuracy``: time and price to a training loss at or below, or an accuracy at
    or above, this value (:mod:`tierscope.analysis.target`; at most one of the two).
    ``price_rows``: price rows given inline (a manifest's ``prices`` tables).
    ``prices``: the user's price files (:mod:`tierscope.analysis.prices`: CSV or TOML), over the shipped rows.
    ``region`` may also be a Google Cloud region (``us-central1``): today's machines are priced there, the
    legacy tiers in its area.
    """

    baseline: str | None = None
    price_date: date | None = None
    region: str = "us"
    steps: int | Literal["longest"] | None = None
    seed: int = BOOTSTRAP_SEED
    charts: bool = False
    fits: bool = False
    runs: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    target_loss: float | None = None
    target_accuracy: float | None = None
    prices: tuple[Path, ...] = ()
    price_rows: tuple[PriceRow, ...] = ()

    def price_table(self) -> PriceTable:
        """The shipped price rows with ``price_rows`` and ``prices``' over them (a manifest's rows first).

        Raises :class:`tierscope.analysis.prices.PriceFileError`."""
        return PriceTable.with_files(self.prices, self.price_rows)

    def price_day(self) -> date:
        """``price_date``, or today (UTC) when it is not given."""
        return self.price_date or datetime.now(UTC).date()


#: The former name, kept while the commands move (tierscope/cli): the same class.
SummaryOptions = AnalysisOptions
