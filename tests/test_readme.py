"""The README's figures and commands do not rot: they are checked against the tool."""

from __future__ import annotations

import re
import shlex

import pytest

from tests.support import ROOT
from tierscope.analysis import analyze
from tierscope.cli import app
from tierscope.dataset.store import Dataset

README = (ROOT / "README.md").read_text(encoding="utf-8")


def demo_table() -> dict[str, list[str]]:
    section = README.split("## What the demo prints", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    return {cells[0].strip(): [c.strip() for c in cells] for cells in rows[1:]}


def test_the_demo_table_matches_the_summary(dataset_2016: Dataset) -> None:
    table = demo_table()
    rows = {r["run_id"]: r for r in analyze(dataset_2016).summary.to_dicts()}
    assert set(table) == set(rows)
    for run in ("local", "basic", "standard_1"):
        _, _, steady, speedup, _units, per_unit = table[run]
        assert steady == f"{rows[run]['steady_global_steps_per_s']:.3f}"
        assert speedup == f"{rows[run]['speedup_vs_baseline']:.2f}"
        expected = rows[run]["steps_per_ml_unit_hour"]
        assert per_unit == ("–" if expected is None else f"{expected:,.1f}")
    assert rows["premium_1"]["failure_reason"] in table["premium_1"][2]


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
