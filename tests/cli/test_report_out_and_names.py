"""``report --out`` never writes into the dataset nor replaces a file that is not an earlier report; a long
run id is cut in titles and notes as in tables."""

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


def test_report_replaces_an_earlier_report_but_never_another_file(tmp_path: Path) -> None:
    # Run as root, `--report /etc/passwd` replaced the system's user list with a report.
    root = tmp_path / "ds"
    write_run(root, "r", 10.0)
    notes = tmp_path / "notes.txt"
    notes.write_text("precious notes\n")
    link = tmp_path / "link.html"
    link.symlink_to(notes)
    for target in (notes, link):
        refused = runner.invoke(app, ["report", "-d", str(root), "--out", str(target)])
        assert refused.exit_code == 2, refused.output
        assert "exists and is not a tierscope report; name a new file, or move it away first" in refused.output
    assert notes.read_text() == "precious notes\n"
    report = tmp_path / "report.html"
    for _ in range(2):  # the second run replaces the first run's report
        done = runner.invoke(app, ["report", "-d", str(root), "--out", str(report)])
        assert done.exit_code == 0, done.output


def test_the_library_writer_refuses_a_file_that_is_not_a_report(tmp_path: Path) -> None:
    from tierscope.reports.errors import NotAReportError
    from tierscope.reports.outfile import check_replaceable

    plan = tmp_path / "plan.toml"
    plan.write_text('id = "s"\n')
    with pytest.raises(NotAReportError, match=r"plan\.toml exists and is not a tierscope report"):
        check_replaceable(plan)
    with pytest.raises(NotAReportError, match="is a folder"):
        check_replaceable(tmp_path)
    check_replaceable(tmp_path / "new.html")  # a new file: nothing to refuse


def test_report_into_missing_folders_makes_them_and_says_so(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    write_run(root, "r", 10.0)
    # out/2026/12/r.html where neither out nor its folders exist: the outermost one made is out, said in one line
    out = tmp_path / "out" / "2026" / "12" / "r.html"
    done = runner.invoke(app, ["report", "-d", str(root), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert out.is_file()
    made = [line for line in done.stdout.splitlines() if line.startswith("made the folder")]
    assert made == [f"made the folder {tmp_path / 'out'}: it did not exist"]
    # the near miss: the folder exists now, so a second report into it says nothing of folders
    again = runner.invoke(app, ["report", "-d", str(root), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert "made the folder" not in again.stdout
