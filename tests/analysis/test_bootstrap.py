"""The median's rank form (large samples) agrees with resampling (small samples)."""

from __future__ import annotations

import numpy as np
import pytest

from tierscope.analysis.bootstrap import EXACT_MAX, median_draws, percentile_interval


def test_rank_form_matches_a_resampling_bootstrap_on_a_large_sample() -> None:
    values = np.random.default_rng(7).gamma(5.0, 2.0, 5000)  # skewed, like interval rates
    assert values.size > EXACT_MAX
    low, high = percentile_interval(median_draws(values, "run"))
    picks = np.random.default_rng(8).integers(0, values.size, size=(2000, values.size))
    ref_low, ref_high = percentile_interval(np.median(values[picks], axis=1))
    # Both are ~1.96 * sqrt(n)/2 ranks around the median: the ends agree to a few ranks,
    # i.e. well within 5 % of the interval's width.
    width = ref_high - ref_low
    assert low == pytest.approx(ref_low, abs=0.05 * width)
    assert high == pytest.approx(ref_high, abs=0.05 * width)
    assert low < np.median(values) < high


def test_rank_form_draws_are_sample_values_and_reproducible() -> None:
    values = np.arange(10_001, dtype=float)
    a = median_draws(values, "r", seed=1)
    assert np.array_equal(a, median_draws(values, "r", seed=1))
    assert set(a) <= set(values)
    # ranks n/2 +- sqrt(n)/2 * z: the middle 95 % lies within 5000 +- 1.96 * 50 = 4902..5098
    assert np.percentile(a, 2.5) >= 4890 and np.percentile(a, 97.5) <= 5110
