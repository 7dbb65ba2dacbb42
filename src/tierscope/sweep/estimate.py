"""What a sweep will cost before it runs: each configuration's hardware priced an hour by the price table
(:func:`tierscope.analysis.prices.quote`: every pool's machines and accelerators, replicas counted) times the
run's time cap, and the budget checked against it.

The estimate is an upper bound on the machines' price: a run is billed until it ends, and the plan's
``minutes`` is when it is stopped at the latest (a run that finishes its steps sooner costs less).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from tierscope.analysis import prices
from tierscope.errors import UsageError
from tierscope.sweep.errors import SweepError
from tierscope.sweep.plan import Configuration, Plan


class BudgetError(SweepError, UsageError):
    """A budget that cannot pay for one run, or a configuration the price table cannot price."""


@dataclass(frozen=True)
class Estimate:
    """One configuration's estimate: ``usd_per_hour`` (None: unpriced, ``missing`` says which row), ``hours``
    (None: the plan gives no time cap), ``usd`` (None when either is), and the price rows used (``rows``:
    ``(quantity, the row's label)`` each, the label naming its resource, region, price, date and source)."""

    configuration: str
    usd_per_hour: float | None
    hours: float | None
    rows: tuple[tuple[int, str], ...]
    missing: str | None = None
    stale: str | None = None

    @property
    def usd(self) -> float | None:
        return None if self.usd_per_hour is None or self.hours is None else self.usd_per_hour * self.hours

    @property
    def why_unknown(self) -> str | None:
        if self.missing:
            return self.missing
        if self.hours is None:
            return "no time cap: give [run] minutes in the plan"
        return None


def estimate(configuration: Configuration, plan: Plan, table: prices.PriceTable, on: date | None = None) -> Estimate:
    """The estimate of ``configuration`` in ``plan``, priced by ``table`` on ``on`` (default: today, UTC)."""
    quote = prices.quote(configuration.hardware, on or datetime.now(UTC).date(), plan.region, table)
    return Estimate(
        configuration=configuration.name,
        usd_per_hour=quote.usd_per_hour,
        hours=None if plan.minutes is None else plan.minutes / 60,
        rows=tuple((u.quantity, u.row.label()) for u in quote.rows),
        missing=quote.missing,
        stale=quote.stale_note(),
    )


def estimates(plan: Plan, on: date | None = None) -> list[Estimate]:
    """Every configuration's estimate, in the plan's order, with the shipped rows and the plan's price files.
    Raises :class:`tierscope.analysis.prices.PriceFileError` for a price file that does not read."""
    table = prices.PriceTable.with_files(plan.prices)
    return [estimate(c, plan, table, on) for c in plan.configurations]


def total(found: list[Estimate]) -> float | None:
    """The sum of the estimates; None if any is unknown."""
    values = [e.usd for e in found]
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def check(found: list[Estimate], budget: float | None, allow_unpriced: bool) -> None:
    """Refuse a sweep before anything is submitted: a configuration without an estimate (unless
    ``allow_unpriced``), or a ``budget`` below the first configuration's estimate (nothing could run).
    Raises :class:`BudgetError`, one line."""
    unknown = [e for e in found if e.usd is None]
    if unknown and not allow_unpriced:
        first = unknown[0]
        raise BudgetError(
            f"configuration {first.configuration}: no estimate ({first.why_unknown}); "
            "add a price row (prices = [...] in the plan) or pass --allow-unpriced"
        )
    if budget is not None and found and (first_usd := found[0].usd) is not None and first_usd > budget:
        raise BudgetError(
            f"budget ${budget:,.2f} is below one run: {found[0].configuration} alone is estimated at "
            f"${first_usd:,.2f}; raise --budget or shorten [run] minutes. Nothing was submitted"
        )


def affordable(spent: float, next_usd: float | None, budget: float | None) -> bool:
    """Whether a configuration estimated at ``next_usd`` may be submitted after ``spent`` (estimated) dollars
    (an unpriced one, allowed by ``--allow-unpriced``, counts as nothing)."""
    return budget is None or spent + (next_usd or 0.0) <= budget + 1e-9
