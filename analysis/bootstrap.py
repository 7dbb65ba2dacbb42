"""Seeded percentile bootstrap: the uncertainty of a median rate and of a ratio of medians.

Every figure is reproducible: draws come from :func:`numpy.random.default_rng` seeded
by ``(seed, crc32(label))``, so one run's interval depends on its own data and the seed,
not on which other runs were analysed with it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import polars as pl

BOOTSTRAP_SEED = 20161231
BOOTSTRAP_DRAWS = 2000
LEVEL = 0.95


def rng_for(label: str, seed: int = BOOTSTRAP_SEED) -> np.random.Generator:
    """The generator for ``label`` (a run id) under ``seed``."""
    return np.random.default_rng([seed, zlib.crc32(label.encode())])


#: Up to this many values the bootstrap resamples them; above it, draws come from the
#: rank form below (resampling 200,000 intervals 2,000 times would take minutes and GBs).
EXACT_MAX = 2000


#: Steady intervals are of very different lengths, and their median weighted by their global steps, where
#: the longest is more than this many times the shortest (an order of magnitude, as a step jump's
#: :data:`tierscope.analysis.throughput.JUMP_FACTOR`). A log written every N steps keeps the plain median
#: of its rates, a few lines missing from an excerpt included: the 2016 STANDARD_1 log's worker 0 logs
#: steps 100 and 1000 only, 900 steps against the others' 100 (9x).
MIXED_FACTOR = 10.0


@dataclass(frozen=True, eq=False)
class SteadyRates:
    """A run's steady interval rates (``rates``, global steps/s) and each one's weight in the median
    (``weights``, > 0: its global steps where the intervals are mixed; None where every interval weighs the
    same, so a run of 20 M intervals holds no 160 MB of ones), Float64 arrays of one size in the rows'
    order (:func:`steady_rates`). As an array (``np.asarray``) it is its rates."""

    rates: np.ndarray
    weights: np.ndarray | None

    @property
    def size(self) -> int:
        return int(self.rates.size)

    def __len__(self) -> int:
        return self.size

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return np.asarray(self.rates, dtype=dtype)

    def alike(self) -> bool:
        """Whether every interval weighs the same (the plain median)."""
        return self.weights is None or self.size == 0 or bool((self.weights == self.weights[0]).all())

    def median(self) -> float | None:
        """:func:`weighted_median` of the rates by their weights (None when empty)."""
        if self.weights is None or self.alike():
            return exact_median(self.rates)
        return weighted_median(self.rates, self.weights)


#: A run's steady sample as the bootstrap takes it: plain rates (equal weights) or :class:`SteadyRates`.
Sample = np.ndarray | SteadyRates


def steady_rates(rates: np.ndarray, lengths: np.ndarray) -> SteadyRates:
    """:class:`SteadyRates` of ``rates`` and their intervals' lengths ``lengths`` (Float64, in global steps
    as :data:`tierscope.analysis.throughput.STEADY_WEIGHT` gives them; NaN or <= 0: unknown, counted as
    the median known one). The weights are the lengths where the longest is more than
    :data:`MIXED_FACTOR` times the shortest; else (or none known) None: the plain median."""
    lengths = np.asarray(lengths, dtype=np.float64)
    known = np.isfinite(lengths) & (lengths > 0)
    rates = np.asarray(rates, dtype=np.float64)
    # min and max in place: lengths[known] would copy 160 MB at 20 M intervals
    longest = np.max(lengths, where=known, initial=-np.inf)
    if not known.any() or longest <= MIXED_FACTOR * np.min(lengths, where=known, initial=np.inf):
        return SteadyRates(rates, None)
    return SteadyRates(rates, np.where(known, lengths, float(np.median(lengths[known]))))


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float | None:
    """The median of ``values`` weighted by ``weights`` (> 0): the smallest value at or below which
    half the weight lies, or the mean of it and the next where exactly half does (equal weights: the
    plain median, :func:`exact_median`). None when empty."""
    if values.size == 0:
        return None
    order = np.argsort(values, kind="stable")
    cum = np.cumsum(weights[order])
    half = cum[-1] / 2
    at = int(np.searchsorted(cum, half, side="left"))
    if cum[at] == half and at + 1 < values.size:
        return exact_median(values[order[at : at + 2]])
    return float(values[order[at]])


def _weighted_medians(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`weighted_median` of each row of ``values`` (2-D) by the same row of ``weights``."""
    order = np.argsort(values, axis=1, kind="stable")
    ranked = np.take_along_axis(values, order, axis=1)
    cum = np.cumsum(np.take_along_axis(weights, order, axis=1), axis=1)
    half = cum[:, -1:] / 2
    at = (cum < half).sum(axis=1)
    rows = np.arange(values.shape[0])
    low = ranked[rows, at]
    high = ranked[rows, np.minimum(at + 1, values.shape[1] - 1)]
    exact = cum[rows, at] == half[:, 0]
    return np.where(exact, (low + high) / 2, low)


def median_draws(values: Sample, label: str, seed: int = BOOTSTRAP_SEED, draws: int = BOOTSTRAP_DRAWS) -> np.ndarray:
    """``draws`` medians of resamples (with replacement, same size) of ``values``; shape ``(draws,)``.
    Of :class:`SteadyRates` whose intervals weigh differently, the medians are weighted (each resampled
    interval keeps its weight, :func:`weighted_median`); the rank form below then takes the weighted
    quantile at the drawn rank's share, with the effective number of intervals (sum w)^2 / sum w^2.

    For more than :data:`EXACT_MAX` values the draws use the median's rank form: the
    median of a resample of ``n`` values is the sorted value of rank ``K``, where ``K``
    (how many resampled values fall at or below it) is Binomial(n, 1/2) around n/2, so a
    draw is ``sorted[n/2 + sqrt(n)/2 * z]`` with ``z`` standard normal. This is the
    distribution-free order-statistic interval of the median, which the resampling
    bootstrap converges to; it costs one sort instead of ``draws * n`` picks.

    Raises :class:`ValueError` for an empty ``values``.
    """
    weighted = isinstance(values, SteadyRates) and not values.alike()
    weights = values.weights if isinstance(values, SteadyRates) else None
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ValueError(f"{label}: no values to bootstrap")
    rng = rng_for(label, seed)
    if weighted and weights is not None:
        return _weighted_draws(values, weights, rng, draws)
    if values.size <= EXACT_MAX:
        picks = rng.integers(0, values.size, size=(draws, values.size))
        return np.median(values[picks], axis=1)
    n = values.size
    ranks = np.clip(np.rint((n - 1) / 2 + np.sqrt(n) / 2 * rng.standard_normal(draws)).astype(np.int64), 0, n - 1)
    # Only the ranks drawn need their sorted values: those between the lowest and highest drawn (a few
    # sqrt(n) around the middle), put in place by a partition and sorted alone.
    lo, hi = int(ranks.min()), int(ranks.max())
    return ranked(lambda: [values], lo, hi)[ranks - lo]


def _weighted_draws(values: np.ndarray, weights: np.ndarray, rng: np.random.Generator, draws: int) -> np.ndarray:
    """:func:`median_draws` of weighted values (see there)."""
    if values.size <= EXACT_MAX:
        picks = rng.integers(0, values.size, size=(draws, values.size))
        return _weighted_medians(values[picks], weights[picks])
    order = np.argsort(values, kind="stable")
    ranked, cum = values[order], np.cumsum(weights[order])
    effective = cum[-1] ** 2 / float(np.square(weights).sum())
    shares = np.clip(0.5 + rng.standard_normal(draws) / (2 * np.sqrt(effective)), 0.0, 1.0)
    return ranked[np.minimum(np.searchsorted(cum, shares * cum[-1], side="left"), values.size - 1)]


#: Below this many values, order statistics come from a partitioned copy; above, from the values in a
#: bracket around the ranks wanted (:func:`ranked`): a copy of 20 M rates is 160 MB.
BRACKET_MIN = 1_000_000
#: Values of the subsample a bracket is chosen from.
BRACKET_SAMPLE = 100_000


def ranked(parts: Callable[[], Iterable[np.ndarray]], low: int, high: int) -> np.ndarray:
    """The values of ranks ``low`` to ``high`` (0-based, inclusive, ascending) of the Float64 arrays
    ``parts()`` yields (taken as one; each call yields the same), sorted:
    ``np.sort(np.concatenate(list(parts())))[low : high + 1]``, without a copy of them all where they
    are many. A strided subsample's order statistics give a bracket of values holding the ranks wanted
    with near certainty (five standard errors either side); the values in it are counted and gathered
    in one more pass over the parts. Where the bracket misses (an adversarial order of values) or a
    value is NaN, the copy after all: the result is the same either way. Raises :class:`ValueError`
    for ranks outside the values."""
    total = sum(p.size for p in parts())
    if not 0 <= low <= high < total:
        raise ValueError(f"ranks {low}..{high} of {total} values")
    if total >= BRACKET_MIN and not any(np.isnan(p).any() for p in parts()):
        stride = max(1, total // BRACKET_SAMPLE)
        # every stride-th value of the whole (a part's start continues the count of the one before)
        picked, offset = [], 0
        for part in parts():
            picked.append(part[(-offset) % stride :: stride])
            offset += part.size
        sample = np.concatenate(picked)
        m = sample.size
        margin = 5 * np.sqrt(m) / 2 + 1  # five standard errors of a sample quantile's rank
        ranks = (int(max(0, low * m / total - margin)), int(min(m - 1, high * m / total + margin)))
        floor, ceiling = np.partition(sample, ranks)[list(ranks)]
        below = 0
        inside = []
        for part in parts():
            below += int(np.count_nonzero(part < floor))
            inside.append(part[(part >= floor) & (part <= ceiling)])
        window = np.concatenate(inside)
        if below <= low and high < below + window.size:
            return np.sort(window)[low - below : high - below + 1]
    whole = np.concatenate(list(parts()))
    return np.sort(np.partition(whole, (low, high))[low : high + 1])


def median_of(parts: Callable[[], Iterable[np.ndarray]], size: int) -> float | None:
    """:func:`exact_median` of the ``size`` values ``parts()`` yields (as :func:`ranked`), without a copy
    of them all: None when there are none."""
    if size == 0:
        return None
    mid = (size - 1) // 2
    middle = ranked(parts, mid, mid if size % 2 else mid + 1)
    return float(middle[0]) if size % 2 else pl.Series(middle).median()


def exact_median(values: np.ndarray, in_place: bool = False) -> float | None:
    """The median of ``values`` (Float64, no nulls), equal to the bit to polars' ``Series.median()``
    (the mean of the two middle values is polars' own), found by a partition of a copy instead of
    the sorted copy polars makes: None when empty. ``in_place``: partition ``values`` itself (a
    writable array the caller drops after; its order is lost), no copy (160 MB at 20 M values)."""
    n = values.size
    if n == 0:
        return None
    mid = (n - 1) // 2
    kth = mid if n % 2 else (mid, mid + 1)
    if not in_place and n >= BRACKET_MIN:  # no copy of them all
        return median_of(lambda: [values], n)
    if in_place:
        values.partition(kth)
        held = values
    else:
        held = np.partition(values, kth)
    if n % 2:
        return float(held[mid])
    return pl.Series(held[mid : mid + 2]).median()


def percentile_interval(draws: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of ``draws`` (NaNs ignored)."""
    tail = (1 - level) / 2 * 100
    if np.isnan(draws).all():  # numpy would warn "All-NaN slice" on the terminal
        return float("nan"), float("nan")
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return float(low), float(high)
