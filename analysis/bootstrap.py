"""The steady-rate estimator, and its seeded percentile bootstrap: the uncertainty of a steady rate
and of a ratio of two.

Every figure is reproducible: draws come from :func:`numpy.random.default_rng` seeded
by ``(seed, crc32(label))``, so one run's interval depends on its own data and the seed,
not on which other runs were analysed with it.
"""

from __future__ import annotations

import functools
import warnings
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


#: Up to this many values the bootstrap resamples them; above it, draws come from the ratio estimator's
#: normal form (:func:`steady_draws`): resampling 200,000 intervals 2,000 times would take minutes and GBs.
EXACT_MAX = 2000


#: The stall bound, as a multiple of the median steady step time (seconds per global step; each
#: steady interval one observation): an interval whose step time is at most :data:`STALL_FROM` times it
#: counts whole in the steady rate, one at :data:`STALL_TO` times or more not at all, and one between by
#: a share falling linearly from 1 to 0 (:func:`kept_shares`). A taper, not a cut: an interval whose step
#: time crosses the bound moves the rate by a fraction of its own weight, never by a jump.
#: Why these: the noise of a steady run stays within 1.11x its median step time on every real log
#: read here (the 2016 BASIC log 1.073x, the laptop's 1.024x, STANDARD_1's 1.040x; shared case22
#: 1.106x, case24 1.043x, case15 1.042x), while a stall is 1.5x and more (a 10 s checkpoint in a
#: 20 s logging interval; the laptop's slow 100 -> 200 interval, 9.034 s against 5.304 s, 1.70x).
#: A spread-based bound (ML Goodput's median + 3 x MAD) would cut into the noise of a quiet log:
#: the laptop's MAD is 0.032 s per 100 steps, so its bound 5.400 s drops the ordinary 5.432 s interval.
#: One way only: a stall is slow. An interval faster than most is kept (in a run of two levels, a
#: restart on faster machines, the other level is not an outlier), and where most intervals hold a
#: recurring pause (shared case05 evaluates within two of its three intervals, 29.6 and 31.6 global
#: steps/s, not in the third, 59.8), the steady rate is their steps over their time, 35.3.
STALL_FROM = 1.25
STALL_TO = 1.5


@dataclass(frozen=True, eq=False)
class SteadyRates:
    """A run's steady interval rates (``rates``, global steps/s) and each interval's global steps
    (``weights``, > 0; None where every interval covers the same steps, so a run of 20 M intervals holds
    no 160 MB of equal steps), Float64 arrays of one size in the rows' order (:func:`steady_rates`).
    As an array (``np.asarray``) it is its rates."""

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
        """Whether every interval covers the same steps."""
        return self.weights is None or self.size == 0 or bool((self.weights == self.weights[0]).all())

    @functools.cached_property
    def reading(self) -> Reading:
        """The one pass of :func:`read` over the intervals (kept with the sample: the rate, its stalls and its
        interval all come from it)."""
        return read(self.rates, None if self.alike() else self.weights)

    def steady(self) -> float | None:
        """:func:`steady_rate` of the intervals (None when none counts)."""
        return self.reading.rate

    def stalls(self) -> int:
        """How many intervals the stall bound weighs down or leaves out (:func:`kept_shares` < 1)."""
        return self.reading.stalls


#: A run's steady sample as the bootstrap takes it: plain rates (equal steps) or :class:`SteadyRates`.
Sample = np.ndarray | SteadyRates


def steady_rates(rates: np.ndarray, lengths: np.ndarray) -> SteadyRates:
    """:class:`SteadyRates` of ``rates`` and their intervals' lengths ``lengths`` (Float64, in global steps
    as :data:`tierscope.analysis.throughput.STEADY_WEIGHT` gives them; NaN or <= 0: unknown, counted as
    the median known one). The weights are None where every known length is the same (or none is known)."""
    lengths = np.asarray(lengths, dtype=np.float64)
    known = np.isfinite(lengths) & (lengths > 0)
    rates = np.asarray(rates, dtype=np.float64)
    # min and max in place: lengths[known] would copy 160 MB at 20 M intervals
    longest = np.max(lengths, where=known, initial=-np.inf)
    if not known.any() or longest == np.min(lengths, where=known, initial=np.inf):
        return SteadyRates(rates, None)
    if known.all():
        return SteadyRates(rates, lengths)
    return SteadyRates(rates, np.where(known, lengths, float(numpy_median(lengths[known]))))


#: Intervals taken at a time by :func:`steady_rate`'s sums: a few MB of temporaries, not a copy of them all.
_BLOCK = 1 << 20


def median_pace(rates: np.ndarray) -> float | None:
    """The rate (global steps/s) of the median step time of the intervals (their ``1 / rates``; rates that
    are not > 0 and finite left out): the middle rate, or of two middle ones the rate of their mean step
    time. From the middle rates without a copy of them all, and without forming ``1 / rate`` (a step
    time of 1e-308 s loses digits); None without a rate."""
    rates = np.asarray(rates, dtype=np.float64)
    good = np.isfinite(rates) & (rates > 0)
    if not good.all():
        rates = rates[good]
    n = rates.size
    if n == 0:
        return None
    mid = (n - 1) // 2
    middle = ranked(lambda: [rates], mid, mid if n % 2 else mid + 1)
    slow, fast = float(middle[0]), float(middle[-1])
    return slow if n % 2 else slow * 2 / (1 + slow / fast)  # 1 / ((1/slow + 1/fast) / 2)


def kept_shares(rates: np.ndarray, pace: float | None = None) -> np.ndarray:
    """Each interval's share in the steady rate, in [0, 1], by its step time over the median one
    (``pace``: :func:`median_pace` of ``rates`` if not given): 1 up to :data:`STALL_FROM`, 0 from
    :data:`STALL_TO`, linear between. An interval with a rate that is not > 0 and finite has none."""
    rates = np.asarray(rates, dtype=np.float64)
    pace = median_pace(rates) if pace is None else pace
    if pace is None:
        return np.zeros(rates.size)
    return _shares(rates, pace)[0]


def _shares(rates: np.ndarray, pace: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kept_shares` of ``rates`` at ``pace``, and each interval's step time over the median one
    (``pace / rate``; 0 where the rate is not > 0 and finite)."""
    good = np.isfinite(rates) & (rates > 0)
    everywhere = bool(good.all())  # the usual case: no masking
    slower = pace / rates if everywhere else np.where(good, pace / np.where(good, rates, 1.0), 0.0)
    shares = np.clip((STALL_TO - slower) / (STALL_TO - STALL_FROM), 0.0, 1.0)
    return (shares if everywhere else np.where(good, shares, 0.0)), slower


def _stopped(rates: np.ndarray) -> bool:
    """Whether ``rates`` state no progress at all: no rate > 0, and a rate of 0 (a log's ``0 global_step/sec``)."""
    return not bool((rates > 0).any()) and bool((rates == 0).any())


@dataclass(frozen=True)
class Reading:
    """What one pass over a run's steady intervals finds (:func:`read`): the median ``pace`` (global
    steps/s of the median step time; None: no rate > 0), the steady ``rate`` (None: nothing kept), the
    ``stalls`` (intervals kept by less than a whole share) and the ratio estimator's standard error
    ``error`` (global steps/s: the delta method's, with the shares as found; None: no rate)."""

    pace: float | None
    rate: float | None
    stalls: int
    error: float | None


def read(rates: np.ndarray, steps: np.ndarray | None = None) -> Reading:
    """The steady rate (global steps/s) of steady intervals with rates ``rates`` (global steps/s) and
    global steps ``steps`` (None: all alike), with its stalls and standard error, in one pass a block at
    a time: the steps of the intervals kept over their time, sum(k s) / sum(k s / r), each interval kept
    by its :func:`kept_shares` k. A time-weighted mean: an interval counts by its length, and a stall
    (beyond the bound) not at all. Taken as the median pace P times sum(k s) / sum(k s P / r), so that
    equal rates give that rate to the bit. 0.0 where the rates state no progress at all
    (:func:`_stopped`); None when nothing is kept otherwise."""
    rates = np.asarray(rates, dtype=np.float64)
    pace = median_pace(rates)
    if pace is None:
        return Reading(None, 0.0 if _stopped(rates) else None, 0, None)
    # sums of s (the kept steps), t (their time in median step times, s P / r) and their squares and
    # product: the rate is P sum(s) / sum(t), the squared residuals sum((s - R t / P)^2) expand over them
    sums = np.zeros(5)
    stalls = 0
    for at in range(0, rates.size, _BLOCK):
        part = rates[at : at + _BLOCK]
        k, slower = _shares(part, pace)
        s = k if steps is None else k * steps[at : at + _BLOCK]
        t = s * slower
        # products summed elementwise, not by np.dot: BLAS's threads spin on a loaded machine (CPU for nothing)
        sums += (s.sum(), t.sum(), (s * s).sum(), (s * t).sum(), (t * t).sum())
        stalls += int(np.count_nonzero((k < 1) & (slower > 0)))  # slower 0: a rate that is not > 0 (no stall)
    kept, time, ss, st, tt = (float(x) for x in sums)
    if time <= 0:
        return Reading(pace, None, stalls, None)
    ratio = kept / time  # the rate in median paces
    residuals = max(ss - 2 * ratio * st + ratio * ratio * tt, 0.0)
    return Reading(pace, pace * ratio, stalls, pace * np.sqrt(residuals) / time)


def steady_rate(rates: np.ndarray, steps: np.ndarray | None = None) -> float | None:
    """The steady rate of :func:`read` (global steps/s; None when nothing is kept)."""
    return read(rates, steps).rate


def _resampled_rates(rates: np.ndarray, steps: np.ndarray | None) -> np.ndarray:
    """:func:`steady_rate` of each row of ``rates`` (2-D: resamples) by the same row of ``steps``."""
    good = np.isfinite(rates) & (rates > 0)
    times = np.where(good, 1.0 / np.where(good, rates, 1.0), np.nan)  # left out of the median, none kept
    if good.all():
        median = np.median(times, axis=1, keepdims=True)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample of no good rate: an all-NaN row
            median = np.nanmedian(times, axis=1, keepdims=True)
    ratio = times / median
    shares = np.nan_to_num(np.clip((STALL_TO - ratio) / (STALL_TO - STALL_FROM), 0.0, 1.0), nan=0.0)
    s = shares if steps is None else shares * steps
    kept_time = (s * np.where(shares > 0, times, 0.0)).sum(axis=1)  # NaN times have no share
    stopped = ~(rates > 0).any(axis=1) & (rates == 0).any(axis=1)  # as steady_rate's 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(stopped, 0.0, np.where(kept_time > 0, s.sum(axis=1) / kept_time, np.nan))


#: Resamples computed at a time (a block of ``draws x n`` values at most 2,000 x 200 x 8 bytes a few times).
_DRAW_BLOCK = 200


def steady_draws(values: Sample, label: str, seed: int = BOOTSTRAP_SEED, draws: int = BOOTSTRAP_DRAWS) -> np.ndarray:
    """``draws`` bootstrap draws of the steady rate (:func:`steady_rate`) of ``values``; shape ``(draws,)``.
    Up to :data:`EXACT_MAX` intervals, the rate of resamples (with replacement, same size; each resampled
    interval keeps its steps, and the stall bound is taken anew from each resample's median).

    For more than :data:`EXACT_MAX` intervals the draws are normal about the rate with the ratio
    estimator's standard error (the delta method, the kept shares as found on the whole sample):
    ``R + z * sqrt(sum((k s - R k s / r)^2)) / sum(k s / r)`` (:attr:`Reading.error`), which the
    resampling bootstrap converges to; it costs the pass the rate takes anyway instead of ``draws * n``
    picks. Raises :class:`ValueError` for an empty ``values``."""
    steps = values.weights if isinstance(values, SteadyRates) and not values.alike() else None
    rates = np.asarray(values, dtype=float)
    if rates.size == 0:
        raise ValueError(f"{label}: no values to bootstrap")
    rng = rng_for(label, seed)
    if rates.size <= EXACT_MAX:
        picks = rng.integers(0, rates.size, size=(draws, rates.size))
        out = np.empty(draws)
        for at in range(0, draws, _DRAW_BLOCK):
            rows = picks[at : at + _DRAW_BLOCK]
            out[at : at + _DRAW_BLOCK] = _resampled_rates(rates[rows], None if steps is None else steps[rows])
        return out
    reading = values.reading if isinstance(values, SteadyRates) else read(rates, steps)
    z = rng.standard_normal(draws)
    if reading.rate is None or reading.error is None:
        return np.full(draws, np.nan if reading.rate is None else reading.rate)
    return reading.rate + z * reading.error


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
    if high - low <= 1:  # a median's one or two middle values
        return _middle(whole, low, high)
    return np.sort(np.partition(whole, (low, high))[low : high + 1])


def _middle(values: np.ndarray, low: int, high: int, in_place: bool = False) -> np.ndarray:
    """``np.sort(values)[low : high + 1]`` for ``high - low`` of 0 or 1 (Float64; NaN sorts last, as numpy
    sorts it): one partition at ``high`` and, for two values, the largest before it, which is the value of
    rank ``low``. numpy's partition at two ranks (or one rank given twice) costs about four times one
    (200,000 rates: 1.6 ms against 0.4): a median is taken of every run's and every task's rates.
    ``in_place``: partition ``values`` itself (its order is lost). From :data:`SELECT_MIN` values, the
    partition is of the few values around the middle (:func:`_bracketed`), where they can be found so; in
    place only below :data:`BRACKET_MIN` (the bracket's masks, a byte a value, would add to a pieced run's peak
    where the partition in place adds nothing)."""
    if values.size >= SELECT_MIN and not (in_place and values.size >= BRACKET_MIN):
        found = _bracketed(values, low, high)
        if found is not None:
            return found
    if in_place:
        values.partition(high)
        held = values
    else:
        held = np.partition(values, high)
    if low == high:
        return held[high : high + 1].copy()
    # np.max propagates a NaN, and a NaN before rank high means the value of rank low is NaN too (NaN last)
    return np.array([held[:high].max(), held[high]])


#: From this many values, :func:`_middle` partitions the values in a bracket around the ranks wanted, not them
#: all: a partition of 200,000 rates took 1.9-2.6 ms, the bracket 0.75 (its sample's partition, two comparisons
#: of every value and the window's partition); a median is taken of every run's and every task's rates.
SELECT_MIN = 20_000
#: Every this many values make the sample :func:`_bracketed` chooses its bracket from.
SELECT_STRIDE = 8


def _bracketed(values: np.ndarray, low: int, high: int) -> np.ndarray | None:
    """:func:`_middle`'s ranks ``low`` and ``high`` (``high - low`` of 0 or 1) of ``values`` from the values
    lying in a bracket: the order statistics of a strided sample five standard errors either side of the
    ranks give the bracket, the values below it are counted and those in it partitioned (as :func:`ranked`
    brackets its ranks, a sample of a size that suits a median of a few hundred thousand values). None
    where the bracket misses them (the values in an order the sample does not represent, a NaN among
    them), and where a value found is a zero (numpy may hold 0.0 or -0.0 there, as its partition of the
    whole chose: that choice is kept); the caller then partitions them all. Never the values' order."""
    sample = values[::SELECT_STRIDE]
    m, total = sample.size, values.size
    margin = 5 * np.sqrt(m) / 2 + 1  # five standard errors of a sample quantile's rank
    ranks = (int(max(0, low * m / total - margin)), int(min(m - 1, high * m / total + margin)))
    floor, ceiling = np.partition(sample, ranks)[list(ranks)]
    below = int(np.count_nonzero(values < floor))
    window = values[(values >= floor) & (values <= ceiling)]  # a NaN is never in it: no comparison holds
    if not (below <= low and high < below + window.size):
        return None
    at = high - below
    window.partition(at)
    found = window[at : at + 1].copy() if low == high else np.array([window[:at].max(), window[at]])
    return None if bool((found == 0).any()) else found


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
    if not in_place and n >= BRACKET_MIN:  # no copy of them all
        return median_of(lambda: [values], n)
    middle = _middle(values, mid, mid if n % 2 else mid + 1, in_place)
    if n % 2:
        return float(middle[0])
    return pl.Series(middle).median()


def numpy_median(values: np.ndarray) -> np.floating:
    """``np.median(values)`` of a 1-D Float64 array, equal to the bit (NaN where one is NaN; an empty array
    as numpy gives it), from one partition (:func:`_middle`) where numpy makes two or three."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        return np.median(values)
    if np.isnan(values).any():
        return np.float64(np.nan)
    n, mid = values.size, values.size // 2
    if n % 2:
        return _middle(values, mid, mid)[0]
    return np.mean(_middle(values, mid - 1, mid))  # numpy's: the mean of the two middle values


def percentile_interval(draws: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The central ``level`` percentile interval of ``draws`` (NaNs ignored)."""
    tail = (1 - level) / 2 * 100
    if np.isnan(draws).all():  # numpy would warn "All-NaN slice" on the terminal
        return float("nan"), float("nan")
    low, high = np.nanpercentile(draws, [tail, 100 - tail])
    return float(low), float(high)
