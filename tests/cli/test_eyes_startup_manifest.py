"""The cron form the README gives, `collect files --manifest runs.toml`, with nothing new loads no
data library either: a manifest without a ``formats`` key imported the declared-formats module
(and with it polars: ~0.5 s of CPU) to read no formats file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tests.cli.test_cli_startup import COLLECT_AGAIN, NOT_FOR_COLLECT
from tierscope.cli import app


def test_a_manifest_collect_with_nothing_new_loads_no_data_library(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.1 (4.0 sec) 25.0 global_steps/s, 25.0 local_steps/s\n"
    )
    manifest = tmp_path / "runs.toml"
    manifest.write_text('[[run]]\nid = "a"\ntier = "BASIC"\nfiles = ["a.log"]\n')
    argv = ["collect", "files", "--manifest", str(manifest), "-d", str(tmp_path / "ds")]
    assert CliRunner().invoke(app, argv).exit_code == 0
    done = subprocess.run(
        [sys.executable, "-c", COLLECT_AGAIN, *argv], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # one file of one line, already read: the second collect reads 0 lines
    assert "read 0 lines: stored 0 step records" in " ".join(report["out"].split())
    heavy = (*NOT_FOR_COLLECT, "tierscope.analysis", "tierscope.reports")
    assert [m for m in report["modules"] if m in heavy or m.startswith(tuple(p + "." for p in heavy))] == []
