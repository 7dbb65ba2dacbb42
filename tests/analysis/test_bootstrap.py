"""The steady rate's normal form (large samples) agrees with resampling (small samples)."""

from __future__ import annotations

import numpy as np
import pytest

from tierscope.analysis.bootstrap import EXACT_MAX, percentile_interval, steady_draws, steady_rate


def _resampled(values: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """The steady rate of ``draws`` resamples of ``values`` (equal steps), one at a time: the reference."""
    rng = np.random.default_rng(seed)
    return np.array([steady_rate(values[rng.integers(0, values.size, values.size)]) for _ in range(draws)])


def test_normal_form_matches_a_resampling_bootstrap_on_a_large_sample() -> None:
    values = np.random.default_rng(7).gamma(50.0, 0.2, 5000)  # skewed about 10 steps/s, like interval rates
    assert values.size > EXACT_MAX
    low, high = percentile_interval(steady_draws(values, "run"))
    ref_low, ref_high = percentile_interval(_resampled(values, 400, 8))
    # Both spread ~1.96 standard errors of the ratio estimator either side: the ends agree within 10 %
    # of the interval's width (400 reference draws: their 2.5 % ends are themselves a few % noisy).
    width = ref_high - ref_low
    assert low == pytest.approx(ref_low, abs=0.1 * width)
    assert high == pytest.approx(ref_high, abs=0.1 * width)
    assert low < steady_rate(values) < high


def test_draws_are_reproducible_and_fewer_are_the_first_of_more() -> None:
    values = np.linspace(9.0, 11.0, 10_001)
    a = steady_draws(values, "r", seed=1)
    assert np.array_equal(a, steady_draws(values, "r", seed=1))
    assert np.array_equal(a[:500], steady_draws(values, "r", seed=1, draws=500))
    small = values[:50]
    assert np.array_equal(steady_draws(small, "r", seed=1)[:500], steady_draws(small, "r", seed=1, draws=500))
