"""``report --out`` never writes into the dataset; a long run id is cut in titles and notes as in tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.lead_records import lead_frame
from tierscope.cli import app
from tierscope.cli.tables import NAME_IN_TEXT
from tierscope.dataset.store import Dataset

runner = CliRunner()


def write_run(root: Path, run_id: str, rate: float, tier: str = "STANDARD_1") -> None:
    steps = list(range(1, 21))
    Dataset(root).append("steps", lead_frame(run_id, steps, [s / rate for s in steps], rate, tier))


@pytest.mark.parametrize("inside", ["steps/run_id=r/report.html", "state/files.json", "report.html"])
def test_report_refuses_an_out_inside_the_dataset(tmp_path: Path, inside: str) -> None:
    root = tmp_path / "ds"
    write_run(root, "r", 10.0)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    done = runner.invoke(app, ["report", "-d", str(root), "--out", str(root / inside)])
    assert done.exit_code == 2
    said = " ".join(done.output.split())
    assert f"lies inside the dataset {root}; write it outside, e.g. {tmp_path / Path(inside).name}" in said
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before  # nothing written there


def test_report_refuses_figures_inside_the_dataset(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    write_run(root, "r", 10.0)
    done = runner.invoke(
        app, ["report", "-d", str(root), "--out", str(tmp_path / "r.html"), "--figures", str(root / "figs")]
    )
    assert done.exit_code == 2
    assert "--figures" in done.output and not (root / "figs").exists()


def test_a_long_run_id_is_cut_in_the_title_and_notes(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    long_id = "a" * 5_000 + "Z" * 5_000
    write_run(root, long_id, 10.0)  # not BASIC: the baseline note names it too
    write_run(root, "b", 20.0)
    done = runner.invoke(app, ["summary", "-d", str(root)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    assert long_id[:200] not in done.stdout  # shown nowhere whole
    # 60 cells: 19 of the start, the ellipsis, 40 of the end (tierscope.cli.tables.shorten_middle)
    cut = "a" * 19 + "…" + "Z" * 40
    assert len(cut) == NAME_IN_TEXT
    assert f"speedup against {cut})" in done.stdout
    assert f"note: the speedup is against {cut} (tier STANDARD_1):" in " ".join(done.stdout.split())
