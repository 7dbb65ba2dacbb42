"""What a newcomer's report says around its figures: paths a colleague may see, the collect time said
truthfully, legends naming only the runs a chart draws, the prediction the answer box gives marked on the
scaling chart, and a run with losses but no clock drawn on its lead task's own clock, said so."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.analysis import analyze
from tierscope.analysis.provenance import Provenance
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import ReportOptions as Options
from tierscope.reports.render import (
    analysis_options,
    chart_specs,
    collected_text,
    report_data,
    shown_dataset,
    shown_path,
    write_report,
)

runner = CliRunner()


def test_paths_are_relative_to_the_datasets_folder_or_a_file_name() -> None:
    home = "/home/alice/proj"
    assert shown_path(f"{home}/logs/w0.log", f"{home}/ds") == "logs/w0.log"
    site = "/usr/lib/python3.11/site-packages/tierscope/data/cloudml-tiers-2016/basic.log"
    assert shown_path(site, f"{home}/ds") == "basic.log"
    assert shown_path(site, f"{home}/ds", full=True) == site
    assert shown_path("gs://bucket/jobs/j1/w0.log", f"{home}/ds") == "gs://bucket/jobs/j1/w0.log"
    assert shown_dataset(f"{home}/ds") == "ds" and shown_dataset(f"{home}/ds", full=True) == f"{home}/ds"


def test_the_demos_report_carries_no_local_directory_unless_asked(tmp_path: Path, dataset_2016: Dataset) -> None:
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["report", "-d", str(dataset_2016.root), "-o", str(out), "--lang", "en"]).exit_code == 0
    html = out.read_text(encoding="utf-8")
    provenance = html[html.index('id="provenance"') : html.index("<script>")]
    root = str(dataset_2016.root)
    assert root not in provenance and "site-packages" not in provenance
    assert "basic.log" in provenance and f"<dd>{Path(root).name}</dd>" in provenance
    full = tmp_path / "full.html"
    args = ["report", "-d", root, "-o", str(full), "--lang", "en", "--full-paths"]
    assert runner.invoke(app, args).exit_code == 0
    whole = full.read_text(encoding="utf-8")
    assert root.replace("/", "/<wbr>") in whole  # whole, breakable after each separator


def test_one_collect_time_is_said_once() -> None:
    at = datetime(2026, 12, 6, 6, 0, 12, tzinfo=UTC)
    later = datetime(2026, 12, 6, 7, 30, tzinfo=UTC)

    def prov(first: datetime, last: datetime) -> Provenance:
        return Provenance("ds", at, first, last, 1, 1, 0, [], 0, "us", None)

    en = Catalog("en")
    # was "2026-12-06 06:00 UTC to 2026-12-06 06:00 UTC": one collect in one minute
    assert collected_text(prov(at, at.replace(second=40)), en) == "at 2026-12-06 06:00 UTC"
    assert collected_text(prov(at, later), en) == "2026-12-06 06:00 UTC to 2026-12-06 07:30 UTC"


def _legend_values(spec: object) -> list[list[str]]:
    found: list[list[str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            legend = node.get("legend")
            if node.get("field") == "run_id" and isinstance(legend, dict) and "values" in legend:
                found.append(legend["values"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


def test_legends_list_only_the_runs_drawn_and_the_scaling_chart_marks_the_prediction(dataset_2016: Dataset) -> None:
    data = report_data(analyze(dataset_2016, analysis_options()))
    specs = chart_specs(data, Catalog("en"))
    # premium_1 failed before a step: in the report's colour domain, in no legend of a chart it is not in
    for name in ("throughput_steps", "throughput_time", "loss_time", "cost_time", "scaling"):
        legends = _legend_values(specs[name])
        assert legends, name
        assert all("premium_1" not in values for values in legends), (name, legends)
    assert _legend_values(specs["throughput_steps"])[0] == ["basic", "local", "standard_1"]
    # the answer box's prediction: PREMIUM_1 at 20 training tasks, Amdahl's 79.2 global steps/s (README)
    text = json.dumps(specs["scaling"])
    assert '"label": "PREMIUM_1 (predicted)"' in text
    marks = [v for v in re.findall(r'\{[^{}]*"label": "PREMIUM_1 \(predicted\)"[^{}]*\}', text) if '"tasks": 20' in v]
    assert marks and '"rate": 79.2' in marks[0]


def test_a_run_with_losses_but_no_clock_is_drawn_on_its_task_clock_and_said_so(tmp_path: Path) -> None:
    # tf.estimator's lines: a loss and the seconds of the last 100 steps, no timestamp, no elapsed time; the
    # throughput chart times them on the task's own clock, the loss chart has no clock for them
    log = tmp_path / "est.log"
    lines = []
    for i in range(1, 16):
        lines += [f"INFO:tensorflow:global_step/sec: 20.{i % 7}", f"INFO:tensorflow:loss = {2.5 - 0.1 * i:.2f}, "
                  f"step = {100 * i} ({5.0 - 0.01 * i:.2f} sec)"]  # fmt: skip
    log.write_text("\n".join(lines) + "\n")
    assert (
        runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--tier", "BASIC"]).exit_code == 0
    )
    out = write_report(analyze(Dataset(tmp_path / "ds"), analysis_options()), tmp_path / "r.html", Options(lang="en"))
    html = out.read_text(encoding="utf-8")
    loss = html[html.index('id="section-loss_time"') : html.index('id="section-speedup"')].replace("&#39;", "'")
    # drawn on the lead task's own clock, said so: the intervals' seconds added up, 4.99 s for the first 100 steps
    # (the first record's interval) then 4.98, 4.97, ...: the loss 2.3 at step 200 is at 4.99 + 4.98 = 9.97 s,
    # where the throughput chart puts its interval too
    assert 'id="chart-loss_time"' in loss and "est: its log has neither timestamps nor elapsed times" in loss
    data = report_data(analyze(Dataset(tmp_path / "ds"), analysis_options()))
    assert data.metric_time is not None
    at = dict(zip(data.metric_time["value"].round(3).to_list(), data.metric_time["seconds"].to_list(), strict=True))
    assert at[2.3] == pytest.approx(9.97) and set(data.metric_time["clock"].to_list()) == {"task"}
