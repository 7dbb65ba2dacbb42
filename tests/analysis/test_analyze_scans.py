"""One analysis pass opens each dataset table once, whatever the command asks of it.

``Dataset.scans`` is the store's own counter (every ``scan``/``read`` adds 1 for its table);
before the pass existed a report opened the 2016 dataset's tables 16 times (steps 6, events 5,
runs 4, rejects 1) and a summary 5 times.
"""

from __future__ import annotations

import ast
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support import ROOT
from tierscope.analysis import AnalysisOptions, analyze
from tierscope.analysis.forecast import predict, recommend
from tierscope.cli import app
from tierscope.dataset.store import Dataset
from tierscope.reports.render import analysis_options, render_html, report_data

REPORTS = ROOT / "reports"
ONCE_EACH = Counter({"steps": 1, "events": 1, "rejects": 1, "runs": 1})


def test_the_counter_counts_each_opening(dataset_2016: Dataset) -> None:
    ds = Dataset(dataset_2016.root)
    ds.scan("steps").collect()
    ds.read("events")
    ds.read("events", columns=["run_id"])
    assert ds.scans == Counter({"steps": 1, "events": 2})


def test_summary_opens_each_table_once(dataset_2016: Dataset) -> None:
    ds = Dataset(dataset_2016.root)
    analyze(ds)
    assert ds.scans == ONCE_EACH


def test_report_opens_each_table_once(dataset_2016: Dataset) -> None:
    ds = Dataset(dataset_2016.root)
    html = render_html(report_data(analyze(ds, analysis_options())), "en")
    assert ds.scans == ONCE_EACH
    assert "standard_1" in html


def test_predict_and_recommend_read_the_same_pass(dataset_2016: Dataset) -> None:
    ds = Dataset(dataset_2016.root)
    analysis = analyze(ds, AnalysisOptions(price_date=date(2019, 12, 1), fits=True))
    predict(analysis, 20)
    recommend(analysis, 1_000_000, deadline_h=24)
    assert ds.scans == ONCE_EACH


@pytest.mark.parametrize(
    "command",
    [
        ["summary"],
        ["report", "--lang", "en"],
        ["predict"],
        # a target reads each batch's loss (and an accuracy target its evaluations) within the same opening
        ["summary", "--target-accuracy", "0.25"],
        ["report", "--lang", "en", "--target-loss", "2"],
    ],
)
def test_each_command_opens_each_table_once(
    command: list[str], dataset_2016: Dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The commands make their own Dataset; keep the ones they make to read their (real) counters.
    made: list[Dataset] = []
    init = Dataset.__init__

    def keep(self: Dataset, root: Path | str) -> None:
        init(self, root)
        made.append(self)

    monkeypatch.setattr(Dataset, "__init__", keep)
    extra = ["-o", str(tmp_path / "r.html")] if command[0] == "report" else []
    result = CliRunner().invoke(app, [*command, "-d", str(dataset_2016.root), *extra])
    assert result.exit_code == 0, result.output
    assert sum((d.scans for d in made), Counter()) == ONCE_EACH


def test_reports_never_import_the_dataset_or_the_collector() -> None:
    # The report draws what the analysis holds; it cannot open the dataset behind its back.
    for path in sorted(REPORTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            for name in names:
                assert not name.startswith(("tierscope.dataset", "tierscope.collector")), f"{path.name} imports {name}"
