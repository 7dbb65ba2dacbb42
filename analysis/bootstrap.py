"""Seeded percentile bootstrap: the uncertainty of a median rate and of a ratio of medians.

Every figure is reproducible: draws come from :func:`numpy.random.default_rng` seeded
by ``(seed, crc32(label))``, so one run's interval depends on its own data and the seed,
not on which other runs were analysed with it.
"""

from __future__ import annotations

import zlib

import numpy as np

BOOTSTRAP_SEED = 20161231
BOOTSTRAP_DRAWS = 2000
LEVEL = 0.95


def rng_for(label: str, seed: int = BOOTSTRAP_SEED) -> np.random.Generator:
    """The generator for ``label`` (a run id) under ``seed``."""
    return np.random.default_rng([seed, zlib.crc32(label.encode())])


def median_draws(
    values: np.ndarray, label: str, seed: int = BOOTSTRAP_SEED, draws: int = BOOTSTRAP_DRAWS
) -> np.ndarray:
    """``draws`` medians of resamples (with replacement, same size) of ``values``; shape ``(draws,)``.

    Raises :class:`ValueError` for an empty ``values``.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        raise ValueError(f"{label}: no values to bootstrap")
    picks = rng_for(label, seed).integers(0, values.size, size=(draws, values.size))
    return np.median(values[picks], axis=1)


def percentile_interval(draws: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of ``draws`` (NaNs ignored)."""
    tail = (1 - level) / 2 * 100
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return float(low), float(high)
