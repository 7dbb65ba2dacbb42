"""The report on runs described by their machines (no scale tier): the machines named where a tier would be,
USD/hour and hours to N beside the ML-unit columns, the method said for price rows, a failed run never
the answer."""

from __future__ import annotations

import re
from datetime import date
from html import unescape
from pathlib import Path

import pytest

from tests.analysis.test_todays_question import RAN, RUNS, write_log
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset
from tierscope.reports.headline import headline
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import ReportData, analysis_options, render_html, report_data

OOM = "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor\n"


def report_of(root: Path, runs: tuple[str, ...], failed: tuple[str, ...] = ()) -> ReportData:
    specs = []
    for run in runs:
        rate, hardware = RUNS[run]
        write_log(root / f"{run}.log", rate)
        if run in failed:
            with (root / f"{run}.log").open("a") as log:
                log.write(OOM)
        specs.append(RunSpec(run_id=run, tier=None, files=[root / f"{run}.log"], date=RAN, topology=hardware.to_json()))
    collect_runs(Dataset(root / "ds"), specs, settle_s=0.0)  # finished jobs' logs: every line read now
    return report_data(analyze(Dataset(root / "ds"), analysis_options(AnalysisOptions(), steps=100000)))


@pytest.fixture(scope="module")
def today(tmp_path_factory: pytest.TempPathFactory) -> ReportData:
    # 1 x T4 at 0.25 steps/s, 1 x A100 at 1.0, 8 x A100 at 6.4 that then died of OOM
    return report_of(tmp_path_factory.mktemp("machines"), ("t4", "a100", "a100x8"), failed=("a100x8",))


def test_the_answer_leaves_the_failed_run_out_and_names_the_machines(today: ReportData) -> None:
    # Prices (analysis/data/prices.csv, us-central1, on demand, from 2026-07-30): T4 run 0.379998 + 0.35 =
    # 0.729998 USD/h; A100 run 0.73948 + 2.93391 = 3.67339 USD/h. The failed 8 x A100 (6.4 steps/s) is no answer:
    # fastest is the A100 at 1.00 steps/s, 4.00x the T4's 0.25 (no BASIC run: the baseline is the run with the
    # lowest price per hour, the T4).
    # USD per 1,000 steps: T4 0.729998 / (0.25 x 3.6) = 0.8111; A100 3.67339 / 3.6 = 1.0204: the T4 is cheapest.
    # To 100,000 steps (no start-up): T4 400,000 s = 111.1 h for 81.11 USD; A100 100,000 s = 27.8 h for
    # 102.04 USD; price x time: T4 81.11 x 400,000 = 3.24e7 > A100 102.04 x 100,000 = 1.02e7: the A100.
    assert headline(today.summary, today.costs, today.steps, Catalog("en")) == [
        "Fastest: a100 (1 x a2-highgpu-1g (1 x NVIDIA_TESLA_A100)) at 1.00 global steps/s, 4.00× the baseline t4.",
        "Cheapest per step: t4 (1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)) at 0.811 USD per 1,000 steps.",
        "Best value (lowest price × time): a100 (1 x a2-highgpu-1g (1 x NVIDIA_TESLA_A100)) does 100,000 steps "
        "in 27.8 h for 102 USD.",
        # the shipped rows are Compute Engine's (docs/machines-and-prices.md): said where prices are shown
        "Prices are Compute Engine on-demand list prices; Vertex AI custom training bills more (--prices FILE for "
        "its own).",
        "1 run failed; see below.",
    ]


def cells(html: str, run: str) -> list[str]:
    row = re.search(rf'<td class="text run">{run}</td>(.*?)</tr>', html, re.S)
    assert row, run
    return [re.sub(r"<span.*?</span>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), re.S)]


def test_the_table_names_the_machines_and_shows_usd_per_hour_and_hours_to_n(today: ReportData) -> None:
    html = render_html(today, "en")
    assert "<title>tierscope report: configurations compared</title>" in html
    assert "<th>USD/hour</th>" in html and '>Hours to 100,000 steps<span class="ci">at the sustained rate' in html
    # no run has ML units: their two columns are left out (the table fits a laptop's screen)
    assert "<th>ML units/hour</th>" not in html and "Steps per ML unit-hour</th>" not in html
    # machines, status, tasks, steady, mean, speedup, 2 efficiencies, USD/h, USD/1000, hours to N, records:
    # the T4 run 0.729998 USD/h, 0.8111 USD/1000 steps, 400,000 s = 111.11 h (3 significant digits each)
    t4 = cells(html, "t4")
    assert t4[0] == "1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)" and len(t4) == 12
    assert t4[-4:] == ["0.730", "0.811", "111", "12"]
    assert cells(html, "a100")[-4:] == ["3.67", "1.02", "27.8", "12"]  # 100,000 s = 27.78 h
    # the failed run's card names its machines too
    assert '<td class="text tier" data-label="Tier or machines">1 x a2-highgpu-8g (8 x NVIDIA_TESLA_A100)</td>' in html
    assert "the sum of their dated price rows" in html
    ja = render_html(today, "ja")
    assert "構成の比較" in ja and "価格行の合計" in ja and "<th>米ドル/時間</th>" in ja


def test_a_failed_run_alone_is_no_answer(tmp_path: Path) -> None:
    only = report_of(tmp_path, ("a100x8",), failed=("a100x8",))
    assert headline(only.summary, only.costs, only.steps, Catalog("en")) == [
        "No run that finished has a steady-state rate: a failed run is evidence, not a candidate for fastest or "
        "cheapest.",
        "1 run failed; see below.",
    ]


def test_provenance_flags_a_row_after_the_runs_date_and_a_retired_ml_unit_table(tmp_path: Path) -> None:
    # a T4 run of 2024-03-11 is priced from the 2026-07-30 rows (none earlier), a STANDARD_1 run of unknown
    # date today from the 2019-11-01 ML-unit table (the newest, years old): both said under Provenance
    write_log(tmp_path / "t4.log", 0.25)
    write_log(tmp_path / "s1.log", 2.0)
    specs = [
        RunSpec(run_id="t4", tier=None, files=[tmp_path / "t4.log"], date=date(2024, 3, 11),
                topology=RUNS["t4"][1].to_json()),
        RunSpec(run_id="s1", tier="STANDARD_1", files=[tmp_path / "s1.log"]),
    ]  # fmt: skip
    collect_runs(Dataset(tmp_path / "ds"), specs, settle_s=0.0)  # finished jobs' logs: every line read now
    html = render_html(report_data(analyze(Dataset(tmp_path / "ds"), analysis_options(AnalysisOptions()))), "en")
    provenance = " ".join(html.split('<section id="provenance">', 1)[1].split())
    assert "NVIDIA_TESLA_T4 from the 2026-07-30 row, after the priced date 2024-03-11" in provenance
    assert "ML units from the 2019-11-01 table and USD per ML unit-hour from the 2019-11-01 row" in provenance
    assert "cannot refresh retired ML units" in provenance


def test_the_japanese_report_gives_each_price_note_in_japanese(tmp_path: Path) -> None:
    # three notes, each a sentence of its own: a T4 run of 2024-03-11 priced from the 2026-07-30 rows (none
    # earlier); a STANDARD_1 run of unknown date priced today from the 2019-11-01 ML-unit table and USD row
    # (the newest, over 180 days old); a BASIC run of 1999-05-01, before BASIC's first ML-unit row (2016-01-01):
    # no price at all
    for run, rate in (("t4", 0.25), ("s1", 2.0), ("old", 1.0)):
        write_log(tmp_path / f"{run}.log", rate)
    specs = [
        RunSpec(run_id="t4", tier=None, files=[tmp_path / "t4.log"], date=date(2024, 3, 11),
                topology=RUNS["t4"][1].to_json()),
        RunSpec(run_id="s1", tier="STANDARD_1", files=[tmp_path / "s1.log"]),
        RunSpec(run_id="old", tier="BASIC", files=[tmp_path / "old.log"], date=date(1999, 5, 1)),
    ]  # fmt: skip
    collect_runs(Dataset(tmp_path / "ds"), specs, settle_s=0.0)  # finished jobs' logs: every line read now
    data = report_data(analyze(Dataset(tmp_path / "ds"), analysis_options(AnalysisOptions())))
    sections = {lang: " ".join(unescape(render_html(data, lang).split('<section id="provenance">', 1)[1]).split())
                for lang in ("en", "ja")}  # fmt: skip
    en, ja = sections["en"], sections["ja"]
    assert (
        "Price: no dollar price in the table for this date; no price on 1999-05-01: the ML-unit table's earliest "
        "row for BASIC is from 2016-01-01; check the date of the run's records, or describe the run's machines "
        "(--machine, --job-spec) and give their prices with --prices FILE." in en
    )
    assert (
        "NVIDIA_TESLA_T4 は 2026-07-30 の行で価格を付けました。価格日 2024-03-11 より後の行です (それ以前の行は"
        "ありません)。その日の価格を --prices FILE で指定してください。" in ja
    )
    assert (
        "価格: この日付の価格表には米ドル価格がありません。1999-05-01 の価格はありません: ML ユニット表の BASIC の"
        "最初の行は 2016-01-01 のものです。実行のレコードの日付を確かめるか、実行のマシンを記述し (--machine、"
        "--job-spec)、その価格を --prices FILE で指定してください。" in ja
    )
    # today - 2019-11-01 days, the same count in both languages
    (days,) = re.findall(r"USD per ML unit-hour from the 2019-11-01 row, (\d+) days before", en)
    assert (
        f"2019-11-01 の表の ML ユニットと 2019-11-01 の行の ML ユニット時間あたりの米ドルを使っています。価格日 "
        f"{date.today()} の {days} 日前の行で、180 日より古いものです。`tierscope prices update` は廃止された ML "
        "ユニットを更新できません" in ja
    )
    # the T4 run's rows, each a sentence with its source translated (reports/i18n/sources.ja.json)
    assert (
        "価格: 1 × n1-standard-8 us-central1 on-demand 0.379998/時間 (2026-07-30 から、Compute Engine の価格 ("
        "Vertex AI のカスタム トレーニングの公開価格表は見つかりませんでした。Vertex AI の価格はこれより高くなります): "
        "Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml @fd66b26f、2026-07-30 生成)。1 × NVIDIA_TESLA_T4 "
        "us-central1 on-demand 0.35/時間 (2026-07-30 から、Compute Engine の GPU 価格: skypilot-org/skypilot-catalog "
        "catalogs/v8/gcp/vms.csv @006059e0 (T4 x 2: 1 時間 0.70))。" in ja
    )
    # no English sentence of a price note or a price row is left in the Japanese report
    for english in ("after the priced date", "no price on", "days before", "cannot refresh", "give that date",
                    "/h from", "an hour", "no public catalog"):  # fmt: skip
        assert english in en and english not in ja
