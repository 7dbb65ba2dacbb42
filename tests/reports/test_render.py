"""The report without a browser: figures against hand calculations, bounded size, both
languages, hostile names, missing analyses, figures and the CLI options."""

from __future__ import annotations

import json
import os
import re
import string
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.analysis.test_summary_2016 import BASIC, STANDARD_1
from tests.support import ROOT
from tests.support.reports_fixtures import (
    BIDI_RUN,
    EVIL_FAILED,
    EVIL_FILE,
    EVIL_REASON,
    EVIL_RUN,
    TARGET_LOSS,
    hostile_dataset,
)
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis import series as charted
from tierscope.analysis.price_notes import ENGLISH
from tierscope.cli import app
from tierscope.dataset.schema import STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset
from tierscope.decimals import two_decimals
from tierscope.reports import frames
from tierscope.reports.charts import MAX_ROWS, cost_time_chart
from tierscope.reports.figures import write_figures
from tierscope.reports.headline import headline
from tierscope.reports.i18n import Catalog, _load
from tierscope.reports.render import ReportData, analysis_options, chart_specs, render_html, report_data, vega_bundle
from tierscope.text import has_controls, printable

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


#: What the report fixtures analyse: N = 3600 steps and a training loss target of 1.0.
OPTIONS = analysis_options(AnalysisOptions(target_loss=TARGET_LOSS), steps=3600)
#: Every chart of a report with a loss target, top to bottom.
CHARTS = ["throughput_steps", "throughput_time", "loss_time", "speedup", "goodput", "cost_time", "target", "tasks",
          "scaling"]  # fmt: skip


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> ReportData:
    return report_data(analyze(hostile_dataset(tmp_path_factory.mktemp("hostile") / "ds"), OPTIONS))


@pytest.fixture(scope="module")
def data_2016(dataset_2016: Dataset) -> ReportData:
    return report_data(analyze(dataset_2016, analysis_options()))


# --- figures against hand calculations -------------------------------------------------------


def test_headline_on_the_2016_logs(data_2016: ReportData) -> None:
    # N defaults to the longest run's last step: 1,000 (basic, local, standard_1 all end at step 1000).
    # standard_1: 22.389 steps/s, 22.3894 / 4.6396 = 4.83x basic. basic: 4.6396 * 3600 / 1 unit = 16,702.7
    # steps per ML unit-hour (standard_1: 22.3894 * 3600 / 10 = 8,060.2). Price x time to 1,000 steps, on the
    # sustained rates with start-up once (tests/analysis/test_scaling.py): basic 1000 / 4.6400 = 215.52 s, x 1
    # unit / 3600 = 0.05987 unit-h -> 12.90; standard_1 13.996 + 1000 / 22.3894 = 58.66 s, 0.16294 unit-h
    # -> 9.56: standard_1 is the best value, 58.7 s for 0.163 ML unit-hours, 14.0 s of them its start-up (its master
    # logged once, so goodput's start-up badput, 13.996 s), which 1,000 / 22.389 = 44.7 s would leave out.
    assert data_2016.steps == 1000
    assert headline(data_2016.summary, data_2016.costs, data_2016.steps, Catalog("en")) == [
        "Fastest: standard_1 (STANDARD_1) at 22.39 global steps/s, 4.83× the baseline basic.",
        "Cheapest per step: basic (BASIC) with 16,703 steps per ML unit-hour (no dollar price for these dates).",
        "Best value (lowest price × time): standard_1 (STANDARD_1) does 1,000 steps in 58.7 s for 0.163 ML unit-hours."
        " The time includes 14.0 s of start-up, paid once; the table's figures per step leave it out.",
        "1 run failed; see below.",  # premium_1; was "1 run(s) failed"
    ]


def test_counts_agree_with_their_nouns_in_both_languages(data_2016: ReportData) -> None:
    en, ja = Catalog("en"), Catalog("ja")
    assert [en.counted("count.runs", n) for n in (1, 2, 1234)] == ["1 run", "2 runs", "1,234 runs"]
    assert [en.counted("count.step_records", n) for n in (1, 29)] == ["1 step record", "29 step records"]
    assert en.counted("count.training_tasks", 1) == "1 training task"
    assert [en.counted("headline.failed", n) for n in (1, 2)] == [
        "1 run failed; see below.",
        "2 runs failed; see below.",
    ]
    # Japanese has one form: a counter word, whatever the number
    assert ja.counted("count.runs", 1) == "実行 1 件" and ja.counted("count.runs", 2) == "実行 2 件"
    # the 2016 report: 4 runs, 29 step records (10 + 10 + 9 + 0); the same page of one run said "1 runs"
    html = render_html(data_2016, "en")
    assert "4 runs, 29 step records; written" in html
    one = replace(data_2016, provenance=replace(data_2016.provenance, runs=1, records=1))
    assert "1 run, 1 step record; written" in render_html(one, "en")
    assert "実行 1 件、ステップレコード 1 件。" in render_html(one, "ja")
    # premium_1, never measured, "At its 20 training tasks"; a one-task tier would read "At its 1 training task"
    assert "At its 20 training tasks Amdahl" in html
    single = replace(data_2016, unmeasured=data_2016.unmeasured.with_columns(tasks=pl.lit(1, pl.Int64)))
    said = headline(single.summary, single.costs, single.steps, en, single.unmeasured)
    assert any("At its 1 training task Amdahl" in sentence for sentence in said)
    assert any(
        "訓練タスク 1 個での予測" in sentence
        for sentence in headline(single.summary, single.costs, single.steps, ja, single.unmeasured)
    )


def test_scaling_band_from_the_analysis_fit_on_the_2016_logs(data_2016: ReportData) -> None:
    # Two sizes (BASIC 1 task, STANDARD_1 5; the laptop is not a tier) fit Amdahl exactly:
    # lambda = 4.6396, 4.6396 * 5 / (1 + 4 sigma) = 22.3894 -> sigma = (23.1982 / 22.3894 - 1) / 4 = 0.0090305;
    # at 20 tasks (PREMIUM_1): 4.6396 * 20 / (1 + 19 * 0.0090305) = 92.793 / 1.171580 = 79.20 steps/s.
    assert data_2016.scaling_points.select("run_id", "tasks").rows() == [("basic", 1), ("standard_1", 5)]
    band = {r["tasks"]: r for r in data_2016.scaling_model.iter_rows(named=True)}
    assert sorted(band) == list(range(1, 21)) and {r["model"] for r in band.values()} == {"Amdahl"}
    assert band[1]["predicted"] == pytest.approx(BASIC) and band[5]["predicted"] == pytest.approx(STANDARD_1)
    assert band[20]["predicted"] == pytest.approx(79.2031, abs=1e-3)
    # two points for two parameters test nothing, so the band (measurement noise only) is not drawn
    assert band[20]["low"] is None and band[20]["high"] is None
    html = render_html(data_2016, "en")
    assert "No scalability model has been fitted" not in html
    assert "exactly determined by two runs: the curve passes through the points" in html


def test_time_price_frontier_and_stragglers_on_known_rates(hostile: ReportData) -> None:
    # EVIL_RUN: 5 steps/s, BASIC 1 unit/h: 3600 steps in 720 s, 720/3600 * 1 = 0.2 ML unit-hours.
    # std: 20 steps/s, STANDARD_1 10 units/h: 180 s, 180/3600 * 10 = 0.5. std is faster, EVIL_RUN
    # cheaper: both are on the cheapest-for-each-deadline frontier.
    costs = hostile.costs.select("run_id", "seconds_to_n", "ml_unit_hours_to_n", "usd_to_n", "frontier_units")
    assert costs.rows() == [("std", 180.0, 0.5, None, True), (EVIL_RUN, 720.0, 0.2, None, True)]
    # worker/3 logs 2.0 local steps/s against its peers' median 4.0: 2.0 < 0.8 * 4.0, a straggler.
    tasks = hostile.task_rates.filter(pl.col("run_id") == "std")
    assert tasks.select("task", "local_steps_per_s", "straggler").rows() == [
        ("master/0", 4.0, False),
        ("worker/0", 4.0, False),
        ("worker/1", 4.0, False),
        ("worker/2", 4.0, False),
        ("worker/3", 2.0, True),
    ]
    # 30 records per task, the first one warm-up: 29 intervals behind each median.
    assert set(tasks["intervals"]) == {29}
    # every throughput point of std is 20.0, of EVIL_RUN 5.0
    rates = hostile.throughput_steps.group_by("run_id").agg(pl.col("rate").unique())
    assert {r: v for r, v in rates.rows()} == {"std": [20.0], EVIL_RUN: [5.0]}
    # time from timestamps: EVIL_RUN's records are 20 s apart, warm-up (t = 0) excluded, the last at 29 * 20 s
    evil = hostile.throughput_time.filter(pl.col("run_id") == EVIL_RUN)
    assert (evil["seconds"].min(), evil["seconds"].max()) == (20.0, 580.0)


def test_cheapest_frontier_by_hand() -> None:
    # Fastest first: 10 (on: nothing faster), none (no cost), 12 (dearer than 10: off),
    # 5 (cheaper than every faster one: on), 5 (ties 5, not cheaper: off).
    frame = pl.DataFrame({"seconds_to_n": [1.0, 2.0, 3.0, 4.0, 5.0], "c": [10.0, None, 12.0, 5.0, 5.0]})
    assert frames.cheapest_frontier(frame, "c").to_list() == [True, False, False, True, False]


def test_numbers_and_durations_follow_the_language() -> None:
    en, ja = Catalog("en"), Catalog("ja")
    assert en.number(17031.6, 0) == "17,032" and ja.number(1234567) == "1,234,567"
    assert en.duration(43.845) == "43.8 s" and ja.duration(43.845) == "43.8 秒"
    assert en.duration(720) == "12.0 min" and ja.duration(3 * 3600) == "3.0 時間"
    assert en.interval(1.0, 2.5) == "1.00–2.50" and ja.interval(None, 2.0) == "–"
    assert en.number(None) == "–" and en.number(float("nan")) == "–"
    # 0.000453: log10 floor -4, so 3 - 1 + 4 = 6 decimals; 17031.6: floor 4, no decimals
    assert en.significant(0.000453) == "0.000453" and en.significant(17031.6) == "17,032"
    assert en.significant(1.0) == "1.00" and en.significant(0.0) == "0.00"


def test_small_amounts_are_written_as_the_command_line_writes_them() -> None:
    # one rule, tierscope.decimals.significant_format; the report printed 0.001000 (four digits) for
    # 0.000999999, 0.000000000000 for 1e-300 and -0.00 for a negative zero
    en = Catalog("en")
    small = [0.0949, 0.005978, 0.000999999, 0.00009999, 0.0000449, 1e-300, -0.004, -0.0]
    assert [en.significant(v) for v in small] == [two_decimals(v) for v in small] == [
        "0.0949", "0.00598", "0.00100", "0.000100", "4.49e-05", "1.00e-300", "-0.00400", "0.00"
    ]  # fmt: skip
    assert en.significant(9.999) == "10.0"  # three digits once rounded (it printed 10.00)


# --- any input size ------------------------------------------------------------------------------


def test_charts_stay_bounded_on_many_runs_and_records(tmp_path: Path) -> None:
    # 60 runs x 400 records: at most 40 runs are charted (a note says so), each
    # series holds at most MAX_POINTS_PER_CHART points, and the page minus the Vega bundle stays small.
    runs, per_run = 60, 400
    steps = pl.DataFrame(
        {
            "run_id": [f"run{r:02d}" for r in range(runs) for _ in range(per_run)],
            "tier": ["BASIC"] * (runs * per_run),
            "role": ["master"] * (runs * per_run),
            "task_index": [0] * (runs * per_run),
            "step": [10 * (i + 1) for _ in range(runs) for i in range(per_run)],
            "elapsed_s": [float(i + 1) for _ in range(runs) for i in range(per_run)],
            "global_steps_per_s": [10.0 + (i % 7) for _ in range(runs) for i in range(per_run)],
        }
    )
    dataset = Dataset(tmp_path / "ds")
    dataset.append("steps", conform(steps, STEP_SCHEMA))
    data = report_data(analyze(dataset, analysis_options()))
    assert (data.runs_charted, data.runs_total) == (charted.MAX_RUNS_CHARTED, runs)
    for series in (data.throughput_steps, data.throughput_time):
        assert series["run_id"].n_unique() == charted.MAX_RUNS_CHARTED
        assert series.height <= charted.MAX_POINTS_PER_CHART <= MAX_ROWS
    html = render_html(data, "en")
    assert "Showing the 40 runs with the most records, of 60." in html
    assert len(html.encode()) - len(vega_bundle().encode()) < 600_000


def test_task_rows_are_thinned_but_stragglers_kept() -> None:
    frame = pl.DataFrame(
        {
            "run_id": ["r"] * 100,
            "task": [f"worker/{i}" for i in range(100)],
            "local_steps_per_s": [float(i) for i in range(100)],
            "straggler": [i < 3 for i in range(100)],
        }
    )
    thinned = frames.bounded_task_rates(frame, max_rows=20)
    # share 20 per run, stride ceil(100 / 20) = 5: ranks 0, 5, ..., 95 (20 rows) plus stragglers 1 and 2
    assert thinned.height == 22
    assert set(thinned.filter("straggler")["task"]) == {"worker/0", "worker/1", "worker/2"}


# --- languages -----------------------------------------------------------------------------------


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_catalogs_have_the_same_keys_and_placeholders_and_ja_translates_each() -> None:
    en, ja = _load("en"), _load("ja")
    assert set(en) == set(ja)
    for key in en:
        assert _fields(en[key]) == _fields(ja[key]), key
        assert en[key] != ja[key], f"{key} is not translated"


def test_price_notes_of_every_language_have_the_english_keys_and_placeholders() -> None:
    # a price note's sentences are written from ENGLISH's templates; ja must give each one, the same fields
    ja = json.loads((ROOT / "reports/i18n/price_notes.ja.json").read_text(encoding="utf-8"))
    assert set(ja) == set(ENGLISH)
    for key, text in ENGLISH.items():
        assert _fields(text) == _fields(ja[key]) and text != ja[key], key


class _Headings(HTMLParser):
    TAGS = ("title", "h1", "h2", "h3", "th", "dt")

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.TAGS:
            self.open.append(tag)
            self.texts.append("")

    def handle_endtag(self, tag: str) -> None:
        if self.open and tag == self.open[-1]:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        if self.open:
            self.texts[-1] += data


def _titles(spec: object) -> list[str]:
    """Every chart title, axis title and legend title in a spec."""
    if isinstance(spec, dict):
        found = [v for k, v in spec.items() if k == "title" and isinstance(v, str)]
        return found + [t for k, v in spec.items() if k not in ("data", "datasets") for t in _titles(v)]
    if isinstance(spec, list):
        return [t for v in spec for t in _titles(v)]
    return []


def test_japanese_report_has_no_english_heading_or_chart_title(hostile: ReportData) -> None:
    html = render_html(hostile, "ja")
    parser = _Headings()
    parser.feed(html)
    assert len(parser.texts) > 30
    for text in parser.texts:
        assert CJK.search(text), f"untranslated heading {text!r}"
    page = html.replace(vega_bundle(), "")  # the library's own code holds English words
    en = _load("en")
    for key, value in en.items():
        if key.startswith(("col.", "section.", "prov.", "failed.", "table.", "charts.", "headline")) and len(value) > 3:
            assert value not in page, f"English text of {key} in the Japanese report"
    titles = [t for spec in chart_specs(hostile, Catalog("ja")).values() for t in _titles(spec)]
    assert len(titles) > 15
    for title in titles:
        assert CJK.search(title), f"untranslated chart title {title!r}"


# --- hostile names --------------------------------------------------------------------------------


def test_hostile_names_are_text_in_tables(hostile: ReportData) -> None:
    for lang in ("en", "ja"):
        html = render_html(hostile, lang).replace(vega_bundle(), "")  # user data is never inside the bundle
        assert html.count("<script") == 2  # the Vega bundle's tag and the chart code, nothing else
        assert "<img" not in html and "alert(1)</script>" not in html
        # a log's path is reduced to its file name (the folder above the dataset is not the dataset's)
        for name in (EVIL_RUN, EVIL_FAILED, EVIL_REASON, os.path.basename(EVIL_FILE)):
            escaped = name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
            assert f">{escaped}<" in html or escaped in html, name
        # in the embedded specs the same names are JSON with <, > and & escaped (\u003c...)
        specs = html.split("const charts = ", 1)[1]
        assert "\\u003cscript\\u003ealert(1)" in specs and "<script>alert" not in specs


def test_hostile_names_are_text_inside_charts(hostile: ReportData) -> None:
    import vl_convert

    svgs = {name: vl_convert.vegalite_to_svg(spec) for name, spec in chart_specs(hostile, Catalog("en")).items()}
    assert set(svgs) == set(CHARTS)
    whole = "&lt;script&gt;alert(1)&lt;/script&gt;"
    for name, svg in svgs.items():
        assert "<script" not in svg and "<img" not in svg, name
        assert "&lt;script&gt;alert(1)" in svg, name  # legends and axes cut long labels with an ellipsis
    # the text marks next to points carry the whole run id
    assert whole in svgs["cost_time"] and whole in svgs["scaling"]


# --- sections whose analysis is missing -----------------------------------------------------------


def test_missing_frames_and_columns_say_not_available(hostile: ReportData) -> None:
    partial = ReportData(
        summary=hostile.summary,
        steps=hostile.steps,
        provenance=hostile.provenance,
        throughput_steps=None,  # frame absent
        throughput_time=hostile.throughput_time.drop("seconds"),  # column absent
        task_rates=hostile.task_rates.head(0),  # nothing to draw
        speedup=hostile.speedup,
        costs=None,
        scaling_points=hostile.scaling_points,
    )
    html = render_html(partial, "en")
    assert html.count('class="chart"') == 2  # speedup and scaling
    assert "Not available: the analysis did not provide run_id, step, rate." in html
    assert "Not available: the analysis did not provide seconds." in html
    assert "Not available: no run has data for this chart." in html
    # without the time-to-N frame the headline still answers, without the best-value sentence
    assert "Best value (" not in html and "Fastest: std" in html
    assert "表示できません" in render_html(partial, "ja")


# --- figures and CLI ---------------------------------------------------------------------------------


def test_figures_are_png_and_svg(hostile: ReportData, tmp_path: Path) -> None:
    specs = chart_specs(hostile, Catalog("en"))
    written = write_figures(specs, tmp_path / "fig")
    assert [p.name for p in written[:2]] == ["throughput_steps.svg", "throughput_steps.png"]
    assert len(written) == 2 * len(specs) == 18  # nine charts (with the goodput bar, loss and target)
    for path in written:
        head = path.read_bytes()[:8]
        assert head == b"\x89PNG\r\n\x1a\n" if path.suffix == ".png" else head.startswith(b"<svg")


def test_cli_report_with_lang_steps_figures_and_open(
    tmp_path: Path, dataset_2016: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    monkeypatch.setenv("DISPLAY", ":0")  # a desktop (without one, --open says where the report is)
    out, fig = tmp_path / "r.html", tmp_path / "fig"
    args = ["report", "-d", str(dataset_2016.root), "-o", str(out), "--lang", "ja", "--steps", "36000"]
    result = CliRunner().invoke(app, [*args, "--figures", str(fig), "--open"])
    assert result.exit_code == 0, result.output
    html = out.read_text()
    # 36,000 steps at standard_1's sustained 22.389 steps/s after its 13.996 s start-up: 1621.9 s = 27.0 min,
    # x 10 units / 3600 = 4.505 unit-hours
    assert "36,000 ステップを 27.0 分、4.51 ML ユニット時間で実行します" in html
    names = ["throughput_steps", "throughput_time", "loss_time", "speedup", "goodput", "cost_time", "tasks", "scaling"]
    assert sorted(p.name for p in fig.iterdir()) == sorted(f"{n}.{e}" for n in names for e in ("png", "svg"))
    assert opened == [out.resolve().as_uri()]
    bad = CliRunner().invoke(app, ["report", "-d", str(dataset_2016.root), "-o", str(out), "--lang", "fr"])
    assert bad.exit_code == 2


# --- charts: one colour per run, labels apart, width of the page ----------------------------------


def _encodings(spec: object, channel: str) -> list[dict]:
    """Every ``channel`` encoding (``color``, ``text`` ...) in a spec, layers included."""
    if isinstance(spec, dict):
        found = [spec["encoding"][channel]] if channel in spec.get("encoding", {}) else []
        return found + [e for k, v in spec.items() if k not in ("data", "datasets") for e in _encodings(v, channel)]
    if isinstance(spec, list):
        return [e for v in spec for e in _encodings(v, channel)]
    return []


def test_one_colour_per_run_in_every_chart(hostile: ReportData) -> None:
    runs = hostile.summary["run_id"].to_list()  # the table's order: EVIL_RUN, EVIL_FAILED, std (3 runs)
    specs = chart_specs(hostile, Catalog("en"))
    # The goodput bars colour the time buckets (a run is a bar on the axis); every other chart colours runs.
    assert set(specs) >= {"goodput"} and len(specs) == 9
    specs = {name: spec for name, spec in specs.items() if name != "goodput"}
    colours = {}
    for name, spec in specs.items():
        by_run = [c for c in _encodings(spec, "color") if c.get("field") == "run_id"]
        assert by_run, f"{name} does not colour its runs"
        for colour in by_run:
            # a fixed domain, every run of the report, whatever the chart shows (the failed run draws nothing)
            assert colour["scale"]["domain"] == runs, name
            colours.setdefault(name, dict(zip(runs, colour["scale"]["range"], strict=True)))
    assert len({tuple(c.items()) for c in colours.values()}) == 1  # the same colour for a run in all eight
    assert len(set(next(iter(colours.values())).values())) == 3  # and three different colours


def test_labels_of_two_runs_at_one_point_do_not_overlap() -> None:
    from tierscope.reports.charts import HEIGHT, label_rows

    # y from 0 to 10 over HEIGHT = 280 px: 28 px per unit. The first label sits at its point (y 5); the
    # second, at the same point, one 14 px line lower: 5 - 14 / 28 = 4.5. A point far away keeps its place.
    assert HEIGHT == 280
    rows = label_rows([3.0, 3.0, 9.0], [5.0, 5.0, 1.0], ["a", "b", "c"], x_top=10.0, y_top=10.0)
    assert rows == pytest.approx([5.0, 4.5, 1.0])
    # in the price chart: two runs with the same time and price get labels on two lines and a leader line
    frame = pl.DataFrame(
        {
            "run_id": ["r1", "r2"],
            "tier": ["BASIC", "BASIC"],
            "seconds_to_n": [100.0, 100.0],
            "usd_to_n": [None, None],
            "ml_unit_hours_to_n": [2.0, 2.0],
            "frontier_usd": [False, False],
            "frontier_units": [True, False],
        },
        schema_overrides={"usd_to_n": pl.Float64},
    )
    spec = cost_time_chart(frame, Catalog("en"), 1000)
    layers = spec["layer"]
    text = next(layer for layer in layers if layer["mark"]["type"] == "text")
    placed = {row["run_id"]: row["label_y"] for row in text["data"]["values"]}
    # cost axis 0 to 2 * 1.15 = 2.3 over 280 px: a line of 14 px is 2.3 * 14 / 280 = 0.115 units
    assert placed["r1"] == pytest.approx(2.0) and placed["r2"] == pytest.approx(2.0 - 0.115)
    assert any(layer["mark"]["type"] == "rule" for layer in layers)  # the leader line


def test_charts_follow_the_page_width_and_images_get_a_fixed_one(hostile: ReportData, tmp_path: Path) -> None:
    from tierscope.reports.charts import WIDTH, fixed_width

    for name, spec in chart_specs(hostile, Catalog("en")).items():
        assert spec["width"] == "container", name
        assert spec["config"]["axis"]["labelOverlap"] == "greedy", name  # axis labels never touch
        assert fixed_width(spec)["width"] == WIDTH


def test_every_chart_is_a_valid_vega_lite_spec(hostile: ReportData, data_2016: ReportData) -> None:
    # The charts are built without Altair's checks (reports/charts.py, for speed): this is where their
    # shape is checked, every chart of both fixtures in both languages, against the Vega-Lite schema.
    import jsonschema
    from altair.vegalite.v6.schema.core import load_schema

    validator = jsonschema.Draft7Validator(load_schema())
    checked = []
    for label, data in (("hostile", hostile), ("2016", data_2016)):
        for lang in ("en", "ja"):
            for name, spec in chart_specs(data, Catalog(lang)).items():
                errors = [e.message for e in validator.iter_errors(spec)]
                assert not errors, f"{label} {lang} {name}: {errors[:3]}"
                checked.append(name)
    assert set(CHARTS) <= set(checked)
    broken = {**chart_specs(hostile, Catalog("en"))["speedup"], "mark": "no-such-mark"}
    assert not validator.is_valid(broken)  # the check does catch a bad spec


def test_japanese_report_translates_the_price_and_tier_tables_notes(data_2016: ReportData) -> None:
    shipped = set()
    root = ROOT
    tables = ("analysis/data/ml_units.csv", "analysis/data/unit_prices.csv", "src/tierscope/data/tiers.csv",
              "analysis/data/prices.csv")  # fmt: skip
    for table in tables:
        shipped |= set(pl.read_csv(root / table)["source"].to_list())
    t = Catalog("ja")
    untranslated = [note for note in shipped if not CJK.search(t.source(note))]
    assert untranslated == []
    assert Catalog("en").source("a note of the user's") == "a note of the user's" == t.source("a note of the user's")
    html = render_html(data_2016, "ja").replace(vega_bundle(), "")
    assert "CloudML public beta scale tiers" not in html and "Cloud ML Engine pricing page" not in html
    assert "2016 年の実験のブログ記事が引用した CloudML パブリックベータのスケール階層" in html


# --- time to a target loss and chart labels escaped ------------------------------------------


def test_time_to_target_bar_and_loss_series_by_hand(hostile: ReportData) -> None:
    # loss 30 / (i + 10) at each task's i-th record: 1.0 (the target) from i = 20 on. EVIL_RUN: global step
    # 2000 at 2000 / 5 = 400 s (its elapsed_s says the clock began at its first timestamp less 20 s, T0),
    # x 1 ML unit/h = 0.1111 unit-h. std: the master's step 2000 at 2000 / 20 = 100 s, x 10 units = 0.2778.
    reached = hostile.to_target.select("run_id", "seconds", "step", "value", "ml_unit_hours", "usd").rows()
    assert reached == [
        ("std", pytest.approx(100.0), 2000, 1.0, pytest.approx(100 / 360), None),
        (EVIL_RUN, pytest.approx(400.0), 2000, 1.0, pytest.approx(400 / 3600), None),
    ]
    assert hostile.target == ("loss", TARGET_LOSS) and hostile.metric == "loss"
    # every record its own bucket (2 runs charted: up to 600 points each): EVIL_RUN's 30, std's 5 x 30
    points = hostile.metric_time.group_by("run_id").agg(pl.len(), pl.col("value").min(), pl.col("seconds").max())
    assert sorted(points.rows()) == [(EVIL_RUN, 30, 0.75, 600.0), ("std", 150, 0.75, 154.0)]  # worker 3: 3080 / 20
    specs = chart_specs(hostile, Catalog("en"))
    layers = specs["loss_time"]["layer"]
    assert [la["mark"]["type"] for la in layers] == ["line", "rule", "point"]  # series, target, where reached
    assert layers[1]["data"]["values"] == [{"value": TARGET_LOSS}]
    html = render_html(hostile, "en")
    assert "Target: loss ≤ 1." in html and "Time to loss ≤ 1, labelled with its price" in str(specs["target"])
    assert "目標: 損失 ≤ 1。" in render_html(hostile, "ja")


def _strings(value: object) -> list[str]:
    """Every string in a spec (data values, scale domains, sort orders, titles)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_a_bidi_run_id_reaches_no_chart_unescaped(tmp_path: Path) -> None:
    # U+202E (right-to-left override) in a run id would reorder every label and legend it is drawn in, and
    # the escape \x1b[2J and isolate U+2066 with it; the tables show them escaped (tierscope.text.printable),
    # and so must every chart: its data, its colour domain, its sort orders.
    data = report_data(analyze(hostile_dataset(tmp_path / "ds", evil_run=BIDI_RUN), OPTIONS))
    specs = chart_specs(data, Catalog("en"))
    assert set(specs) == set(CHARTS)
    shown = printable(BIDI_RUN)
    assert shown == "\\u202e" + EVIL_RUN + "\\x1b[2J\\u2066x"
    for name, spec in specs.items():
        strings = _strings(spec)
        assert not [s for s in strings if has_controls(s)], name
        if name != "goodput":  # the goodput bar's runs are on its axis only: checked through its data below
            assert shown in strings, name
    assert shown in {row["run_id"] for row in specs["goodput"]["data"]["values"]}
    assert data.summary.filter(pl.col("run_id") == BIDI_RUN).height == 1  # stored and analysed as given


def test_the_noscript_note_does_not_promise_every_figure_in_the_tables(data_2016: ReportData) -> None:
    # Goodput and the time to a target are drawn only as charts: the note used to say
    # "the tables hold every figure", so a reader without JavaScript looked for them in vain.
    for lang in ("en", "ja"):
        html = render_html(data_2016, lang).replace(vega_bundle(), "")
        [note] = re.findall(r"<noscript><p class=\"note\">(.*?)</p></noscript>", html)
        assert "tierscope summary --json" in note and "every figure" not in note


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_a_gap_in_the_scaling_band_is_said_under_the_chart(data_2016: ReportData, lang: str) -> None:
    # Runs of 1, 2 and 4 tasks at 10, 20 and 8 global steps/s (tests/analysis/test_forecast_intervals.py): the
    # refit without the 1-task run sits at its bound, so the band has no interval at 1 task (a gap), and the
    # page says so where predict's caveat would; elsewhere the band is drawn.
    import numpy as np

    from tierscope.analysis.scaling import fit_model
    from tierscope.reports.render import sections

    points = pl.DataFrame(
        {"run_id": ["a", "b", "c"], "tasks": [1, 2, 4], "steady_global_steps_per_s": [10.0, 20.0, 8.0]},
        schema={"run_id": pl.String, "tasks": pl.UInt32, "steady_global_steps_per_s": pl.Float64},
    )
    fit = fit_model("amdahl", points, {r: np.full(5, x) for r, x in zip("abc", (10.0, 20.0, 8.0), strict=True)})
    data = replace(data_2016, scaling_model=frames.scaling_model([fit], 20), exact_fit=None)
    scaling = next(s for s in sections(data, Catalog(lang)) if s.key == "scaling")
    said = {
        "en": "The band has a gap (training tasks: 1): a leave-one-out refit",
        "ja": "1 訓練タスクでは帯を描いていません",
    }
    assert any(note.startswith(said[lang]) for note in scaling.notes), scaling.notes


def test_a_target_no_run_reached_says_so_and_names_each_run(dataset_2016: Dataset) -> None:
    # the 2016 logs' lowest losses: basic 1.858, local 1.866, standard_1 1.888, so none holds loss <= 1 (premium_1
    # failed with no step record). The section said "no run has data for this chart" and dropped the notes
    # naming each run's status, though its text promises "runs that never reached it are listed below".
    data = report_data(analyze(dataset_2016, analysis_options(AnalysisOptions(target_loss=1.0))))
    assert data.to_target is None or data.to_target.height == 0
    for lang, none, never in [
        ("en", "No run reached loss ≤ 1.", "{}: never reached the target."),
        ("ja", "損失 ≤ 1 に到達した実行はありません。", "{}: 目標に到達しませんでした。"),
    ]:
        html = render_html(data, lang).replace(vega_bundle(), "")
        section = html[html.index('id="section-target"') : html.index('id="section-tasks"')]
        assert f'<p class="unavailable">{none}</p>' in section
        assert all(never.format(run) in section for run in ("basic", "local", "standard_1"))


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "Priced for 2016-12-31 (region us) from rows as read on the date and from the page each names"),
        ("ja", "2016-12-31 の価格 (地域 us)。各行は、その行に記した日付に、記した出典から読んだもので"),
    ],
)
def test_provenance_says_when_and_where_the_price_rows_were_read(data_2016: ReportData, lang: str, said: str) -> None:
    # The 2016 runs are priced for 2016-12-31 (their price date); each row is known as its page gave it on
    # the date it names, not "in force" on the priced date: a row read in 2026 prices a 2017 run only as the
    # nearest there is (the row's own note says so)
    html = render_html(data_2016, lang).replace(vega_bundle(), "")
    assert said in html
    assert "Rows in force on" not in html and "時点で有効な行" not in html
