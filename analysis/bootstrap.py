"""Seeded percentile bootstrap: the uncertainty of a median rate and of a ratio of medians.

Every figure is reproducible: draws come from :func:`numpy.random.default_rng` seeded
by ``(seed, crc32(label))``, so one run's interval depends on its own data and the seed,
not on which other runs were analysed with it.
"""

from __future__ import annotations

import zlib

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


def median_draws(
    values: np.ndarray, label: str, seed: int = BOOTSTRAP_SEED, draws: int = BOOTSTRAP_DRAWS
) -> np.ndarray:
    """``draws`` medians of resamples (with replacement, same size) of ``values``; shape ``(draws,)``.

    For more than :data:`EXACT_MAX` values the draws use the median's rank form: the
    median of a resample of ``n`` values is the sorted value of rank ``K``, where ``K``
    (how many resampled values fall at or below it) is Binomial(n, 1/2) around n/2, so a
    draw is ``sorted[n/2 + sqrt(n)/2 * z]`` with ``z`` standard normal. This is the
    distribution-free order-statistic interval of the median, which the resampling
    bootstrap converges to; it costs one sort instead of ``draws * n`` picks.

    Raises :class:`ValueError` for an empty ``values``.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ValueError(f"{label}: no values to bootstrap")
    rng = rng_for(label, seed)
    if values.size <= EXACT_MAX:
        picks = rng.integers(0, values.size, size=(draws, values.size))
        return np.median(values[picks], axis=1)
    n = values.size
    ranks = np.clip(np.rint((n - 1) / 2 + np.sqrt(n) / 2 * rng.standard_normal(draws)).astype(np.int64), 0, n - 1)
    # Only the ranks drawn need their sorted values: those between the lowest and highest drawn (a few
    # sqrt(n) around the middle), put in place by a partition and sorted alone.
    lo, hi = int(ranks.min()), int(ranks.max())
    window = np.sort(np.partition(values, (lo, hi))[lo : hi + 1])
    return window[ranks - lo]


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
