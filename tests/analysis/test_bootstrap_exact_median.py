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


def test_ranks_of_many_values_in_parts_are_those_of_their_sorted_whole() -> None:
    # above BRACKET_MIN the ranks come from a bracket around them, not a copy: the same values
    from tierscope.analysis.bootstrap import BRACKET_MIN, median_of, ranked

    rng = np.random.default_rng(7)
    parts = [rng.gamma(5.0, 2.0, 700_001), rng.normal(50.0, 1.0, 300_000), np.array([1e9, -1e9])]
    whole = np.sort(np.concatenate(parts))
    assert whole.size > BRACKET_MIN
    for low, high in ((0, 3), (whole.size // 2 - 50, whole.size // 2 + 50), (whole.size - 2, whole.size - 1)):
        np.testing.assert_array_equal(ranked(lambda: parts, low, high), whole[low : high + 1])
    # 1,000,003 values: the median is the 500,002nd (rank 500,001), polars' to the bit
    assert median_of(lambda: parts, whole.size) == pl.Series(whole).median()
    # sorted values (a strided sample still brackets) and a NaN (the copy after all): the same bits
    assert exact_median(whole) == pl.Series(whole).median()
    with_nan = whole.copy()
    with_nan[5] = np.nan
    assert exact_median(with_nan) == exact_median(with_nan.copy(), in_place=True)
