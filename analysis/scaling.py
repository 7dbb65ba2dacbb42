"""Scalability models: Amdahl's law and the Universal Scalability Law fitted to measured runs.

Throughput ``X`` (steady-state global steps/s) against ``N`` training tasks:

- USL (Gunther): ``X(N) = λ N / (1 + σ (N - 1) + κ N (N - 1))``; ``σ`` is contention
  (the serial share), ``κ`` coherency (crosstalk: throughput *falls* past
  ``N* = sqrt((1 - σ) / κ)``), ``λ`` the one-task throughput.
- Amdahl: the USL with ``κ = 0``.

Fitting: ``N / X = (1 + σ (N - 1) + κ N (N - 1)) / λ`` is linear in ``(1/λ, σ/λ, κ/λ)``;
it is solved by least squares on relative errors (every run's point weighs the same
whatever its throughput) with ``σ, κ >= 0`` (the exact bounded minimum, :func:`bounded_lstsq_many`). One
point per run: its steady-state median. Runs of the same size are separate points.

Uncertainty: a percentile bootstrap. Each draw resamples every run's steady intervals
(the same draws as the run's own interval, :mod:`tierscope.analysis.bootstrap`), takes the
medians and refits; the 95 % intervals of the parameters are the 2.5 and 97.5 percentiles
over the draws. They hold the measurement noise of the rates only (``noise_ci_*`` of a
prediction). A prediction's interval (``ci_*``) adds the model's own error, by
leave-one-out: the model is refitted without each task count in turn, and the interval
spans the bootstrap's and every such refit's prediction (a model that holds predicts the
left-out sizes; one that does not, moves). A refit is bounded as the main fit is (``σ, κ >= 0``,
``1/λ >= 1e-12`` s); runs that fall off faster than the model allows put its ``1/λ`` at that
bound, and its prediction at 1 task near ``1e12`` global steps/s (runs of 2 and 4 tasks at 20
and 8 global steps/s imply ``1/λ = -0.1`` s for Amdahl's law). An interval reaching above
:data:`SANE_FACTOR` times linear scaling from the fastest per-task rate measured (``N`` times the
largest ``X / N``) is the bound's, not the data's: the prediction there has no interval (null, on
the chart a gap in the band) and :func:`prediction_caveat` says why.

What the data must hold: Amdahl has two parameters and needs two different sizes; the
USL has three and needs three. With exactly as many sizes as parameters the fit is
**exactly determined** (status ``exactly determined``): the curve goes through every
point, nothing checks the model, and leaving a size out leaves too few to refit, so a
prediction gets no interval (null), only its measurement noise; the fit says so.
A prediction beyond :data:`EXTRAPOLATION_LIMIT` times the largest measured task count is an
extrapolation, and :func:`prediction_caveat` says so too.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from tierscope.analysis.bootstrap import BOOTSTRAP_SEED, LEVEL, Sample, percentile_interval, steady_draws
from tierscope.contract import LOCAL_TIER_PATTERN

#: Draws for the fits' bootstrap (each draw is one small least-squares solve per model).
FIT_DRAWS = 1000
MODELS = ("amdahl", "usl")
MIN_SIZES = {"amdahl": 2, "usl": 3}
MODEL_NAMES = {"amdahl": "Amdahl's law", "usl": "the USL"}
#: The statuses of a fit: the data checks the model / as many task counts as parameters / too few /
#: the runs fall off faster than the model can (its one-task throughput at its bound: see :func:`fit_model`).
FITTED, EXACT, INSUFFICIENT, DOES_NOT_HOLD = "fitted", "exactly determined", "insufficient", "does not hold"
#: A prediction at more than this many times the largest measured task count is an extrapolation.
EXTRAPOLATION_LIMIT = 2.0
#: An interval reaching above this many times linear scaling from the fastest per-task rate measured
#: is a bound's artefact (see the module doc): no fit the runs support comes near it, since
#: ``X(N) <= λ N`` and ``λ`` is at most the fastest per-task rate times ``1 + σ (n - 1) + κ n (n - 1)``
#: for the smallest run's ``n`` tasks: a factor of a few, where a refit at its bound gives ``1e9`` or more.
SANE_FACTOR = 1000.0

#: Columns of :func:`scaling_points`.
POINTS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tier": pl.String(),
    "tasks": pl.UInt32(),  # training tasks that logged (master/chief + workers)
    "steady_global_steps_per_s": pl.Float64(),
    "steady_ci_low": pl.Float64(),
    "steady_ci_high": pl.Float64(),
}

#: Columns of :func:`fit_table`: one row per model and parameter.
FIT_SCHEMA: dict[str, pl.DataType] = {
    "model": pl.String(),  # amdahl / usl
    "parameter": pl.String(),  # lambda (global steps/s of one task), sigma, kappa (dimensionless)
    "estimate": pl.Float64(),  # null when the model could not be fitted
    "ci_low": pl.Float64(),  # bootstrap 95 % interval
    "ci_high": pl.Float64(),
    "runs": pl.UInt32(),  # runs behind the fit
    "sizes": pl.UInt32(),  # distinct task counts behind the fit
    "status": pl.String(),  # fitted / exactly determined (as many sizes as parameters) / insufficient
    "message": pl.String(),  # the plain-words verdict
}

#: Columns of :func:`predictions` and :func:`prediction_band`.
PREDICTION_SCHEMA: dict[str, pl.DataType] = {
    "model": pl.String(),
    "tasks": pl.UInt32(),
    "global_steps_per_s": pl.Float64(),  # predicted steady-state throughput; null: no fit
    "ci_low": pl.Float64(),  # 95 % interval: bootstrap and leave-one-out (null: exactly determined)
    "ci_high": pl.Float64(),
    "status": pl.String(),  # as FIT_SCHEMA
    "message": pl.String(),
    "noise_ci_low": pl.Float64(),  # the bootstrap's 95 % interval alone (measurement noise)
    "noise_ci_high": pl.Float64(),
    "extrapolation": pl.Float64(),  # tasks / the largest measured task count
    "caveat": pl.String(),  # prediction_caveat (null: none)
}


@dataclass
class ScalingFit:
    """One model fitted (or not) to the measured runs.

    ``params``: ``{"lambda", "sigma", "kappa"}`` point estimates (empty when
    ``status == "insufficient"``). ``draws``: bootstrap parameters, shape ``(draws, 3)``
    in that order. ``left_out``: the leave-one-out refits' parameters, shape ``(sizes, 3)``
    (empty unless ``status == "fitted"``). ``per_task``: the fastest per-task rate measured
    (the largest ``X / N`` of its runs: steady global steps/s per training task; None unless fitted).
    ``mixes``: the machines per task of the runs fitted, in words, where they differ
    (:func:`mixed_machines`; None: one machine type per task, or unknown). ``excluded``: the measured runs
    left out of the fit for another accelerator type, in words (``a100-1, a100-2 (NVIDIA_TESLA_A100)``;
    None: none).
    """

    model: str
    status: str
    message: str
    runs: int
    sizes: list[int]
    params: dict[str, float] = field(default_factory=dict)
    draws: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    left_out: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    per_task: float | None = None
    mixes: str | None = None
    excluded: str | None = None

    @property
    def fitted(self) -> bool:
        """Whether the model predicts: fitted or exactly determined (not too few runs, not one that does not hold)."""
        return self.status in (FITTED, EXACT)

    @property
    def exact(self) -> bool:
        """As many task counts as parameters: nothing checks the model."""
        return self.status == EXACT

    def noise_interval(self, tasks: int) -> tuple[float | None, float | None]:
        """The bootstrap's 95 % interval of the prediction at ``tasks``: measurement noise only."""
        if not self.fitted:
            return None, None
        sampled = usl(float(tasks), self.draws[:, 0], self.draws[:, 1], self.draws[:, 2])
        return percentile_interval(sampled, LEVEL)

    def predict(self, tasks: int | np.ndarray) -> tuple[float | None, float | None, float | None]:
        """Predicted global steps/s at ``tasks`` and its 95 % interval with the model's error
        (the bootstrap's interval widened to every leave-one-out refit's prediction); Nones when
        not fitted, a point without an interval when exactly determined (nothing to leave out)."""
        if not self.fitted:
            return None, None, None
        point = float(usl(np.asarray(tasks, dtype=float), **self.params))
        if self.exact or self.beyond_sane(tasks):
            return point, None, None
        return point, *self._interval(tasks)

    def _interval(self, tasks: int) -> tuple[float, float]:
        """The bootstrap's interval at ``tasks`` widened to every leave-one-out refit's prediction."""
        low, high = self.noise_interval(tasks)
        refits = usl(float(tasks), self.left_out[:, 0], self.left_out[:, 1], self.left_out[:, 2])
        return float(min(low, refits.min())), float(max(high, refits.max()))

    def sane_ceiling(self, tasks: int) -> float | None:
        """:data:`SANE_FACTOR` times linear scaling from the fastest per-task rate at ``tasks`` (None: not fitted)."""
        return None if self.per_task is None else SANE_FACTOR * tasks * self.per_task

    def beyond_sane(self, tasks: int) -> bool:
        """Whether the interval at ``tasks`` (a fitted model's) reaches above :meth:`sane_ceiling`."""
        ceiling = self.sane_ceiling(tasks)
        if self.status != FITTED or ceiling is None:
            return False
        high = self._interval(tasks)[1]
        return not high <= ceiling  # NaN is no sane bound either

    def extrapolation(self, tasks: int) -> float | None:
        """``tasks`` over the largest measured task count (None: no sizes)."""
        return tasks / max(self.sizes) if self.sizes else None

    def determined_by(self) -> str:
        """``two runs`` / ``3 runs of two task counts``: what fixes an exactly determined fit."""
        runs = f"{_count_word(self.runs)} run{'s' if self.runs != 1 else ''}"
        if self.runs == len(self.sizes):
            return runs
        return f"{runs} of {_count_word(len(self.sizes))} task counts"


def _count_word(n: int) -> str:
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return words[n] if 0 <= n < len(words) else str(n)


def _in_words(sizes: list[int]) -> str:
    """``1 and 5``, ``1, 5 and 10``."""
    text = [str(s) for s in sizes]
    return text[0] if len(text) == 1 else f"{', '.join(text[:-1])} and {text[-1]}"


def prediction_caveat(fit: ScalingFit, tasks: int) -> str | None:
    """What a reader must know about ``fit``'s prediction at ``tasks`` before trusting it, in one
    sentence, or None: that its interval left the sane range (:meth:`ScalingFit.beyond_sane`: it has
    none), that the fit is exactly determined (nothing checks it) and/or that ``tasks`` is beyond
    :data:`EXTRAPOLATION_LIMIT` times the largest measured task count."""
    if not fit.fitted:
        return None
    if fit.beyond_sane(tasks):
        ceiling = fit.sane_ceiling(tasks)
        # name the task counts whose leaving out breaks the model: "the run left out" said not which
        out = [s for s, row in zip(fit.sizes, fit.left_out, strict=True) if not float(usl(tasks, *row)) <= ceiling]
        kept = [s for s in fit.sizes if s not in out]
        left, rest = (_runs_of(out), _runs_of(kept)) if out and kept else ("the run left out", "the runs left")
        unbounded = (
            f"no interval at {tasks} training task{'s' if tasks != 1 else ''}: a leave-one-out refit of "
            f"{MODEL_NAMES[fit.model]}{f', leaving out {left},' if out and kept else ''} predicts more than "
            f"{SANE_FACTOR:g} times linear scaling from the fastest per-task rate measured "
            f"({fit.per_task:.4g} global steps/s): {rest} fall off faster than the model allows, so the "
            f"refit's one-task throughput sits at its bound, and the model does not hold without {left}"
        )
        rest = _caveat(fit, tasks)
        return _with_mix(fit, unbounded if rest is None else f"{unbounded}; and {rest}")
    return _with_mix(fit, _caveat(fit, tasks))


def _with_mix(fit: ScalingFit, caveat: str | None) -> str | None:
    """``caveat`` with what ``fit`` mixes (:attr:`ScalingFit.mixes`) and what it leaves out
    (:attr:`ScalingFit.excluded`) said after it."""
    said = [caveat] if caveat is not None else []
    if fit.mixes is not None:
        said.append(
            f"a fit over different machines per task ({fit.mixes}): its axis counts tasks, not one machine's "
            "scaling, and part of the speedup is the faster machine"
        )
    if fit.excluded is not None:
        said.append(f"a fit over one accelerator type: the runs of another are left out of it ({fit.excluded})")
    return "; and ".join(said) or None


def _runs_of(sizes: list[int]) -> str:
    """``the runs of 1 task``, ``the runs of 2 and 4 tasks``."""
    return f"the runs of {_in_words(sizes)} task{'s' if sizes != [1] else ''}"


def _caveat(fit: ScalingFit, tasks: int) -> str | None:
    """:func:`prediction_caveat` but for an interval beyond the sane ceiling."""
    ratio = fit.extrapolation(tasks) or 0.0
    beyond = ratio > EXTRAPOLATION_LIMIT
    sizes = _in_words(fit.sizes)
    where = f"{tasks} training tasks, {ratio:.1f}x the largest measured ({max(fit.sizes)})"
    if fit.exact and beyond:
        return (
            f"an unchecked extrapolation: {where}, by {MODEL_NAMES[fit.model]} exactly determined by "
            f"{fit.determined_by()} (of {sizes} tasks), which nothing checks"
        )
    if fit.exact:
        return (
            f"an unchecked prediction: {MODEL_NAMES[fit.model]} is exactly determined by "
            f"{fit.determined_by()} (of {sizes} tasks), which nothing checks"
        )
    if beyond:
        return (
            f"an extrapolation: {where}, beyond the {EXTRAPOLATION_LIMIT:g}x that "
            f"{fit.runs} runs of {len(fit.sizes)} task counts ({sizes}) can vouch for"
        )
    return None


def usl(
    tasks: float | np.ndarray, lam: float | np.ndarray, sigma: float | np.ndarray, kappa: float | np.ndarray = 0.0
) -> np.ndarray:
    """USL throughput ``λ N / (1 + σ (N - 1) + κ N (N - 1))`` (numpy-broadcast)."""
    n = np.asarray(tasks, dtype=float)
    return lam * n / (1 + sigma * (n - 1) + kappa * n * (n - 1))


def bounded_lstsq(design: np.ndarray, target: np.ndarray, lower: list[float]) -> np.ndarray:
    """The least-squares ``x`` of ``design @ x = target`` (``design``: ``(rows, params)``) with ``x >= lower``:
    :func:`bounded_lstsq_many` of one design."""
    return bounded_lstsq_many(design[None], target, lower)[0]


def bounded_lstsq_many(designs: np.ndarray, target: np.ndarray, lower: list[float]) -> np.ndarray:
    """The least-squares ``x`` of each ``design @ x = target`` with ``x >= lower``: shape ``(designs, params)``
    for ``designs`` of shape ``(designs, rows, params)`` (a few parameters: every subset of them is tried).

    A design whose unbounded solution (``numpy.linalg.lstsq``, ``rcond=-1``) lies within the bounds keeps it
    as it is, to the bit what :func:`scipy.optimize.lsq_linear` returns (its first step, returned as is then).
    The others are solved exactly: the problem is convex, so its minimum is the unbounded minimum over the
    parameters left free with the others at their bounds, for one set of bound parameters; every set is tried
    (a batched QR solve across the designs) and the feasible solution with the least squared residual is kept.
    This is the exact minimum where ``lsq_linear``'s iterative solver stops within its tolerance of it (a
    parameter a hair inside its bound, the others off by up to ~1e-7 relative): the fits' figures agree as
    printed; the exact one needs no scipy and costs ~0.1 ms against its ~1.3 ms a design."""
    designs = np.asarray(designs, dtype=float)
    target = np.asarray(target, dtype=float)
    bound = np.asarray(lower, dtype=float)
    count, _, params = designs.shape
    solved = np.empty((count, params))
    for i in range(count):
        solved[i] = np.linalg.lstsq(designs[i], target, rcond=-1)[0]
    outside = ~np.all(solved >= bound, axis=1)  # NaN fails the test too, as in lsq_linear
    if outside.any():
        solved[outside] = _active_set(designs[outside], target, bound)
    return solved


def _active_set(designs: np.ndarray, target: np.ndarray, lower: np.ndarray) -> np.ndarray:
    """:func:`bounded_lstsq_many`'s exact solve for designs whose unbounded solution leaves the bounds."""
    count, _, params = designs.shape
    best = np.tile(lower, (count, 1))  # every parameter at its bound: always feasible
    best_cost = np.sum((designs @ lower - target) ** 2, axis=1)
    for mask in range(1, 2**params - 1):  # the parameters left free: neither none nor all
        free = np.array([bool(mask >> j & 1) for j in range(params)])
        rhs = target - designs[:, :, ~free] @ lower[~free]
        q, r = np.linalg.qr(designs[:, :, free])
        x_free = np.linalg.solve(r, np.einsum("krp,kr->kp", q, rhs)[..., None])[..., 0]
        x = np.tile(lower, (count, 1))
        x[:, free] = x_free
        cost = np.sum((np.einsum("krp,kp->kr", designs, x) - target) ** 2, axis=1)
        better = np.all(x_free >= lower[free], axis=1) & (cost < best_cost)
        best[better], best_cost[better] = x[better], cost[better]
    return best


def _designs(model: str, tasks: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """The fits' designs for rows of ``rates`` (shape ``(draws, points)``): columns 1, N-1 (and N(N-1)
    for the USL) over N/X, relative errors; and the bounds."""
    y = tasks / rates
    columns = [np.ones_like(tasks), tasks - 1]
    if model == "usl":
        columns.append(tasks * (tasks - 1))
    designs = np.stack(columns, axis=-1) / y[..., None]
    return designs, [1e-12] + [0.0] * (len(columns) - 1)


def _solve_many(model: str, tasks: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """``(lambda, sigma, kappa)`` fitted to each row of ``rates`` (shape ``(draws, points)``): ``(draws, 3)``."""
    designs, lower = _designs(model, tasks, np.atleast_2d(rates))
    coef = bounded_lstsq_many(designs, np.ones(len(tasks)), lower)
    a, b = coef[:, 0], coef[:, 1]
    c = coef[:, 2] if model == "usl" else np.zeros_like(a)
    # a parameter at its bound is exactly 0 (lsq_linear stopped a hair inside it; kept for solutions within it)
    return np.column_stack([1 / a, np.where(b / a < 1e-9, 0.0, b / a), np.where(c / a < 1e-12, 0.0, c / a)])


def _solve(model: str, tasks: np.ndarray, rates: np.ndarray) -> tuple[float, float, float]:
    lam, sigma, kappa = _solve_many(model, tasks, rates)[0]
    return float(lam), float(sigma), float(kappa)


def _usable(points: pl.DataFrame) -> pl.DataFrame:
    """The points a model is fitted to: a steady rate above 0 (a run making no progress has no time per
    step to fit) and at least one task."""
    return points.filter((pl.col("steady_global_steps_per_s") > 0) & (pl.col("tasks") > 0))


def _counts_had(sizes: list[int]) -> str:
    """``none``, ``1 (runs of 1 task)``, ``2 (runs of 1 and 5 tasks)``: the task counts measured."""
    if not sizes:
        return "none"
    listed = ", ".join(str(s) for s in sizes[:-1]) + (" and " if len(sizes) > 1 else "") + str(sizes[-1])
    return f"{len(sizes)} (runs of {listed} task{'' if sizes == [1] else 's'})"


def fit_model(
    model: str,
    points: pl.DataFrame,
    samples: dict[str, Sample],
    seed: int = BOOTSTRAP_SEED,
    draws: int = FIT_DRAWS,
    medians: Callable[[], np.ndarray] | None = None,
) -> ScalingFit:
    """Fit ``model`` (``amdahl`` or ``usl``) to ``points`` (:data:`POINTS_SCHEMA` rows).

    ``samples``: each run's steady interval rates (:func:`tierscope.analysis.throughput.steady_samples`).
    ``medians``: :func:`bootstrap_medians` of the points (None: drawn here), for fits that share them.
    Never raises for too little data: returns ``status="insufficient"`` with the reason; nor for runs
    the model cannot describe: runs that lose throughput as tasks are added faster than the model allows
    put the fit's one-task throughput ``λ`` at its bound (``1/λ = 1e-12`` s), above :data:`SANE_FACTOR`
    times the fastest per-task rate measured: ``status="does not hold"`` with the reason, no parameters
    and no prediction (it would state ~1e12 global steps/s at one task).
    Raises :class:`ValueError` for an unknown model.
    """
    if model not in MIN_SIZES:
        raise ValueError(f"unknown scaling model {model!r}; use one of {', '.join(MODELS)}")
    usable = _usable(points)
    sizes = sorted(set(usable["tasks"].to_list()))
    need = MIN_SIZES[model]
    name = MODEL_NAMES[model][:1].upper() + MODEL_NAMES[model][1:]  # it starts each message
    if len(sizes) < need:
        message = (
            f"{name} needs runs of at least {need} different task counts; the data has {_counts_had(sizes)}: not fitted"
        )
        return ScalingFit(model, INSUFFICIENT, message, usable.height, sizes)
    faster = _faster_than_linear(usable)
    if faster is not None:
        message = (
            f"{name} does not hold for these runs: their global steps/s grow faster than their tasks ({faster}), "
            "and the model lets each task add at most what one task does (a batch, a data set or a machine that "
            "changed with the size?): not fitted"
        )
        return ScalingFit(model, DOES_NOT_HOLD, message, usable.height, sizes)
    tasks = usable["tasks"].cast(pl.Float64).to_numpy()
    point = _solve(model, tasks, usable["steady_global_steps_per_s"].to_numpy())
    per_task = float((usable["steady_global_steps_per_s"] / usable["tasks"]).max())
    boot = bootstrap_medians(usable, samples, seed, draws) if medians is None else medians()
    sampled = _solve_many(model, tasks, boot)
    params = dict(zip(("lam", "sigma", "kappa"), point, strict=True))
    if not params["lam"] <= SANE_FACTOR * per_task:
        shown = ", ".join(f"{r:.4g} at {n:g}" for n, r in zip(tasks, usable["steady_global_steps_per_s"], strict=True))
        message = (
            f"{name} does not hold for these runs: their global steps/s ({shown} training tasks) fall off "
            "faster than the model allows as tasks are added, so its fit puts the one-task throughput at "
            "its bound: not fitted"
        )
        return ScalingFit(model, DOES_NOT_HOLD, message, usable.height, sizes)
    if params["sigma"] > 1:
        message = (
            f"{name} does not hold for these runs: their fit's serial fraction σ = {params['sigma']:.3g} is above 1, "
            "so two tasks would train slower than one, which the model cannot describe (runs of different "
            "models, batch sizes or machines?): not fitted"
        )
        return ScalingFit(model, DOES_NOT_HOLD, message, usable.height, sizes)
    if len(sizes) == need:
        fit = ScalingFit(model, EXACT, "", usable.height, sizes, params, sampled)
        through = "the curve passes through the points" if usable.height == need else _between(usable)
        fit.message = (
            f"{name} has {need} parameters and the data {need} task counts: exactly determined by "
            f"{fit.determined_by()}; {through}, nothing checks the model, and no "
            "interval can hold its error (leaving a task count out leaves too few to refit)"
        )
        return fit
    rates = usable["steady_global_steps_per_s"].to_numpy()
    # more sizes than parameters: every refit without one size still has enough to solve
    left_out = np.array([_solve(model, tasks[tasks != s], rates[tasks != s]) for s in sizes])
    message = (
        f"{name} fitted to {usable.height} runs of {len(sizes)} task counts; "
        "the interval holds the measurement noise and every leave-one-out refit"
    )
    return ScalingFit(model, FITTED, message, usable.height, sizes, params, sampled, left_out, per_task)


#: How far a size's global steps/s per task may lie above a smaller size's before the runs are taken to scale
#: faster than linearly: measurement noise (a steady rate's 95 % interval spans a few per cent) is not scaling.
SUPERLINEAR_MARGIN = 0.10


def _faster_than_linear(usable: pl.DataFrame) -> str | None:
    """Where every run of a larger task count makes over :data:`SUPERLINEAR_MARGIN` more global steps/s per task
    than every run of a smaller one (``usable``: :data:`POINTS_SCHEMA` rows), the two sizes' slowest and fastest
    rates as words (``2.494 at 1, 9.847 at 2``); else None. Amdahl and the USL (σ, κ ≥ 0) never give a task more
    than one task's throughput. Every run, not a median: runs of other jobs at one size spread wider than that."""
    sizes = (
        usable.with_columns(per=pl.col("steady_global_steps_per_s") / pl.col("tasks"))
        .group_by("tasks")
        .agg(low=pl.col("per").min(), high=pl.col("per").max(), rate=pl.col("steady_global_steps_per_s").max(),
             slowest=pl.col("steady_global_steps_per_s").min())
        .sort("tasks")
    )  # fmt: skip
    rows = sizes.to_dicts()
    for i, small in enumerate(rows):
        for large in rows[i + 1 :]:
            if large["low"] > small["high"] * (1 + SUPERLINEAR_MARGIN):
                return f"{small['rate']:.4g} at {small['tasks']:g}, {large['slowest']:.4g} at {large['tasks']:g}"
    return None


def _between(usable: pl.DataFrame) -> str:
    """What an exactly determined fit does with several runs at one task count: it passes between them,
    and how far apart they lie (the largest ratio of two steady rates at one task count)."""
    spread = usable.group_by("tasks").agg(
        (pl.col("steady_global_steps_per_s").max() / pl.col("steady_global_steps_per_s").min()).alias("ratio")
    )
    widest = float(spread["ratio"].max())  # type: ignore[arg-type]
    return (
        f"the curve passes between the runs of each task count, which differ by up to {widest:.3g}x "
        "(runs of one job at one size should agree)"
    )


def bootstrap_medians(
    points: pl.DataFrame,
    samples: dict[str, Sample],
    seed: int = BOOTSTRAP_SEED,
    draws: int = FIT_DRAWS,
    drawn: dict[str, np.ndarray] | None = None,
) -> np.ndarray:
    """Each point's run's bootstrap steady rates (:func:`tierscope.analysis.bootstrap.steady_draws` of its
    ``samples``): shape ``(draws, points)``, a column per row of ``points`` (``run_id``), in their order.

    ``drawn``: runs' :func:`~tierscope.analysis.bootstrap.steady_draws` under the same ``seed`` with at least
    ``draws`` draws (the summary's, :attr:`tierscope.analysis.batches.IntervalFigures.draws`): a run's first
    ``draws`` of them are its column, unsorted again. They are the same numbers: a draw's generator fills its
    normals (or picks) one after another, so fewer draws are the first of more."""
    drawn = drawn or {}

    def column(run: str) -> np.ndarray:
        kept = drawn.get(run)
        return kept[:draws] if kept is not None and len(kept) >= draws else steady_draws(samples[run], run, seed, draws)

    return np.column_stack([column(r) for r in points["run_id"]])


def fit_scaling(
    points: pl.DataFrame,
    samples: dict[str, Sample],
    seed: int = BOOTSTRAP_SEED,
    drawn: dict[str, np.ndarray] | None = None,
    runs: pl.DataFrame | None = None,
    excluded: str | None = None,
    noun: str = "task",
) -> list[ScalingFit]:
    """Both models, Amdahl first (see :func:`fit_model`), from the same bootstrap medians (drawn once;
    ``drawn``: runs' draws already made under ``seed``, as :func:`bootstrap_medians` takes them). ``runs``:
    the run index (``run_id``, ``topology``), whose stored machines :func:`mixed_machines` reads; ``excluded``:
    the runs left out for another accelerator type, in words (:attr:`ScalingFit.excluded`); ``noun``: what
    the points' ``tasks`` count (``task``, ``GPU``, ``TPU chip``): only a fit against tasks says what machines
    it mixes."""
    medians = functools.cache(lambda: bootstrap_medians(_usable(points), samples, seed, drawn=drawn))
    fits = [fit_model(m, points, samples, seed, medians=medians) for m in MODELS]
    # a fit against GPUs or TPU chips is within one accelerator type already: the host machines of 1 and 8 GPUs
    # differ by design (a2-highgpu-1g, -8g), with the same share of the machine per device
    mixes = mixed_machines(_usable(points), runs, noun) if noun == "task" else None
    for fit in fits:
        fit.mixes, fit.excluded = mixes, excluded
    return fits


def _training_machines(tier: str | None, topology: str | None = None) -> str | None:
    """The machine types a run's training tasks (master/chief and workers) run on, ``a + b`` where they
    differ: its stored machines (``topology``), else its tier's composition in the tier table
    (:func:`tierscope.analysis.topology.run_hardware`); None: unknown."""
    from tierscope.analysis.topology import run_hardware  # the machines catalog only when a fit asks

    hardware = run_hardware(tier, topology)
    if hardware is None or not hardware.training:
        return None
    return " + ".join(sorted({p.machine_type for p in hardware.training}))


def mixed_machines(points: pl.DataFrame, runs: pl.DataFrame | None = None, noun: str = "task") -> str | None:
    """Where the runs of ``points`` (:data:`POINTS_SCHEMA`) ran on different machines per task: which, by
    task count (``1 task on standard and 5 tasks on complex_model_s``; ``noun`` names what ``tasks`` counts);
    None when they ran on one type or a run's machines are unknown (no stored machines, a tier not in the
    tier table). ``runs``: ``run_id, topology`` of the runs (their stored machines; None: tiers alone)."""
    if "tier" not in points.columns:  # points that name no tier say nothing of their machines
        return None
    stored: dict[str, str | None] = {}
    if runs is not None and {"run_id", "topology"} <= set(runs.columns):
        stored = dict(runs.select("run_id", "topology").iter_rows())
    ids = points["run_id"] if "run_id" in points.columns else pl.Series([None] * points.height, dtype=pl.String)
    by_size: dict[int, set[str]] = {}
    for run_id, tier, tasks in zip(ids, points["tier"], points["tasks"], strict=True):
        machines = _training_machines(tier, stored.get(run_id))
        if machines is None:
            return None
        by_size.setdefault(tasks, set()).add(machines)
    if len(set().union(*by_size.values())) < 2:
        return None
    return " and ".join(
        f"{n} {noun}{'s' if n != 1 else ''} on {' or '.join(sorted(m))}" for n, m in sorted(by_size.items())
    )


def fit_table(fits: list[ScalingFit]) -> pl.DataFrame:
    """The fits as :data:`FIT_SCHEMA` rows (an unfitted model gets null estimates)."""
    rows = []
    for fit in fits:
        names = ["lambda", "sigma"] + (["kappa"] if fit.model == "usl" else [])
        for i, name in enumerate(names):
            low = high = estimate = None
            if fit.fitted:
                estimate = list(fit.params.values())[i]
                low, high = percentile_interval(fit.draws[:, i], LEVEL)
            rows.append(
                {
                    "model": fit.model,
                    "parameter": name,
                    "estimate": estimate,
                    "ci_low": low,
                    "ci_high": high,
                    "runs": fit.runs,
                    "sizes": len(fit.sizes),
                    "status": fit.status,
                    "message": fit.message,
                }
            )
    return pl.DataFrame(rows, schema=FIT_SCHEMA)


def predictions(fits: list[ScalingFit], tasks: list[int]) -> pl.DataFrame:
    """Predicted throughput at each of ``tasks`` for each model: :data:`PREDICTION_SCHEMA` rows."""
    rows = []
    for fit in fits:
        for n in tasks:
            point, low, high = fit.predict(n)
            noise_low, noise_high = fit.noise_interval(n)
            rows.append(
                {
                    "model": fit.model,
                    "tasks": n,
                    "global_steps_per_s": point,
                    "ci_low": low,
                    "ci_high": high,
                    "status": fit.status,
                    "message": fit.message,
                    "noise_ci_low": noise_low,
                    "noise_ci_high": noise_high,
                    "extrapolation": fit.extrapolation(n) if fit.fitted else None,
                    "caveat": prediction_caveat(fit, n),
                }
            )
    return pl.DataFrame(rows, schema=PREDICTION_SCHEMA)


def prediction_band(fits: list[ScalingFit], max_tasks: int) -> pl.DataFrame:
    """:func:`predictions` at every size from 1 to ``max_tasks``: the curve and its band for a chart."""
    return predictions(fits, list(range(1, max_tasks + 1)))


def best_fit(fits: list[ScalingFit]) -> ScalingFit | None:
    """The model to predict with: one the data can check (``fitted``) before an exactly determined one,
    the USL before Amdahl; None when neither could be fitted."""
    ranked = sorted((f for f in fits if f.fitted), key=lambda f: (f.status != FITTED, f.model != "usl"))
    return ranked[0] if ranked else None


def scaling_points(throughput: pl.DataFrame, runs: pl.DataFrame, exclude_tiers: tuple[str, ...] = ()) -> pl.DataFrame:
    """The runs a scaling model is fitted to: :data:`POINTS_SCHEMA`, sorted by tasks and run id.

    ``throughput``: :func:`tierscope.analysis.throughput.run_throughput`; ``runs``: ``run_id, tier``.
    Runs with a steady rate whose tier is not local (:data:`tierscope.contract.LOCAL_TIER_PATTERN`:
    the laptop, and local clusters labelled ``local-<TIER>`` by ``tierscope train local``: other
    hardware is not a point on the tiers' curve) nor in ``exclude_tiers`` (case-insensitive).
    """
    excluded = [t.upper() for t in exclude_tiers]
    local = pl.col("tier").str.contains(LOCAL_TIER_PATTERN).fill_null(False)
    return (
        throughput.join(runs.select("run_id", "tier"), on="run_id", how="left")
        .filter(
            pl.col("steady_global_steps_per_s").is_not_null()
            & (pl.col("tasks") > 0)
            & ~pl.col("tier").str.to_uppercase().is_in(excluded).fill_null(False)
            & ~local
        )
        .select([pl.col(n).cast(t) for n, t in POINTS_SCHEMA.items()])
        .sort("tasks", "run_id")
    )
