"""`recommend`'s exit status tells a script whether it recommends something (0), whether nothing meets the
constraint (3, every candidate printed and the nearest named), or whether it could not answer (1); and the
README's example is what the command prints.

Two hand-made runs (the logs of tests/analysis/test_todays_question.py: 12 records 100 steps apart at a
constant rate, elapsed time step / rate), priced from analysis/data/prices.csv (us-central1, valid from
2026-07-30):

- t4: 0.25 global steps/s on n1-standard-8 (0.379998 USD/h) + 1 x T4 (0.35 USD/h) = 0.729998 USD/h;
  100,000 steps take 100,000 / 0.25 = 400,000 s = 111.11 h (no start-up: the first record's elapsed time
  is its step over the rate), USD 0.729998 x 111.111 = 81.11.
- a100: 1.00 global steps/s on a2-highgpu-1g (0.73948 USD/h host + 2.93391 USD/h A100) = 3.67339 USD/h;
  100,000 s = 27.78 h, USD 3.67339 x 27.7778 = 102.04.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.analysis.test_todays_question import write_log
from tests.support import ROOT
from tierscope.cli import app
from tierscope.exits import EXIT_ERROR, EXIT_NONE_MEETS, EXIT_OK

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _example() -> tuple[list[list[str]], str]:
    """The README's "Today's question" commands (each split into words, ``tierscope`` dropped) and the
    output block printed after them."""
    section = README.split("## Today's question", 1)[1].split("\n## ", 1)[0]
    commands = section.split("```bash\n", 1)[1].split("```", 1)[0]
    printed = section.split("```\n```\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line)[1:] for line in commands.splitlines() if line.startswith("tierscope ")], printed


@pytest.fixture
def today(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The README's two logs in a fresh folder (the working directory), collected as the README says."""
    monkeypatch.chdir(tmp_path)
    write_log(tmp_path / "t4.log", 0.25)
    write_log(tmp_path / "a100.log", 1.0)
    for args in _example()[0][:-1]:
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, done.output
    return tmp_path / "ds"


def recommend(dataset: Path, *args: str) -> tuple[int, str]:
    got = CliRunner().invoke(
        app,
        ["recommend", "-d", str(dataset), "--steps", "100000", "--price-date", "2026-12-01", *args],
        env={"COLUMNS": "150"},
    )
    return got.exit_code, got.stdout


def test_the_readme_example_is_what_recommend_prints(today: Path) -> None:
    commands, printed = _example()
    got = CliRunner().invoke(app, commands[-1], env={"COLUMNS": "150"})
    assert got.exit_code == EXIT_OK, got.output
    assert [line.rstrip() for line in got.stdout.splitlines()] == printed.splitlines()


def test_a_recommendation_exits_0(today: Path) -> None:
    # 72 h: a100's 27.78 h meets it, t4's 111.11 h does not; a100 is the cheapest that meets it
    code, out = recommend(today, "--deadline", "72h")
    assert code == EXIT_OK
    assert "a100 (measured) is the cheapest measured run that can reach 100,000 steps within 72h: 27.78 h" in out
    assert "72h: 27.78 h, USD 102.04" in out


def test_nothing_meeting_the_deadline_exits_3_and_names_the_nearest(today: Path) -> None:
    # 2 h: neither meets it (111.11 h, 27.78 h); the nearest to a deadline is the fastest, a100
    code, out = recommend(today, "--deadline", "2h")
    assert code == EXIT_NONE_MEETS == 3
    assert "missed: 111.11 h > 2h at the sustained rate" in out and "missed: 27.78 h > 2h" in out
    assert (
        "no measured or predicted configuration can reach 100,000 steps within 2h; "
        "the nearest is a100 (measured): 27.78 h, USD 102.04"
    ) in out
    # the JSON is printed whole too: the choice null, every candidate there
    code, out = recommend(today, "--deadline", "2h", "--json")
    doc = json.loads(out)
    assert code == 3 and doc["choice"] is None and {c["candidate"] for c in doc["candidates"]} == {"t4", "a100"}


def test_nothing_within_the_budget_exits_3_and_names_the_cheapest(today: Path) -> None:
    # USD 50: t4 costs 81.11, a100 102.04; the nearest to a budget is the cheapest, t4
    code, out = recommend(today, "--budget", "50")
    assert code == 3
    assert "for at most USD 50.00; the nearest is t4 (measured): 111.11 h, USD 81.11" in " ".join(out.split())


def test_no_price_to_plan_from_is_an_error_not_3(today: Path) -> None:
    # a run collected without its machines has no price: recommend cannot answer (1), which is no "nothing meets"
    write_log(today.parent / "bare.log", 1.0)
    done = CliRunner().invoke(app, ["collect", "files", str(today.parent / "bare.log"), "-d", str(today.parent / "d2")])
    assert done.exit_code == 0, done.output
    code, _ = recommend(today.parent / "d2", "--deadline", "2h")
    assert code == EXIT_ERROR
