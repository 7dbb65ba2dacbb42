"""exact_median: polars' median to the bit, with or without a copy of the values."""

from __future__ import annotations

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import exact_median


def test_even_and_odd_counts_by_hand() -> None:
    # sorted 1.0 1.5 3.0 4.0: the two middle values' mean, (1.5 + 3.0) / 2 = 2.25
    assert exact_median(np.array([3.0, 1.0, 4.0, 1.5])) == 2.25
    # sorted 1.0 3.0 5.0: the middle one
    assert exact_median(np.array([5.0, 1.0, 3.0])) == 3.0
    assert exact_median(np.array([], dtype=np.float64)) is None


def test_in_place_gives_the_same_bits_and_only_reorders_the_values() -> None:
    # what a pieced run's jump and warm-up medians take: its own gathered array, partitioned there
    values = np.random.default_rng(3).gamma(5.0, 2.0, 100_001)
    for n in (values.size, values.size - 1):  # odd, even
        kept = values[:n].copy()
        owned = values[:n].copy()
        expected = pl.Series(kept).median()
        assert exact_median(kept) == expected
        assert np.array_equal(kept, values[:n])  # the default leaves the caller's order
        assert exact_median(owned, in_place=True) == expected
        assert np.array_equal(np.sort(owned), np.sort(values[:n]))  # the same values, reordered
