"""``tierscope train local`` on the core install (no TensorFlow): one line saying what to install,
before any process is started or run directory written."""

from __future__ import annotations

import platform
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tierscope.cli.train
from tests.support import ROOT
from tierscope.cli import app

runner = CliRunner()


def test_train_without_tensorflow_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tierscope.cli.train, "find_spec", lambda name: None)
    out = tmp_path / "runs" / "basic"
    result = runner.invoke(app, ["train", "local", "--tier", "BASIC", "--steps", "5", "--out", str(out)])
    assert result.exit_code == 1
    # was "run ... failed: task chief-0 exited with code 1 (see chief-0.jsonl ...)"
    # was "pip install 'tierscope[trainer]'", which from a checkout asks PyPI for a package it lacks:
    # the extra's own requirement, installed by this very interpreter, works from a checkout and an install
    need = tierscope.cli.train.TENSORFLOW.get(platform.machine(), tierscope.cli.train.TENSORFLOW_ELSEWHERE)
    assert " ".join(result.output.split()) == (
        f"error: TensorFlow is not installed (the core install leaves it out): {sys.executable} -m pip install '{need}'"
    )
    assert not out.exists()


def test_the_install_command_is_the_trainer_extras_requirement() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extra = pyproject["project"]["optional-dependencies"]["trainer"]
    # "tensorflow-cpu>=2.16; platform_machine == 'x86_64'", "tensorflow>=2.16; platform_machine != 'x86_64'"
    by_marker = {req.split(";")[1].strip(): req.split(";")[0].strip() for req in extra}
    assert by_marker["platform_machine == 'x86_64'"] == tierscope.cli.train.TENSORFLOW["x86_64"]
    assert by_marker["platform_machine != 'x86_64'"] == tierscope.cli.train.TENSORFLOW_ELSEWHERE
