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


def test_numpy_median_by_hand_and_to_the_bit_of_numpys() -> None:
    from tierscope.analysis.bootstrap import numpy_median, ranked

    # sorted 1.0 1.5 3.0 4.0: (1.5 + 3.0) / 2 = 2.25; sorted 1 3 5: 3; a NaN anywhere: NaN, as numpy says
    assert numpy_median(np.array([3.0, 1.0, 4.0, 1.5])) == 2.25
    assert numpy_median(np.array([5.0, 1.0, 3.0])) == 3.0
    assert np.isnan(numpy_median(np.array([1.0, np.nan, 2.0])))
    # the two middle values infinite, one each way: inf - inf is NaN, as numpy's mean gives it
    with np.errstate(invalid="ignore"):
        assert np.isnan(numpy_median(np.array([-np.inf, np.inf])))
    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 4, 199_999, 200_000):
        values = np.where(rng.random(n) < 0.1, np.inf, rng.gamma(2.0, 3.0, n))
        assert np.float64(numpy_median(values)).tobytes() == np.float64(np.median(values)).tobytes()
        # a median's middle ranks, from one partition: those of the sorted values (NaN last)
        with_nan = np.where(rng.random(n) < 0.3, np.nan, values)
        mid = (n - 1) // 2
        for low, high in ((mid, mid), (mid, min(mid + 1, n - 1))):
            got = ranked(lambda v=with_nan: [v], low, high)
            assert np.sort(with_nan)[low : high + 1].tobytes() == got.tobytes()
