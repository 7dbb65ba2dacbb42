"""The terminal: tables read at 80 and 120 columns, results paste as CSV, Markdown or JSON,
runs are selected in every analysis command, and ordinary mistakes are one line and an exit code.

The 2016 figures (tests/analysis/test_summary_2016.py has the hand calculations): steady global steps/s
basic 4.640, local 18.838, standard_1 22.389; speedups 1.00, 4.06, 4.83; ML units/h 1, 10, 75;
steps per ML unit-hour 4.6396 x 3600 / 1 = 16,702.7 and 22.3894 x 3600 / 10 = 8,060.2.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.analysis.test_summary_2016 import STANDARD_1
from tests.support.cli_helpers import table_row as cells
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.analyze import SelectionError
from tierscope.cli import app
from tierscope.cli import numbers as n
from tierscope.cli.tables import shorten_middle
from tierscope.dataset.store import Dataset
from tierscope.demo import BUNDLED

runner = CliRunner()

FIGURES_2016 = ["4.640", "18.838", "22.389", "1.00", "4.06", "4.83", "16,702.7", "8,060.2"]
TIERS_2016 = ["BASIC", "STANDARD_1", "PREMIUM_1"]


def run(args: list[str], columns: int = 80) -> str:
    result = runner.invoke(app, args, env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("columns", [80, 120])
def test_summary_figures_and_tiers_are_whole_at_80_and_120(dataset_2016: Dataset, columns: int) -> None:
    output = run(["summary", "-d", str(dataset_2016.root)], columns)
    assert max(len(line.rstrip()) for line in output.splitlines() if "│" not in line) <= max(columns, 80)
    assert "…" not in output  # was 4.7…, 22.…, 17,… at 80 and standard… at 120
    # the status in the report's words (reports/i18n: status.unknown), not the JSON's code; at 80 columns
    # wrapped between its words ("no end" / "logged") rather than leaving a column out
    status = "no end" if columns == 80 else "no end logged"
    assert cells(output, "basic")[:3] == ["basic", "BASIC", status]
    assert cells(output, "standard_1")[:3] == ["standard_1", "STANDARD_1", status]
    assert all(line == line.rstrip() for line in output.splitlines())  # no cell's padding left at a line's end
    row = cells(output, "standard_1")
    for figure in ("22.389", "4.83", "10", "8,060.2"):
        assert figure in row
    for figure in [*FIGURES_2016, *TIERS_2016]:
        assert re.search(rf"(?<![\w.,]){re.escape(figure)}(?![\w.,])", output), figure
    # ML units as the table gives them, not 10.0000; the date they were priced at, in one line
    assert "10.0000" not in output and "1.0000" not in output
    assert "ML units and prices from the price table on 2016-12-31, region us." in output
    assert "premium_1 failed: gcloud crashed (BadStatusCodeError)" in output


def test_summary_at_80_leaves_out_a_column_and_says_so_wide_shows_all(dataset_2016: Dataset) -> None:
    narrow = runner.invoke(app, ["summary", "-d", str(dataset_2016.root)], env={"COLUMNS": "80"})
    assert "mean" not in narrow.stdout  # 9 columns of the 2016 data need 83 characters, "no end" wrapped
    assert "left out to fit 80 columns: mean steps/s; --wide shows every column" in narrow.stderr
    wide = run(["summary", "-d", str(dataset_2016.root), "--wide"], 80)
    for header in ("mean steps/s", "steady 95 % interval", "efficiency per task", "ran on", "records"):
        assert header in wide
    assert "17.475" in wide  # the laptop's mean rate
    # columns empty in every row (USD: the 2016 beta quoted ML units only) are left out unless --wide
    # the region is said under the table, not in a header ("USD/h us" read as microseconds)
    assert "USD" not in narrow.stdout and "USD/h" in wide and "USD/h us" not in wide
    assert "region us." in wide


def test_collect_names_the_shared_directory_once_and_wide_gives_full_paths(tmp_path: Path) -> None:
    manifest = Path(str(BUNDLED / "runs.toml"))
    output = run(["collect", "files", "--manifest", str(manifest), "-d", str(tmp_path / "ds")])
    # relative to the working directory when the files lie inside it, as git status does
    shared = (
        os.path.relpath(manifest.parent) if not os.path.relpath(manifest.parent).startswith("..") else manifest.parent
    )
    assert f"sources in {shared}/" in output  # a title, not a bare "in ..." line
    assert cells(output, "standard_1.log")[:4] == ["standard_1.log", "standard_1", "cloudml", "9"]
    assert cells(output, "premium_1.log")[:6] == ["premium_1.log", "premium_1", "gcloud", "1", "0", "1"]
    # singular and plural: 1 event (was "1 events")
    assert "stored 29 step records and 1 event, 0 duplicates already stored" in output
    again = run(["collect", "files", "--manifest", str(manifest), "-d", str(tmp_path / "ds2"), "--wide"])
    assert str(manifest.parent / "standard_1.log") in again


def test_shorten_middle_keeps_the_end() -> None:
    assert shorten_middle("/a/very/long/path/standard_1.log", 20) == "/a/ver…tandard_1.log"
    assert len(shorten_middle("x" * 50, 12)) == 12
    assert shorten_middle("short", 12) == "short"


def test_numbers_are_formatted_once() -> None:
    assert [n.units(10.0), n.units(5.9234), n.units(0.5), n.units(None)] == ["10", "5.9234", "0.5", "-"]
    assert n.rate(17031.6) == "17,031.600" and n.fixed(8210.7, 1) == "8,210.7"
    assert [n.plural(1, "line"), n.plural(2, "line"), n.plural(1000, "request")] == [
        "1 line",
        "2 lines",
        "1,000 requests",
    ]
    assert n.plural(1, "entry", "entries") == "1 entry" and n.plural(3, "entry", "entries") == "3 entries"
    # a price under half a cent keeps 3 significant digits (as the report's): BASIC at 2019 prices
    # (0.3878 ML units/h x USD 0.49) at 31.6 global steps/s (case05): 0.190022 / (31.6 x 3600) x 1000
    # = USD 0.00167 per 1,000 steps, which 2 decimals showed as 0.00
    assert n.money(0.3878 * 0.49 / (31.6 * 3600) * 1000) == "0.00167"
    # and one below 0.1 too, which 2 decimals rounded by up to 50 % (0.0149 as 0.01)
    assert [n.money(0.0), n.money(0.005), n.money(0.0449), n.money(0.1), n.money(1234.5)] == [
        "0.00", "0.00500", "0.0449", "0.10", "1,234.50"
    ]  # fmt: skip
    # hours the same way: 100 steps at 22.81 steps/s = 4.384 s = 0.001218 h, which showed as 0.00
    assert [n.hours(100 / 22.81 / 3600), n.hours(0.0059779), n.hours(None)] == ["0.00122", "0.00598", "-"]


def test_summary_as_csv_markdown_and_json(dataset_2016: Dataset) -> None:
    root = str(dataset_2016.root)
    rows = list(csv.DictReader(io.StringIO(run(["summary", "-d", root, "--format", "csv"]))))
    by_run = {r["run_id"]: r for r in rows}
    assert set(by_run) == {"basic", "local", "premium_1", "standard_1"}
    assert float(by_run["standard_1"]["steady_global_steps_per_s"]) == pytest.approx(STANDARD_1)  # unrounded
    assert by_run["standard_1"]["price_date"] == "2016-12-31"
    md = run(["summary", "-d", root, "--format", "markdown"])
    header = next(line for line in md.splitlines() if line.startswith("| run"))
    assert header.split(" | ")[:3] == ["| run", "tier", "status"]
    assert "| standard_1 | STANDARD_1 | no end logged | 5 +3 ps | 22.389 | 22.390 | 4.83 | 10 | 8,060.2 |" in md
    assert json.loads(run(["summary", "-d", root, "--format", "json"])) == json.loads(
        run(["summary", "-d", root, "--json"])
    )
    bad = runner.invoke(app, ["summary", "-d", root, "--json", "--format", "csv"])
    assert bad.exit_code == 2


def test_predict_recommend_rejects_take_format(dataset_2016: Dataset) -> None:
    root = str(dataset_2016.root)
    fits = list(csv.DictReader(io.StringIO(run(["predict", "-d", root, "--format", "csv"]))))
    at20 = next(r for r in fits if r["model"] == "amdahl" and r["parameter"] == "steps/s at 20 tasks")
    assert float(at20["estimate"]) == pytest.approx(79.20, abs=0.01)  # tests/analysis/test_scaling.py
    table = run(["predict", "-d", root], 80)
    assert cells(table, "amdahl")[:3] == ["amdahl", "lambda", "4.6396"]
    assert "79.20" in table
    args = ["recommend", "-d", root, "--steps", "1000000", "--deadline", "24h", "--price-date", "2019-12-01"]
    text = run(args, 80)
    # standard_1 on its sustained rate (here its steady 22.389; its start-up 13.996 s paid once):
    # (13.996 + 1e6 / 22.3894) / 3600 = 12.41 h; 12.41 h x 4.0571 units/h x USD 0.49 = 24.67
    assert cells(text, "standard_1")[:7] == ["standard_1", "measured", "5", "22.39", "sustained", "12.41", "24.67"]
    assert "to reach 1,000,000 steps, priced on 2019-12-01" in text
    md = run([*args, "--format", "markdown"])
    assert "| standard_1 | measured | 5 | 5 tasks | 22.39 | sustained | 22.39 | 12.41 | 24.67 | yes | - |" in md
    rejected = run(["rejects", "-d", root, "--format", "csv"])
    assert rejected == ""  # the 2016 logs have no broken line: no CSV rows, not even a header


def test_runs_and_tier_select_in_every_analysis_command(dataset_2016: Dataset, tmp_path: Path) -> None:
    root = str(dataset_2016.root)
    picked = json.loads(run(["summary", "-d", root, "--runs", "basic,standard_1", "--json"]))
    assert [r["run_id"] for r in picked] == ["basic", "standard_1"]
    by_tier = json.loads(run(["summary", "-d", root, "--tier", "standard_1", "--json"]))
    assert [r["run_id"] for r in by_tier] == ["standard_1"]
    # standard_1 alone is its own baseline (the smallest measured run): speedup 1
    assert by_tier[0]["speedup_vs_baseline"] == pytest.approx(1.0)
    fits = json.loads(run(["predict", "-d", root, "--runs", "basic,standard_1", "--json"]))
    assert [p["run_id"] for p in fits["points"]] == ["basic", "standard_1"]
    out = tmp_path / "r.html"
    run(["report", "-d", root, "--tier", "BASIC", "--out", str(out), "--lang", "en"])
    html = out.read_text()
    assert "basic" in html and "standard_1" not in html
    missing = runner.invoke(app, ["summary", "-d", root, "--runs", "nope"])
    assert missing.exit_code == 1
    assert "no run 'nope'" in missing.output and "its runs: basic, local, premium_1, standard_1" in missing.output


def test_the_selection_is_pushed_into_each_scan(dataset_2016: Dataset) -> None:
    ds = Dataset(dataset_2016.root)
    analysis = analyze(ds, AnalysisOptions(runs=("basic",), tiers=("basic",)))
    assert analysis.summary["run_id"].to_list() == ["basic"]
    assert ds.scans == {"steps": 1, "events": 1, "rejects": 1, "runs": 1}
    with pytest.raises(SelectionError, match="no run of tier GPU"):
        analyze(Dataset(dataset_2016.root), AnalysisOptions(tiers=("GPU",)))


@pytest.fixture(scope="module")
def two_dates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 2016 experiment plus its STANDARD_1 log again as run "std-new", of unknown date."""
    ds = tmp_path_factory.mktemp("dates") / "ds"
    manifest = Path(str(BUNDLED / "runs.toml"))
    run(["collect", "files", "--manifest", str(manifest), "-d", str(ds)])
    result = runner.invoke(
        app,
        ["collect", "files", str(manifest.parent / "standard_1.log"), "-d", str(ds), "--run-id", "std-new",
         "--tier", "standard_1"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    # standard_1 is STANDARD_1 (no tier warning); the one warning is that the same log is now stored twice
    warnings = [line for line in result.output.splitlines() if line.startswith("warning")]
    assert len(warnings) == 1 and "looks like the same log as the same file" in warnings[0]
    return ds


def test_one_tier_at_two_dates_is_explained_and_region_changes_a_column(two_dates: Path) -> None:
    args = ["summary", "-d", str(two_dates), "--price-date", "2019-12-01"]
    us = run(args, 160)
    # 2016 beta: STANDARD_1 = 10 ML units/h; 2019 table: 4.0571 (tests/analysis/test_scaling.py)
    assert (
        "STANDARD_1 costs 10 on 2016-12-31 and 4.0571 on 2019-12-01 ML units/h: each run is priced on its own date"
        in us
    )
    assert "priced on" in us  # the dates differ: a column
    assert cells(us, "std-new")[1] == "STANDARD_1"
    # USD/h: 4.0571 x 0.49 = 1.99 (us), 4.0571 x 0.54 = 2.19 (europe, the 2018 row)
    assert "USD/h" in us and "1.99" in cells(us, "std-new") and "region us." in us
    europe = run([*args, "--region", "europe"], 160)
    # the region under the table, not in the headers
    header = " ".join(line for line in europe.splitlines()[:8] if "std-new" not in line)
    assert "europe" not in header and "region europe." in europe and "2.19" in cells(europe, "std-new")


def test_a_region_typo_is_a_usage_error_naming_the_nearest(tmp_path: Path) -> None:
    log = Path(str(BUNDLED / "basic.log"))
    collect = ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--machine", "n1-standard-8"]
    # 'wst' is no compass word of a Google Cloud region name; europe-west4 is a price rows' region
    summary = ["summary", "-d", str(tmp_path / "ds")]
    for args in ([*collect, "--region", "europe-wst4"], [*summary, "--region", "europe-wst4"]):
        refused = runner.invoke(app, args)
        assert refused.exit_code == 2 and "unknown region 'europe-wst4'" in refused.stderr
        assert "nearest known: europe-west4" in refused.stderr
    assert not (tmp_path / "ds").exists()
    # a Google Cloud region the rows lack is legitimate (a price file of one's own prices it): stored
    assert runner.invoke(app, [*collect, "--region", "us-east5", "-q"]).exit_code == 0


def test_collect_checks_the_tier(tmp_path: Path) -> None:
    log = Path(str(BUNDLED / "basic.log"))
    # a label of one's own, far from every tier and machine type, is kept (unpriced) with a warning
    odd = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "a"), "--tier", "onprem-rack"])
    assert odd.exit_code == 0
    assert "warning: --tier 'onprem-rack' is not a tier of" in odd.stderr and "tiers.csv" in odd.stderr
    assert "BASIC, BASIC_GPU" in odd.stderr
    # a near miss is a typo: a usage error naming the nearest, as --machine n1-standrd-8 is, and nothing stored.
    # difflib ratios: STANDRD_1 / STANDARD_1 2x9/19 = 0.947, STANDARD_9 / STANDARD_1 2x9/20 = 0.90 (cutoff 0.8)
    for typo in ("STANDRD_1", "STANDARD_9"):
        refused = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / typo), "--tier", typo])
        assert refused.exit_code == 2 and f"unknown tier '{typo}'; nearest known: STANDARD_1 (" in refused.stderr
        assert not (tmp_path / typo).exists()
    # a machine type is a tier too (docs/machines-and-prices.md: one machine of that type): no warning
    machine = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "m"), "--tier", "n1-standard-8"])
    assert machine.exit_code == 0 and "warning" not in machine.stderr
    custom = runner.invoke(app, ["collect", "files", str(log), "-d", str(tmp_path / "b"), "--tier", "custom"])
    assert "CUSTOM without a topology: its ML units and price cannot be computed" in custom.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["demo", "--lang", "de"], "'de' is not a report language; choose en or ja"),
        (["demo", "--out", "{file}"], "is a file; give a directory to write into"),
        (["train", "local", "--out", "{file}", "--steps", "1"], "is a file; give a directory to write into"),
    ],
)
def test_ordinary_mistakes_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    result = runner.invoke(app, [a.replace("{file}", str(file)) for a in args], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not (tmp_path / "tierscope-demo").exists() and list(tmp_path.iterdir()) == [file]


def test_demo_with_a_bad_language_collects_nothing(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path / "d"), "--lang", "de"])
    assert result.exit_code == 2 and not (tmp_path / "d").exists()  # was: collected, then a traceback


def test_recommend_with_only_local_runs_says_they_are_never_priced(dataset_2016: Dataset) -> None:
    args = ["recommend", "-d", str(dataset_2016.root), "--runs", "local", "--steps", "1000", "--budget", "5"]
    result = runner.invoke(app, [*args, "--price-date", "2019-12-01"])
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    assert "local runs are never priced" in said and "pass --price-date" not in said


def test_completion_and_the_trainers_data_option() -> None:
    help_text = run(["--help"], 200)
    assert "--install-completion" in help_text and "--show-completion" in help_text
    local = run(["train", "local", "--help"], 200)
    assert "--data " in local and "--dataset" not in local  # --dataset is the Parquet directory elsewhere
    spec = runner.invoke(app, ["spec", "BASIC", "--dataset", "synthetic"])
    assert spec.exit_code == 0
    assert "note: --dataset synthetic is now --data synthetic" in spec.stderr
    assert '"synthetic"' in spec.stdout or "synthetic" in spec.stdout


def test_log_format_is_its_own_option_and_the_old_name_still_works(tmp_path: Path) -> None:
    log = str(Path(str(BUNDLED / "basic.log")))
    new = runner.invoke(app, ["collect", "files", log, "-d", str(tmp_path / "a"), "--log-format", "cloudml"])
    assert new.exit_code == 0 and "stored 10 step records" in new.stdout and new.stderr == ""
    old = runner.invoke(app, ["collect", "files", log, "-d", str(tmp_path / "b"), "--format", "cloudml"])
    assert old.exit_code == 0 and "stored 10 step records" in old.stdout
    assert "note: --format cloudml is now --log-format cloudml" in " ".join(old.stderr.split())
    assert "--log-format" in run(["formats", "--help"], 200)


def test_a_target_loss_no_run_logs_is_still_called_a_loss(dataset_2016: Dataset) -> None:
    # premium_1 never logged a step, so no row names the metric the target was read on: the header
    # said "target accuracy >= 2" for --target-loss 2
    output = run(["summary", "-d", str(dataset_2016.root), "--runs", "premium_1", "--target-loss", "2"], 120)
    assert "target loss <= 2)" in output.splitlines()[0], output
    output = run(["summary", "-d", str(dataset_2016.root), "--runs", "premium_1", "--target-accuracy", "0.9"], 120)
    assert "target accuracy >= 0.9)" in output.splitlines()[0], output


def test_help_names_what_options_take() -> None:
    # the same --tier reads TIER everywhere (collect printed <str>), dates and durations say their shape
    files = " ".join(run(["collect", "files", "--help"], 120).split())
    cloud = " ".join(run(["collect", "cloud", "--help"], 120).split())
    summary = " ".join(run(["summary", "--help"], 120).split())
    assert "--tier TIER" in files and "--manifest PATH" in files
    assert all(f in cloud for f in ("--tier TIER", "--manifest PATH", "--since TIME", "--until TIME",
                                    "--last DURATION", "--overlap DURATION"))  # fmt: skip
    assert "--tier TIER" in summary and "--price-date YYYY-MM-DD" in summary and "%Y" not in summary
    # several paths are taken (typer 0.28 printed "[PATH]" for the list; 0.29 "PATH <list[str]>")
    assert "[OPTIONS] [PATH...]" in files and "<list" not in files
    assert "[OPTIONS] [FILE...]" in " ".join(run(["formats", "--help"], 120).split())


def test_no_option_shows_a_type_in_place_of_what_it_takes() -> None:
    # typer's own metavars (`<path>`, `<int range>`, `<float range>`, `<str>`) were left on 60 options;
    # each names what it takes now (a choice still lists its values: `<table|json|csv|markdown>`)
    commands = (["collect", "files"], ["collect", "cloud"], ["summary"], ["report"], ["recommend"], ["predict"],
                ["rejects"], ["doctor"], ["compact"], ["formats"], ["demo"], ["spec"], ["train", "local"],
                ["dataset", "bigquery-ddl"])  # fmt: skip
    typed = re.compile(r"<(?:path|str|int|float|int range|float range|integer|text)>")
    for argv in commands:
        assert not typed.findall(run([*argv, "--help"], 120)), argv
    recommend = " ".join(run(["recommend", "--help"], 120).split())
    assert all(f in recommend for f in ("--steps N", "--dataset DIR", "--deadline DURATION", "--budget USD",
                                        "--region REGION", "--runs RUN_IDS"))  # fmt: skip


def test_rejects_at_80_keeps_the_file_and_line_whole_and_wraps_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker's log as a cloud job names it, its third line a rate that is not a number. At 80 columns
    # the file:line was cut in the middle (cloudml-sta…6-12-31-worker-0.log:3) to give the reason room.
    name = "cloudml-standard_1-2016-12-31-worker-0.log"
    line = "Train [master/0], step {}:loss:2.3, accuracy:0.1 (5.0 sec) {} global_steps/s, 20.0 local_steps/s\n"
    (tmp_path / name).write_text(line.format(100, "20.0") + line.format(200, "20.0") + line.format(300, "nan"))
    monkeypatch.chdir(tmp_path)  # shown relative to the working directory, as the user typed it
    run(["collect", "files", name, "-d", "ds", "--run-id", "r", "-q"])
    output = run(["rejects", "-d", "ds"], 80)
    assert [text.rstrip() for text in output.splitlines()] == [
        "file:line                                     run  reason",
        "cloudml-standard_1-2016-12-31-worker-0.log:3  r    global_steps/s 'nan' is not a",
        "                                                   finite number >= 0",
        "1 rejected line",
    ]


def test_a_machines_description_wraps_at_words_and_keeps_the_cost_at_80(tmp_path: Path) -> None:
    # two runs described by their machines: the description is a phrase wrapped between its words, so no figure
    # is folded and the cost per 1,000 steps (the answer) stays; the price date (said under the table) goes first.
    # step 100 every 40 s and step 100 every 10 s: 2.5 and 10 steps/s; T4 0.379998 + 0.35 = 0.729998 USD/h,
    # 0.729998 / (2.5 x 3.6) = 0.0811 USD per 1,000 steps
    for name, seconds in (("t4", 40), ("v100x8", 10)):
        log = tmp_path / f"{name}.log"
        log.write_text(
            "".join(
                f"I1120 10:{t // 60:02d}:{t % 60:02d}.000000 1 hook.py:1] global_step/sec: {100 / seconds:g}\n"
                for t in range(0, 20 * seconds, seconds)
            )
        )
    ds = str(tmp_path / "ds")
    run(["collect", "files", str(tmp_path / "t4.log"), "--machine", "n1-standard-8",
         "--accelerator", "NVIDIA_TESLA_T4:1", "-d", ds])  # fmt: skip
    run(["collect", "files", str(tmp_path / "v100x8.log"), "--machine", "n1-standard-32",
         "--accelerator", "NVIDIA_TESLA_V100:8", "-d", ds])  # fmt: skip
    result = runner.invoke(app, ["summary", "-d", ds, "--price-date", "2026-12-01"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    row = cells(result.stdout, "t4")
    assert row[:3] == ["t4", "1 x n1-standard-8 (1 x", "no end"], row  # wrapped between words, never inside one
    assert "2.500" in row and "0.0811" in row
