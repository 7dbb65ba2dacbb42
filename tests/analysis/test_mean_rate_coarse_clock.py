"""The mean rate on a clock printed in whole seconds: steps logged within one tick count, their time is in
the interval that crosses the next tick."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app


def _bar(step: int, total: int, rate: float) -> str:
    elapsed, left = int(step / rate), int((total - step) / rate)
    clock = f"{elapsed // 60:02d}:{elapsed % 60:02d}<{left // 60:02d}:{left % 60:02d}"
    return f"{100 * step // total:3d}%| | {step}/{total} [{clock},  {rate:.2f}it/s]"


def test_a_tqdm_bar_drawn_every_step_has_the_mean_rate_of_its_clock(tmp_path: Path) -> None:
    # 500 steps at 4.9 it/s, one bar a step; tqdm prints elapsed time in whole seconds, so most steps
    # show no time passing. Mean = (500 - 1) steps / (102 - 0) s = 4.892 steps/s (was 1.000: only the
    # one-step intervals crossing a second were counted, at 1 step a second each).
    log = tmp_path / "hf.log"
    log.write_text("".join(_bar(s, 500, 4.9) + "\n" for s in range(1, 501)))
    runner = CliRunner()
    ds = str(tmp_path / "ds")
    assert (
        runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "hf", "--settle", "0"]).exit_code == 0
    )
    got = runner.invoke(app, ["summary", "-d", ds, "--json"])
    row = json.loads(got.stdout)[0]
    assert row["mean_global_steps_per_s"] == 499 / 102
    assert abs(row["steady_global_steps_per_s"] - 4.9) < 1e-9  # every bar states 4.90 it/s
