"""The README's figures and commands do not rot: they are checked against the tool."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support import ROOT
from tierscope import Dataset, analyze
from tierscope.cli import app

README = (ROOT / "README.md").read_text(encoding="utf-8")


def demo_table() -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The README's demo table: its header, its rows by run, and the lines after it."""
    section = README.split("## What the demo prints", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    after = section.split(lines[-1], 1)[1].strip().split("\n\n")[:2]
    return rows[0], {cells[0]: cells for cells in rows[1:]}, after


def test_the_demo_table_is_the_demos_output(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo"), "--lang", "en"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    printed = result.output.split("tierscope summary", 1)[1].splitlines()[1:]
    header, rows, after = demo_table()
    # the demo's table: columns two or more spaces apart, the header first, then a row per run
    shown = [re.split(r"\s{2,}", line.strip()) for line in printed if line.strip()]
    assert shown[0] == header
    for cells in shown[1:5]:
        assert rows[cells[0]] == cells, cells[0]
    assert set(rows) == {c[0] for c in shown[1:5]}
    for note in after:
        assert note in result.output


def test_the_demo_table_matches_the_analysis(dataset_2016: Dataset) -> None:
    header, table, _ = demo_table()
    rows = {r["run_id"]: r for r in analyze(dataset_2016).summary.to_dicts()}
    assert set(table) == set(rows)
    steady, speedup, per_unit = (header.index(h) for h in ("steady steps/s", "speedup", "steps/ML unit-h"))
    for run in ("local", "basic", "standard_1"):
        assert table[run][steady] == f"{rows[run]['steady_global_steps_per_s']:.3f}"
        assert table[run][speedup] == f"{rows[run]['speedup_vs_baseline']:.2f}"
        expected = rows[run]["steps_per_ml_unit_hour"]
        assert table[run][per_unit] == ("-" if expected is None else f"{expected:,.1f}")
    assert rows["premium_1"]["failure_reason"] in README


def test_the_paths_the_readme_and_the_manifest_name_exist() -> None:
    root = ROOT
    manifest = root / "src/tierscope/data/cloudml-tiers-2016/runs.toml"
    assert "src/tierscope/data/cloudml-tiers-2016/runs.toml" in README  # was tierscope/data/..., not a path
    named = re.findall(r"\((analysis/[\w/]+\.csv)\)", manifest.read_text())
    assert named == ["analysis/data/ml_units.csv"]  # was analysis/prices.csv, which never existed
    assert all((root / path).is_file() for path in named)


def usage_commands() -> list[list[str]]:
    block = README.split("## Usage", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [shlex.split(line.split("  #")[0]) for line in block.splitlines() if line.startswith("tierscope ")]


def test_every_usage_command_names_a_real_command_and_options() -> None:
    # Each README command's --help must work, and each --option it uses must be in that help.
    from typer.testing import CliRunner

    runner = CliRunner()
    commands = usage_commands()
    assert len(commands) >= 8
    for argv in commands:
        words = [w for w in argv[1:] if not w.startswith("-")]
        path = words[:2] if words[:1] in (["collect"], ["train"]) else words[:1]
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, (argv, result.output)
        for option in (w.split("=")[0] for w in argv if w.startswith("--")):
            assert option in result.output, f"{' '.join(argv)}: {option} is not an option of {' '.join(path)}"


@pytest.mark.parametrize("word", ["pip install '.[test]'", "python -m pytest"])
def test_ci_runs_the_readme_test_command(word: str) -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = re.search(r"python3\.11 -m venv \.venv && .*pytest", README)
    assert test_command and word in test_command.group(0)
    assert test_command.group(0) in ci
