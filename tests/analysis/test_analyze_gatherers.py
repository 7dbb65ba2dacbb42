"""The report's chart and target gatherers take each batch's intervals in on a thread of their own
(:class:`tierscope.analysis.analyze._Gatherers`): what they gather is what they gathered on the pass'
own thread (the report tests and the byte-for-byte checks), and an error there is the pass' error."""

from __future__ import annotations

import polars as pl
import pytest

from tierscope.analysis import analyze, series
from tierscope.dataset.store import Dataset
from tierscope.reports.render import analysis_options


def test_an_error_in_a_gatherer_is_raised_by_the_pass(dataset_2016: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: series.ChartSeries, intervals: object) -> None:
        raise RuntimeError("the chart series broke")

    monkeypatch.setattr(series.ChartSeries, "add", broken)
    with pytest.raises(RuntimeError, match="the chart series broke"):
        analyze(Dataset(dataset_2016.root), analysis_options())


def test_the_gatherers_take_every_batch_in_order(dataset_2016: Dataset, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch a run (``max_records=1``): the 2016 runs reach the chart gatherer one after another, each once
    and in run order, and the series are those of one batch of every run."""
    import functools
    import sys

    from tierscope.analysis.batches import interval_figures

    whole = analyze(Dataset(dataset_2016.root), analysis_options())
    seen: list[str] = []
    add = series.ChartSeries.add

    def recording(self: series.ChartSeries, intervals: pl.DataFrame) -> None:
        seen.extend(intervals["run_id"].unique(maintain_order=True).to_list())
        add(self, intervals)

    monkeypatch.setattr(series.ChartSeries, "add", recording)
    passes = sys.modules["tierscope.analysis.analyze"]
    monkeypatch.setattr(passes, "interval_figures", functools.partial(interval_figures, max_records=1))
    one_by_one = analyze(Dataset(dataset_2016.root), analysis_options())
    assert seen == ["basic", "local", "standard_1"]  # premium_1 never ran: no step record
    assert whole.series is not None and one_by_one.series is not None
    assert one_by_one.series.over_steps.equals(whole.series.over_steps)
    assert one_by_one.series.over_time.equals(whole.series.over_time)
    assert one_by_one.metric_series is not None and whole.metric_series is not None
    assert one_by_one.metric_series.points.equals(whole.metric_series.points)
