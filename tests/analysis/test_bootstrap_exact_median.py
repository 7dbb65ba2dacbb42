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


def test_middle_ranks_of_many_values_from_a_bracket_are_those_of_the_sorted_values() -> None:
    # from SELECT_MIN values a median's middle ranks come from the values in a bracket around them
    # (bootstrap._bracketed), not a partition of them all: the same bits as np.sort gives
    from tierscope.analysis.bootstrap import SELECT_MIN, _bracketed, _middle, numpy_median

    rng = np.random.default_rng(13)
    # 40,000 values 0.5, 1.5, ..., 39,999.5 shuffled: the middle ranks 19,999 and 20,000 are 19,999.5 and
    # 20,000.5, their mean 20,000.0
    halves = rng.permutation(np.arange(40_000) + 0.5)
    assert halves.size >= SELECT_MIN
    assert _bracketed(halves, 19_999, 20_000).tolist() == [19_999.5, 20_000.5]
    assert exact_median(halves) == 20_000.0
    assert numpy_median(halves) == 20_000.0
    n = 200_001
    cases = {
        "rates": rng.normal(22.8, 1.1, n),
        "sorted": np.sort(rng.gamma(2.0, 3.0, n)),
        "few values": rng.integers(0, 5, n).astype(np.float64),
        "infinities": np.where(rng.random(n) < 0.1, np.inf, rng.normal(5.0, 1.0, n)),
        "NaN": np.where(rng.random(n) < 0.2, np.nan, rng.normal(0.0, 1.0, n)),
        "mostly NaN": np.where(rng.random(n) < 0.6, np.nan, rng.normal(0.0, 1.0, n)),
        # zeros of both signs at the middle: numpy's own partition chooses which (the bracket finds none)
        "signed zeros": np.where(rng.random(n) < 0.5, -0.0, 0.0) * (rng.random(n) < 0.9),
    }
    for name, values in cases.items():
        for low, high in ((n // 2, n // 2), (n // 2 - 1, n // 2), (0, 0), (n - 2, n - 1)):
            expected = np.sort(values)[low : high + 1]
            got = _middle(values, low, high)
            assert got.tobytes() == expected.tobytes() or name == "signed zeros", (name, low, high)
            assert _middle(values.copy(), low, high, in_place=True).tobytes() == got.tobytes(), (name, low, high)
    assert _bracketed(cases["signed zeros"], n // 2, n // 2) is None
    assert _bracketed(cases["mostly NaN"], n // 2, n // 2) is None  # the median rank lies among the NaN
