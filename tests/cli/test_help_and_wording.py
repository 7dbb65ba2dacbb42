"""A newcomer's first commands read plainly: ``-h`` is help everywhere, the commands are listed in the order
a session uses them, prose wraps at the terminal's width keeping its indent, the demo says what to run
next, ``summary`` without a dataset names the demo's, ``recommend`` echoes the deadline as given, and
``report --open`` with no display says where the report is. One word per meaning (the glossary test)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support import ROOT
from tierscope.cli import app
from tierscope.cli.prose import wrap
from tierscope.dataset.store import Dataset

runner = CliRunner()


def test_dash_h_is_help_on_every_level() -> None:
    for argv in ([], ["collect"], ["collect", "files"], ["summary"], ["train", "local"], ["report"]):
        result = runner.invoke(app, [*argv, "-h"])
        assert result.exit_code == 0, (argv, result.output)
        assert result.output.startswith("Usage: "), argv
        assert "-h, --help" in result.output, argv


def test_commands_are_listed_in_workflow_order() -> None:
    listed = re.findall(r"^  (\w+)  ", runner.invoke(app, ["-h"]).output, flags=re.M)
    assert listed[:6] == ["demo", "collect", "summary", "predict", "recommend", "report"]
    assert listed.index("formats") < listed.index("rejects") < listed.index("dataset") < listed.index("doctor")
    assert listed[-2:] == ["doctor", "compact"]
    # every command has its heading (a new one would fall under "Other commands", after the maintenance)
    from tierscope.cli import COMMANDS, SECTIONS

    assert sorted(name for names in SECTIONS.values() for name in names) == sorted(COMMANDS)


def test_a_wrapped_paragraph_keeps_its_indent_and_ends_no_line_in_a_space() -> None:
    text = "  Caveat: " + "an unchecked extrapolation " * 6
    lines = wrap(text, 40).splitlines()
    assert len(lines) > 1 and all(line.startswith("  ") and len(line) <= 40 for line in lines)
    assert all(line == line.rstrip() for line in lines)
    # a path longer than the line is kept whole on its own line, never cut
    assert "/a/" + "x" * 60 + ".log" in wrap("see /a/" + "x" * 60 + ".log now", 40).splitlines()


def test_predict_and_the_demo_print_no_line_past_the_terminal(tmp_path: Path, dataset_2016: Dataset) -> None:
    # was: a 200-character "  Caveat:" line (predict, piped) and a 417-character forecast line (demo)
    for columns in ("80", "100"):
        out = runner.invoke(app, ["predict", "-d", str(dataset_2016.root)], env={"COLUMNS": columns}).output
        notes = out[out.index("amdahl:") :].splitlines()
        assert max(len(line) for line in notes) <= int(columns), notes
        caveat = next(i for i, line in enumerate(notes) if line.startswith("  Caveat:"))
        assert notes[caveat + 1].startswith("  ") and not notes[caveat + 1].startswith("   ")  # its indent kept
        assert all(line == line.rstrip() for line in notes)
    demo = runner.invoke(app, ["demo", "--out", str(tmp_path / "d"), "--lang", "en"], env={"COLUMNS": "80"})
    assert demo.exit_code == 0, demo.output
    prose = demo.output[demo.output.index("What premium_1") : demo.output.index("dataset: ")].splitlines()
    assert max(len(line) for line in prose) <= 80, prose


def test_the_demo_ends_with_the_next_command_and_summary_names_its_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    demo = runner.invoke(app, ["demo", "--lang", "en"], env={"COLUMNS": "120"})
    assert demo.exit_code == 0, demo.output
    lines = demo.output.splitlines()
    tail = lines[next(i for i, line in enumerate(lines) if line.startswith("dataset: ")) :]
    assert tail[0] == "dataset: tierscope-demo/dataset" and tail[1] == "report:  tierscope-demo/report.html"
    assert tail[2] == (
        "next:    tierscope recommend --dataset tierscope-demo/dataset --steps 1000000 --deadline 24h "
        "--quota ml-units=25"
    )
    # and that command works as printed
    args = tail[2].split()[2:]
    assert runner.invoke(app, args, env={"COLUMNS": "120"}).exit_code == 0
    lost = runner.invoke(app, ["summary"])
    assert lost.exit_code == 1
    said = " ".join(lost.output.split())
    assert "the demo wrote its dataset to tierscope-demo/dataset: add --dataset tierscope-demo/dataset" in said


def test_recommend_echoes_the_deadline_in_the_users_unit(dataset_2016: Dataset) -> None:
    # STANDARD_1 at 22.389 steps/s needs 13.996 + 1,000 / 22.389 = 58.7 s: within 10 minutes, said as "10m"
    args = ["recommend", "-d", str(dataset_2016.root), "--steps", "1000", "--deadline", "10m"]
    args += ["--price-date", "2019-12-01"]
    out = " ".join(runner.invoke(app, args, env={"COLUMNS": "200"}).output.split())
    assert "within 10m" in out and "0.17 h" not in out
    # the region under the table, not beside USD in a header (read as microseconds)
    assert "USD us" not in out and "Prices of region us." in out


def test_report_open_without_a_display_says_where_the_report_is(
    tmp_path: Path, dataset_2016: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["report", "-d", str(dataset_2016.root), "-o", str(out), "--lang", "en", "--open"])
    assert result.exit_code == 0
    said = " ".join(result.stderr.split())
    assert "no display" in said and str(out.resolve()) in said


#: Words that name one thing twice, and where they must not appear: (what, forbidden pattern, why).
FORBIDDEN = [
    ("the report", r"\bunknown\b", "a run's status is 'no end logged' in the report and the terminal"),
    ("a collect's output", r"\bskipped\b", "duplicates are 'already stored', lines without one 'no metric'"),
    ("a summary's headers", r"USD(/h)? (us|europe|asia)\b", "the region goes under the table"),
]


def test_one_word_per_meaning_in_the_catalogs_and_the_terminal(tmp_path: Path, dataset_2016: Dataset) -> None:
    en = json.loads((ROOT / "reports/i18n/en.json").read_text(encoding="utf-8"))
    ja = json.loads((ROOT / "reports/i18n/ja.json").read_text(encoding="utf-8"))
    assert set(en) == set(ja)
    assert en["status.unknown"] == "no end logged"
    assert not [k for k, v in en.items() if re.search(FORBIDDEN[0][1], v) and k.startswith("status.")]
    collect = runner.invoke(
        app,
        ["collect", "files", "--manifest", str(ROOT / "src/tierscope/data/cloudml-tiers-2016/runs.toml"),
         "-d", str(tmp_path / "ds")],
        env={"COLUMNS": "200"},
    )  # fmt: skip
    assert collect.exit_code == 0
    assert not re.search(FORBIDDEN[1][1], collect.output), collect.output
    assert "0 duplicates already stored" in collect.output and "no metric" in collect.output
    summary = runner.invoke(app, ["summary", "-d", str(dataset_2016.root), "--wide"], env={"COLUMNS": "300"})
    header = summary.output.splitlines()[1]
    assert not re.search(FORBIDDEN[2][1], header) and "USD/h" in header
    assert "unknown" not in summary.output and "no end logged" in summary.output
    # the report's status words are the terminal's
    from tierscope.cli.output import STATUS_WORDS

    assert {k: en[f"status.{k}"] for k in STATUS_WORDS} == STATUS_WORDS
    # the catalogs: "skipped" names nothing (a duplicate is "already stored", a line without one "no metric"),
    # and no status is "unknown" (en) or 不明 (ja)
    assert not [k for k, v in en.items() if re.search(r"\bskip", v, flags=re.I)]
    assert not [k for k, v in ja.items() if "スキップ" in v]
    assert not [k for k in STATUS_WORDS if en[f"status.{k}"] == "unknown" or "不明" in ja[f"status.{k}"]]
    # and the help a newcomer reads before a collect
    for argv in (["collect", "files", "-h"], ["collect", "cloud", "-h"], ["formats", "-h"]):
        said = runner.invoke(app, argv, env={"COLUMNS": "200"}).output
        assert not re.search(r"\bskipped\b", said), argv


def test_formats_try_rounds_floats_leaves_out_empty_fields_and_shows_bar_updates_apart(tmp_path: Path) -> None:
    # a Keras progress bar captured to a file: three updates one \r apart on one line, then the epoch's end
    bar = "".join(
        f"\r {i}/100 [=====>......] - ETA: 1s - loss: {loss} - accuracy: {acc}"
        for i, loss, acc in ((10, "0.94", "0.81"), (50, "0.74", "0.85"), (100, "0.49", "0.90"))
    )
    log = tmp_path / "keras.log"
    log.write_text("Epoch 1/2\n" + bar[1:] + " - 5s 50ms/step - loss: 0.2569 - accuracy: 0.9237\n")
    out = runner.invoke(app, ["formats", "--try", str(log)], env={"COLUMNS": "120"}).output
    lines = [line.strip("│ ") for line in out.splitlines()]
    # each update on a line of its own, marked; was glued into "0.81 50/100"
    assert any(line.startswith("\\r  50/100 [") for line in lines), out
    assert "0.81  50/100" not in out and "0.8150/100" not in out
    assert "=None" not in out  # a field the record lacks is left out, not "reason=None"
    # 50 ms/step is 1 / 0.05 = 20 global steps/s: said as 20, not 20.000000000000004 or 19.999999999999996
    assert "global_steps_per_s=20 " in out
    assert "with no metric, of 2 lines" in " ".join(out.split()) and "skipped of" not in out


def test_no_message_names_the_directory_tierscope_is_installed_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tierscope

    installed = str(Path(tierscope.__file__).parent)  # site-packages/tierscope once installed
    monkeypatch.chdir(tmp_path)  # outside the checkout, as a user runs it
    demo = runner.invoke(app, ["demo", "--lang", "en"], env={"COLUMNS": "120"})
    assert demo.exit_code == 0
    assert installed not in demo.output and "in tierscope/data/cloudml-tiers-2016/" in demo.output
    log = str(Path(installed) / "data" / "cloudml-tiers-2016" / "basic.log")
    odd = runner.invoke(app, ["collect", "files", log, "-d", "ds", "--tier", "onprem-rack"])
    assert odd.exit_code == 0 and installed not in odd.stderr and installed not in odd.stdout
    assert "tierscope/data/tiers.csv" in odd.stderr


def test_the_top_help_asks_the_question_and_says_where_to_start() -> None:
    # today's machines, not the legacy tiers alone; then the first two steps of the README
    said = " ".join(runner.invoke(app, ["--help"]).output.split())
    assert "Measure how much faster training gets on a bigger machine configuration, and whether it is worth" in said
    assert (
        "Start with `tierscope demo` (the bundled 2016 runs), then your own logs: `tierscope collect files LOG... "
        "--dataset ds`, `tierscope summary --dataset ds`." in said
    )
