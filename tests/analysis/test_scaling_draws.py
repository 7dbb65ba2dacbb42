"""The scaling fit's bootstrap takes the summary's draws instead of drawing them again: the same numbers."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import numpy as np
import polars as pl

from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.bootstrap import BOOTSTRAP_DRAWS, EXACT_MAX, steady_draws
from tierscope.analysis.forecast import fit, scaling
from tierscope.analysis.scaling import FIT_DRAWS, bootstrap_medians
from tierscope.dataset.store import Dataset


def test_fewer_draws_are_the_first_of_more_in_both_forms() -> None:
    # the resampling form (at most EXACT_MAX values) and the normal form (more): the generator fills its
    # picks or normals one after another, so FIT_DRAWS draws are the first FIT_DRAWS of BOOTSTRAP_DRAWS
    rng = np.random.default_rng(3)
    for n in (2, 3, 50, EXACT_MAX, EXACT_MAX + 1, 200_000):
        values = rng.gamma(5.0, 2.0, n)
        many = steady_draws(values, "run-a", 11, BOOTSTRAP_DRAWS)
        assert np.array_equal(steady_draws(values, "run-a", 11, FIT_DRAWS), many[:FIT_DRAWS]), n


def test_bootstrap_medians_take_the_kept_draws_and_draw_the_others() -> None:
    rng = np.random.default_rng(4)
    samples = {"a": rng.normal(20, 1, 5000), "b": rng.normal(40, 2, 300)}
    points = pl.DataFrame({"run_id": ["a", "b"]})
    # a kept array of 2000 recognisable values (not a bootstrap): column a is its first 1000, column b drawn
    kept = {"a": np.arange(BOOTSTRAP_DRAWS, dtype=float)}
    boot = bootstrap_medians(points, samples, 11, FIT_DRAWS, drawn=kept)
    assert boot.shape == (FIT_DRAWS, 2)
    assert np.array_equal(boot[:, 0], np.arange(FIT_DRAWS, dtype=float))
    assert np.array_equal(boot[:, 1], steady_draws(samples["b"], "b", 11, FIT_DRAWS))
    # too few kept (fewer than the fit's draws): drawn anew
    short = bootstrap_medians(points, samples, 11, FIT_DRAWS, drawn={"a": np.zeros(10)})
    assert np.array_equal(short[:, 0], steady_draws(samples["a"], "a", 11, FIT_DRAWS))


def test_the_fit_from_kept_draws_is_the_fit_drawn_anew(dataset_2016: Dataset) -> None:
    options = AnalysisOptions(price_date=date(2019, 12, 1))
    analysis = analyze(dataset_2016, replace(options, fits=True))
    figures = analysis.figures
    assert figures.draws and figures.draws_seed == options.seed  # the summary kept its draws
    anew = fit(analysis.summary, analysis.runs, figures.samples, options.seed)  # no draws given: drawn here
    reused = scaling(analysis)
    assert reused.table.equals(anew.table)
    for a, b in zip(reused.fits, anew.fits, strict=True):
        assert a.status == b.status and a.params == b.params
        assert (a.draws is None and b.draws is None) or np.array_equal(a.draws, b.draws, equal_nan=True)
