"""The loss chart's note on a run it cannot place: a lead task whose elapsed times start again at a restart is
said to be so, not to log "neither timestamps nor elapsed times" (tierscope.reports.render._clockless)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from tierscope import Dataset, ReportOptions, analyze, render_report
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.reports.options import analysis_options


def test_a_run_whose_elapsed_clock_restarts_is_said_to_be_cut(tmp_path: Path) -> None:
    # steps 100 ... 1,000 at 20 ... 200 s, then a resume from 600 whose clock starts again (700 at 30 s, ...)
    records = [{"step": 100 * i, "elapsed_time": 20.0 * i, "loss": 2.0 - 0.01 * i} for i in range(1, 11)]
    records += [{"step": 600 + 100 * i, "elapsed_time": 10.0 + 20.0 * i, "loss": 1.9 - 0.01 * i} for i in range(1, 6)]
    log = tmp_path / "resumed.log"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    ds = Dataset(tmp_path / "ds")
    collect_runs(ds, runs_from_paths([log], "resumed", None, None))
    analysis = analyze(ds, analysis_options())
    en = html.unescape(render_report(analysis, ReportOptions(lang="en")))
    assert (
        "resumed: not drawn: its lead task's elapsed times start again at its restarts and no timestamp joins its "
        "attempts, so its records have no place on one clock of the run."
    ) in en
    assert "neither timestamps nor elapsed times" not in en
    ja = html.unescape(render_report(analysis, ReportOptions(lang="ja")))
    assert "resumed: 描画なし: リードタスクの経過時間が再起動のたびに 0 から始まり" in ja
