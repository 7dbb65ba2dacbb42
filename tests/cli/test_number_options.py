"""A number option given what is no number, or a number outside its bounds, is one line in the project's
words (what was given, what it is not, what to give; tierscope.cli.number_options), not click's ("'nan' is
not a valid int range."), and exits 2 before anything is read."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.cli.number_options import bounds

runner = CliRunner()


def _error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "Traceback" not in result.output
    return errors[0]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("nan", "nan is not a whole number"),
        ("inf", "inf is not a whole number"),
        ("abc", "abc is not a whole number"),
        ("2.5", "2.5 is not a whole number"),  # half a step is no step
        ("0", "0 is too small"),
        ("-3", "-3 is too small"),
    ],
)
@pytest.mark.parametrize("command", ["summary", "recommend", "report"])
def test_steps_that_are_no_whole_number_of_at_least_one_say_what_to_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, value: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    # --steps has no default: its bound (min=1) is what to give
    assert _error([command, "--steps", value]) == (
        f"Error: Invalid value for '--steps': {said}; give one of at least 1 (see --help)"
    )
    assert list(tmp_path.iterdir()) == []


def test_steps_written_as_a_float_that_is_whole_are_those_steps(tmp_path: Path) -> None:
    # 1e5 = 100,000 steps: past the option, the missing dataset is what stops it (exit 1, not a usage error)
    result = runner.invoke(app, ["summary", "-d", str(tmp_path / "none"), "--steps", "1e5"])
    assert result.exit_code == 1 and "Invalid value" not in result.output, result.output


def test_a_float_option_that_is_no_number_names_its_default() -> None:
    assert _error(["collect", "files", "a.log", "--lock-timeout", "soon"]) == (
        "Error: Invalid value for '--lock-timeout': soon is not a number; give one from 0 to 1,000,000,000, like its "
        "default 60 (see --help)"
    )


def test_an_int_option_with_a_default_and_two_bounds() -> None:
    # formats --try's --year: 1 to 9999, no default
    assert _error(["formats", "--year", "0"]) == (
        "Error: Invalid value for '--year': 0 is too small; give one from 1 to 9999 (see --help)"
    )
    assert _error(["formats", "--year", "10000"]) == (
        "Error: Invalid value for '--year': 10000 is too large; give one from 1 to 9999 (see --help)"
    )


class _Range:
    def __init__(self, low: float | None, high: float | None, low_open: bool = False, high_open: bool = False):
        self.min, self.max, self.min_open, self.max_open = low, high, low_open, high_open


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        (_Range(None, None), ""),
        (_Range(1, None), " of at least 1"),
        (_Range(0, None, low_open=True), " above 0"),
        (_Range(None, 1), " of at most 1"),
        (_Range(0, 1, low_open=True), " above 0 and at most 1"),
        (_Range(1, 9999), " from 1 to 9999"),
    ],
)
def test_bounds_in_words(kind: _Range, words: str) -> None:
    assert bounds(kind) == words


@pytest.mark.parametrize("value", ["9223372036854775807", "1e19", "1e30", "99999999999999999999999999999"])
@pytest.mark.parametrize("command", [["summary", "--steps"], ["recommend", "--steps"], ["predict", "--tasks"]])
def test_a_whole_number_past_what_float64_holds_exactly_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], value: str
) -> None:
    # 2**53 = 9,007,199,254,740,992: above it the analysis' float64 steps skip whole numbers (and 2**63 - 1 plus one
    # overflowed polars' int64: a 70-line traceback); one line, exit 2, nothing read
    monkeypatch.chdir(tmp_path)
    assert _error([*command, value]).endswith(
        f"{value} is too large; give one of at most 9,007,199,254,740,992 (see --help)"
    )
