"""Every float option of the command line takes a finite number: ``nan`` and ``inf`` parse as
floats, but no timeout, deadline, budget, ratio or loss is one, so they are a usage error (exit 2)
naming the option, before anything is read or written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from tierscope.cli import app

runner = CliRunner()


def _float_options(command: Any, prefix: list[str]) -> Iterator[tuple[list[str], str]]:
    """(the command's words, its option) for each option of every command whose value is a float."""
    for param in getattr(command, "params", []):
        if param.param_type_name == "option" and param.type.name.startswith("float"):
            yield prefix, max(param.opts, key=len)
    for name, sub in getattr(command, "commands", {}).items():
        yield from _float_options(sub, [*prefix, name])


#: Checked in the command's body: the sweep's budget as a plan's is (one line, exit 2, tests/sweep/test_dry_run.py),
#: and its queue timeout, where inf is never cancelling a queued job (as leaving the option out).
OWN_CHECKS = {("sweep", "--budget"), ("sweep", "--queue-timeout")}
FLOAT_OPTIONS = [
    (w, o) for w, o in _float_options(typer.main.get_command(app), []) if (" ".join(w), o) not in OWN_CHECKS
]


def test_the_float_options_are_found() -> None:
    # --lock-timeout alone is on collect files, collect cloud, doctor and compact
    found = {(" ".join(words), option) for words, option in FLOAT_OPTIONS}
    assert {
        ("collect files", "--lock-timeout"),
        ("collect cloud", "--lock-timeout"),
        ("recommend", "--budget"),
    } <= found
    assert ("collect files", "--settle") in found and ("train local", "--grace") in found


@pytest.mark.parametrize("value", ["nan", "inf", "NaN"])
@pytest.mark.parametrize(("words", "option"), FLOAT_OPTIONS, ids=[" ".join(w) + " " + o for w, o in FLOAT_OPTIONS])
def test_a_float_option_that_is_no_finite_number_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: list[str], option: str, value: str
) -> None:
    monkeypatch.chdir(tmp_path)  # where a default dataset (./tierscope-data) or run directory would be made
    result = runner.invoke(app, [*words, f"{option}={value}"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    shown = "nan" if value.lower() == "nan" else "inf"
    assert len(error) == 1 and error[0].startswith(
        f"Error: Invalid value for '{option}': {shown} is not a finite number"
    )
    assert list(tmp_path.iterdir()) == []


def test_the_lock_timeout_error_names_what_to_give() -> None:
    result = runner.invoke(app, ["collect", "files", "a.log", "--lock-timeout", "nan"])
    assert result.exit_code == 2
    # the one line: the option, the value, its range (0 to common.MAX_SECONDS) and its default, 60 s
    assert (
        "Error: Invalid value for '--lock-timeout': nan is not a finite number; give one from 0 to 1,000,000,000, "
        "like its default 60 (see --help)" in " ".join(result.output.split())
    )


def test_a_negative_lock_timeout_is_a_usage_error_too() -> None:
    result = runner.invoke(app, ["collect", "files", "a.log", "--lock-timeout", "-inf"])
    assert result.exit_code == 2
    # what it is not and what to give, where click said "is not in the range x>=0."
    assert (
        "Error: Invalid value for '--lock-timeout': -inf is not a finite number; give one from 0 to 1,000,000,000, "
        "like its default 60 (see --help)" in " ".join(result.output.split())
    )


@pytest.mark.parametrize(("words", "option"), FLOAT_OPTIONS, ids=[" ".join(w) + " " + o for w, o in FLOAT_OPTIONS])
def test_a_number_past_float64_is_too_large_in_the_users_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, words: list[str], option: str
) -> None:
    # 1e400 reads as float("inf"): the error names what was typed, 1e400, never "inf"
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, [*words, f"{option}=1e400"])
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and error[0].startswith(f"Error: Invalid value for '{option}': 1e400 is too large")
    assert "inf" not in error[0]
    assert list(tmp_path.iterdir()) == []


def test_a_seconds_option_says_its_range() -> None:
    # --settle takes 0 to 1,000,000,000 s (31 years, common.MAX_SECONDS): the one line says both ends
    result = runner.invoke(app, ["collect", "files", "a.log", "--settle", "1e400"])
    assert result.exit_code == 2
    assert (
        "Error: Invalid value for '--settle': 1e400 is too large to compute with; give one from 0 to 1,000,000,000, "
        "like its default" in " ".join(result.output.split())
    )
    # a finite number past the range: the range's words, the same bounds
    result = runner.invoke(app, ["collect", "files", "a.log", "--settle", "1e300"])
    assert result.exit_code == 2
    assert "'--settle': 1e300 is too large; give one from 0 to 1,000,000,000" in " ".join(result.output.split())
