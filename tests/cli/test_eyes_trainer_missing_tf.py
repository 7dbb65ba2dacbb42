"""``tierscope train local`` on the core install (no TensorFlow): one line saying what to install,
before any process is started or run directory written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import tierscope.cli.train
from tierscope.cli import app

runner = CliRunner()


def test_train_without_tensorflow_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tierscope.cli.train, "find_spec", lambda name: None)
    out = tmp_path / "runs" / "basic"
    result = runner.invoke(app, ["train", "local", "--tier", "BASIC", "--steps", "5", "--out", str(out)])
    assert result.exit_code == 1
    # was "run ... failed: task chief-0 exited with code 1 (see chief-0.jsonl ...)"
    assert result.output.strip() == (
        "error: TensorFlow is not installed (the core install leaves it out): pip install 'tierscope[trainer]'"
    )
    assert not out.exists()
