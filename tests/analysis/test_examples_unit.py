"""A language model's log measures tokens/s: its examples are tokens, and the summary and the report say
so (``USD per 1M tokens``), where the step records' ``examples_unit`` says the log counted tokens. Step
files written before that column existed read it as null: examples, as before.

Two runs of one job, each a log stating steps/s and tokens/s (the collector's records), their step files
then rewritten with ``examples_unit`` set as a collector that reads the measure's word stores it (or, for
the old files, without the column at all). Prices (analysis/data/prices.csv, us-central1, on demand, from
2026-07-30): t4 = n1-standard-8 0.379998 + 1 x T4 0.35 = 0.729998 USD/h; a100 = a2-highgpu-1g 0.73948 +
1 x A100 2.93391 = 3.67339 USD/h.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.analysis.test_todays_question import RAN, RUNS
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.cli import app
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset
from tierscope.reports.headline import headline
from tierscope.reports.i18n import Catalog
from tierscope.reports.render import analysis_options, render_report, report_data

#: run id -> (steps/s, tokens a step): t4 5 steps/s x 8,192 = 40,960 tokens/s; a100 4 x 16,384 = 65,536
LOGS = {"t4": (5.0, 8192), "a100": (4.0, 16384)}


def _write_log(path: Path, rate: float, tokens: int) -> None:
    # one record every 10 steps, 10 / rate seconds apart, stating both rates (the batch is their ratio)
    lines = []
    for k in range(1, 31):
        seconds = 10 * k / rate
        lines.append(
            f"2026-11-20 10:{int(seconds // 60):02d}:{seconds % 60:06.3f} INFO step {10 * k} | loss 2.1 | "
            f"{rate} steps/s | tokens/s: {rate * tokens:.1f}\n"
        )
    path.write_text("".join(lines))


def _dataset(root: Path, unit: str | None) -> Path:
    """The two runs collected, each step file rewritten with ``examples_unit`` = ``unit`` where examples/s is
    stated (None: a file of before the column, without it), under a name of before digests."""
    specs = []
    for run, (rate, tokens) in LOGS.items():
        _write_log(root / f"{run}.log", rate, tokens)
        specs.append(RunSpec(run_id=run, tier=None, files=[root / f"{run}.log"], date=RAN,
                             topology=RUNS[run][1].to_json()))  # fmt: skip
    collect_runs(Dataset(root / "ds"), specs)
    for i, part in enumerate(Dataset(root / "ds").files("steps")):
        table = pq.read_table(part)
        table = table.drop_columns(["examples_unit"])
        if unit is not None:
            stated = pa.compute.is_valid(table["examples_per_s"])
            marked = pa.compute.if_else(stated, pa.scalar(unit, pa.large_string()), pa.scalar(None, pa.large_string()))
            table = table.append_column("examples_unit", marked)
        pq.write_table(table, part.with_name(f"part-20261120T00000{i}Z-0123456789ab.parquet"))
        part.unlink()
    return root / "ds"


def _summary(ds: Path) -> dict[str, dict]:
    result = CliRunner().invoke(app, ["summary", "-d", str(ds), "--json"])
    assert result.exit_code == 0, result.output
    return {r["run_id"]: r for r in json.loads(result.output)}


def test_a_log_that_measured_tokens_prices_a_million_tokens(tmp_path: Path) -> None:
    ds = _dataset(tmp_path, "tokens")
    rows = _summary(ds)
    t4, a100 = rows["t4"], rows["a100"]
    # the batch the log shows: 40,960 tokens/s / 5 steps/s = 8,192 tokens a step
    assert t4["batch_size"] == pytest.approx(8192) and t4["examples_unit"] == "tokens"
    assert a100["batch_size"] == pytest.approx(16384) and a100["examples_unit"] == "tokens"
    # USD per 1M tokens: 0.729998 / (40,960 x 3,600) x 10^6 = 0.729998 / 147.456 = 0.00495061...
    assert t4["usd_per_million_examples"] == pytest.approx(0.729998 / 147.456)
    # a100: 3.67339 / (65,536 x 3,600) x 10^6 = 3.67339 / 235.9296 = 0.0155698...
    assert a100["usd_per_million_examples"] == pytest.approx(3.67339 / 235.9296)
    # the steps process different numbers of tokens: compared on tokens/s, 65,536 / 40,960 = 1.60 against
    # the baseline t4 (the lower price per hour)
    assert a100["speedup_basis"] == "examples/s" and a100["speedup_vs_baseline"] == pytest.approx(1.6)
    wide = CliRunner().invoke(app, ["summary", "-d", str(ds), "--wide"], env={"COLUMNS": "400"})
    assert "USD per 1M tokens" in wide.output and "on tokens/s where batch size or mode differ" in wide.output
    assert "examples" not in wide.output.split("\n", 1)[0]
    data = report_data(analyze(Dataset(ds), analysis_options(AnalysisOptions())))
    said = headline(data.summary, data.costs, data.steps, Catalog("en"))
    assert said[0] == (
        "Fastest: a100 (1 x a2-highgpu-1g (1 x NVIDIA_TESLA_A100)) at 65,536 tokens/s, 1.60× the baseline t4 "
        "(compared on tokens/s: the runs' global steps process different numbers of tokens)."
    )
    assert (
        said[1] == "Cheapest per token: t4 (1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)) at 0.00495 USD per million tokens."
    )
    ja = headline(data.summary, data.costs, data.steps, Catalog("ja"))
    assert (
        ja[1]
        == "1 トークンあたり最安: t4 (1 x n1-standard-8 (1 x NVIDIA_TESLA_T4))、100 万トークンあたり 0.00495 米ドル。"
    )


@pytest.mark.parametrize("unit", [None, "examples"])
def test_files_without_the_column_or_of_examples_say_examples(tmp_path: Path, unit: str | None) -> None:
    # the same figures (the unit changes no number), named examples: a file of before the column reads it as null
    rows = _summary(_dataset(tmp_path, unit))
    assert rows["t4"]["examples_unit"] == "examples"
    assert rows["t4"]["usd_per_million_examples"] == pytest.approx(0.729998 / 147.456)
    wide = CliRunner().invoke(app, ["summary", "-d", str(tmp_path / "ds"), "--wide"], env={"COLUMNS": "400"})
    assert "USD per 1M examples" in wide.output and "tokens" not in wide.output


def _clock_only_log(path: Path, tokens_per_s: float, seconds_apart: float = 5.0, offset: int = 0) -> None:
    # a logger's clock and tokens/s, no steps/s and no step time: 10 steps every 5 s (2 steps/s); the first
    # line a warm-up's slower tokens/s, which the median of the 20 does not follow; ``offset`` shifts the
    # steps it reports (a worker reading a shared counter at its own moments)
    lines = []
    for k in range(1, 21):
        seconds = seconds_apart * k
        rate = tokens_per_s / 4 if k == 1 else tokens_per_s
        lines.append(
            f"2026-11-20 10:{int(seconds // 60):02d}:{seconds % 60:02.0f},123 - INFO - step {10 * k + offset} | "
            f"loss 2.1 | tokens/s {rate:.0f}\n"
        )
    path.write_text("".join(lines))


def test_tokens_per_second_timed_by_the_logger_clock_alone_price_a_million_tokens(tmp_path: Path) -> None:
    _clock_only_log(tmp_path / "a100.log", 16384)
    spec = RunSpec(
        run_id="a100", tier=None, files=[tmp_path / "a100.log"], date=RAN, topology=RUNS["a100"][1].to_json()
    )
    collect_runs(Dataset(tmp_path / "ds"), [spec])
    row = _summary(tmp_path / "ds")["a100"]
    # the clock: 10 steps every 5 s = 2 global steps/s, one training task (its local steps are the global ones)
    assert row["steady_global_steps_per_s"] == pytest.approx(2.0)
    # tokens a step: the median tokens/s 16,384 (19 of 20 lines; the warm-up's 4,096 is one) / 2 steps/s = 8,192
    assert row["batch_size"] == pytest.approx(8192) and row["examples_unit"] == "tokens"
    assert row["examples_per_s"] == pytest.approx(16384)
    # 3.67339 USD/h / (16,384 tokens/s x 3,600 s / 10^6) = 3.67339 / 58.9824 = 0.0622794... USD per 1M tokens
    assert row["usd_per_million_examples"] == pytest.approx(3.67339 / 58.9824)
    assert row["usd_per_million_examples"] == pytest.approx(0.0622794, rel=1e-5)


def test_tokens_per_second_of_two_tasks_of_unknown_mode_price_no_token(tmp_path: Path) -> None:
    # the near miss: two tasks' logs, no declared strategy and no local rates to tell sync from async, and
    # no global step both report (10, 20, ... against 15, 25, ...: not replicas in lockstep, which
    # tests/analysis/test_lockstep_replicas.py reads); whether a global step is one task's batch or both
    # tasks' is unknown, so neither is taken
    for task in (0, 1):
        _clock_only_log(tmp_path / f"worker-{task}.log", 16384, offset=5 * task)
    files = [tmp_path / "worker-0.log", tmp_path / "worker-1.log"]
    collect_runs(Dataset(tmp_path / "ds"), [RunSpec(run_id="two", tier=None, files=files, date=RAN)])
    row = _summary(tmp_path / "ds")["two"]
    assert row["tasks"] == 2 and row["steady_global_steps_per_s"] is not None
    assert row["batch_size"] is None and row["usd_per_million_examples"] is None and row["examples_unit"] is None


def _collect_a100(root: Path) -> None:
    """``root``/a100.log collected as the run a100 on one A100 (3.67339 USD/h) into ``root``/ds."""
    spec = RunSpec(run_id="a100", tier=None, files=[root / "a100.log"], date=RAN, topology=RUNS["a100"][1].to_json())
    collect_runs(Dataset(root / "ds"), [spec])


def test_the_price_of_a_million_tokens_is_in_the_default_table_and_the_report(tmp_path: Path) -> None:
    _clock_only_log(tmp_path / "a100.log", 16384)
    _collect_a100(tmp_path)
    table = CliRunner().invoke(app, ["summary", "-d", str(tmp_path / "ds")], env={"COLUMNS": "250"}).output
    header, row = table.splitlines()[1:3]
    # one run, compared with nothing on tokens/s, yet not --wide: 3.67339 / 58.9824 = 0.0623 USD per 1M tokens
    assert "USD per 1M tokens" in header and row.split()[-1] == "0.0623" and "--wide" not in header
    html = render_report(analyze(Dataset(tmp_path / "ds"), analysis_options(AnalysisOptions())))
    assert "<th>USD per 1M tokens</th>" in html and ">0.0623</td>" in html


def test_runs_that_count_no_tokens_keep_the_table_narrow(tmp_path: Path) -> None:
    # the near miss: the same log stating images/s (examples): no price per 1M examples unwidened, as before
    _clock_only_log(tmp_path / "a100.log", 16384)
    text = (tmp_path / "a100.log").read_text().replace("tokens/s", "images/s")
    (tmp_path / "a100.log").write_text(text)
    _collect_a100(tmp_path)
    assert _summary(tmp_path / "ds")["a100"]["examples_unit"] == "examples"
    table = CliRunner().invoke(app, ["summary", "-d", str(tmp_path / "ds")], env={"COLUMNS": "250"}).output
    assert "USD per 1M" not in table
    html = render_report(analyze(Dataset(tmp_path / "ds"), analysis_options(AnalysisOptions())))
    assert "USD per 1M" not in html


def _mixed_log(path: Path, words: list[str]) -> None:
    # 2 steps/s on a logger's clock and its own steps/s; line k states 16,384 tokens/s (8,192 a step) or 64 images/s
    # (32 a step) as words[k] says
    lines = []
    for k, word in enumerate(words, start=1):
        figure = {"tokens/s": 16384, "images/s": 64}[word]
        lines.append(f"2026-11-20 10:00:{5 * k:02d},000 - INFO - step {10 * k} | 2.0 steps/s | {word} {figure}\n")
    path.write_text("".join(lines))


def test_a_run_stating_tokens_and_images_counts_the_unit_most_lines_count_and_says_so(tmp_path: Path) -> None:
    # 7 lines of tokens/s, 4 of images/s (a vision-language log, say): never added. Before, the batch was the
    # median of the 11 ratios (8,192, the tokens') named "examples", as not every record counted tokens
    _mixed_log(tmp_path / "a100.log", ["tokens/s"] * 4 + ["images/s"] * 4 + ["tokens/s"] * 3)
    _collect_a100(tmp_path)
    analysis = analyze(Dataset(tmp_path / "ds"))
    row = analysis.summary.row(0, named=True)
    # 16,384 tokens/s / 2 steps/s = 8,192 tokens a step; 3.67339 / 58.9824 = 0.0623 USD per 1M tokens
    assert row["examples_unit"] == "tokens" and row["batch_size"] == pytest.approx(8192)
    assert row["usd_per_million_examples"] == pytest.approx(3.67339 / 58.9824)
    assert analysis.notes == [
        (
            "a100",
            "its records state examples/s in tokens and in examples (images, samples): its examples/s and price per "
            "1M tokens are of the tokens the most of them count; 4 records counting examples left out (never added "
            "to them)",
        )
    ]


def test_runs_counting_tokens_and_images_each_name_their_own(tmp_path: Path) -> None:
    # t4 counts tokens, a100 images (the near miss of one unit for all): neither is priced in the other's unit,
    # and a100 compares with the baseline t4 on steps/s, not on a step's tokens against its images
    _mixed_log(tmp_path / "t4.log", ["tokens/s"] * 10)
    _mixed_log(tmp_path / "a100.log", ["images/s"] * 10)
    specs = [
        RunSpec(run_id=run, tier=None, files=[tmp_path / f"{run}.log"], date=RAN, topology=RUNS[run][1].to_json())
        for run in ("t4", "a100")
    ]
    collect_runs(Dataset(tmp_path / "ds"), specs)
    rows = _summary(tmp_path / "ds")
    assert (rows["t4"]["examples_unit"], rows["a100"]["examples_unit"]) == ("tokens", "examples")
    # a run counting images beside a baseline counting tokens is another job's work, it seems
    # (analysis/comparable.py): no speedup (on examples/s it would be 64 / 16,384), and the note says why
    assert rows["a100"]["speedup_vs_baseline"] is None
    assert "its examples/s count examples, the baseline's tokens" in rows["a100"]["baseline_note"]
    table = CliRunner().invoke(app, ["summary", "-d", str(tmp_path / "ds")], env={"COLUMNS": "250"}).output
    lines = table.splitlines()
    assert "USD per 1M examples" not in lines[1] and "USD per 1M tokens" not in lines[1] and "USD per 1M" in lines[1]
    # t4: 0.729998 / (16,384 x 3,600 / 10^6) = 0.729998 / 58.9824 = 0.01238 -> 0.0124 tokens;
    # a100: 3.67339 / (64 x 3,600 / 10^6) = 3.67339 / 0.2304 = 15.94 examples
    assert "0.0124 tokens" in next(line for line in lines if line.startswith("t4 "))
    assert "15.94 examples" in next(line for line in lines if line.startswith("a100 "))
    html = render_report(analyze(Dataset(tmp_path / "ds"), analysis_options(AnalysisOptions())))
    # the report's column names no one unit; each cell its own (15.94 to 3 significant figures: 15.9)
    assert "<th>USD per 1M</th>" in html
    assert '"USD per 1M tokens">0.0124<span class="ci">tokens</span>' in html
    assert '"USD per 1M examples">15.9<span class="ci">examples</span>' in html
