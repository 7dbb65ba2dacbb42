"""The README's and docs' figures, commands and links do not rot: they are checked against the tool."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support import ROOT
from tierscope import Dataset, analyze
from tierscope.cli import app

README = (ROOT / "README.md").read_text(encoding="utf-8")


def demo_table() -> tuple[list[str], dict[str, list[str]], list[str]]:
    """The README's demo table: its header, its rows by run, and the lines after it."""
    section = README.split("## What the demo prints", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ") and "---" not in line]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in lines]
    after = section.split(lines[-1], 1)[1].strip().split("\n\n")[:2]
    return rows[0], {cells[0]: cells for cells in rows[1:]}, after


def test_the_demo_table_is_the_demos_output(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo"), "--lang", "en"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    printed = result.output.split("tierscope summary", 1)[1].splitlines()[1:]
    header, rows, after = demo_table()
    # the demo's table: columns two or more spaces apart, the header first, then a row per run
    shown = [re.split(r"\s{2,}", line.strip()) for line in printed if line.strip()]
    assert shown[0] == header
    for cells in shown[1:5]:
        assert rows[cells[0]] == cells, cells[0]
    assert set(rows) == {c[0] for c in shown[1:5]}
    for note in after:
        assert note in result.output


def test_the_demo_table_matches_the_analysis(dataset_2016: Dataset) -> None:
    header, table, _ = demo_table()
    rows = {r["run_id"]: r for r in analyze(dataset_2016).summary.to_dicts()}
    assert set(table) == set(rows)
    steady, speedup, per_unit = (header.index(h) for h in ("steady steps/s", "speedup", "steps/ML unit-h"))
    for run in ("local", "basic", "standard_1"):
        assert table[run][steady] == f"{rows[run]['steady_global_steps_per_s']:.3f}"
        assert table[run][speedup] == f"{rows[run]['speedup_vs_baseline']:.2f}"
        expected = rows[run]["steps_per_ml_unit_hour"]
        assert table[run][per_unit] == ("-" if expected is None else f"{expected:,.1f}")
    assert rows["premium_1"]["failure_reason"] in README


def test_the_paths_the_readme_and_the_manifest_name_exist() -> None:
    root = ROOT
    manifest = root / "src/tierscope/data/cloudml-tiers-2016/runs.toml"
    assert "src/tierscope/data/cloudml-tiers-2016/runs.toml" in README  # was tierscope/data/..., not a path
    named = re.findall(r"\((analysis/[\w/]+\.csv)\)", manifest.read_text())
    assert named == ["analysis/data/ml_units.csv"]  # was analysis/prices.csv, which never existed
    assert all((root / path).is_file() for path in named)


def usage_commands() -> list[list[str]]:
    """The README's three commands for your own log, and the usage reference's (docs/cli.md)."""
    own = README.split("## Your own log in three commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    usage = cli.split("## Usage", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = [*own.splitlines(), *usage.splitlines()]
    return [shlex.split(line.split("  #")[0]) for line in lines if line.startswith("tierscope ")]


def test_every_usage_command_names_a_real_command_and_options() -> None:
    # Each README command's --help must work, and each --option it uses must be in that help.
    from typer.testing import CliRunner

    runner = CliRunner()
    commands = usage_commands()
    assert len(commands) >= 3 + 8
    for argv in commands:
        words = [w for w in argv[1:] if not w.startswith("-")]
        path = words[:2] if words[:1] in (["collect"], ["train"], ["prices"]) else words[:1]
        result = runner.invoke(app, [*path, "--help"], terminal_width=200)
        assert result.exit_code == 0, (argv, result.output)
        for option in (w.split("=")[0] for w in argv if w.startswith("--")):
            assert option in result.output, f"{' '.join(argv)}: {option} is not an option of {' '.join(path)}"


@pytest.mark.parametrize("word", ["pip install '.[test]'", "python -m pytest"])
def test_ci_runs_the_readme_test_command(word: str) -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    test_command = re.search(r"python3\.11 -m venv \.venv && .*pytest", README)
    assert test_command and word in test_command.group(0)
    assert test_command.group(0) in ci


def test_the_readme_reads_in_ten_minutes_and_links_every_doc() -> None:
    assert len(README.splitlines()) <= 250
    docs = {p.name for p in (ROOT / "docs").glob("*.md")}
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)(?:#[\w-]+)?\)", README))
    assert linked == docs


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("page", ["README.md", *sorted(p.name for p in (ROOT / "docs").glob("*.md"))])
def test_every_link_between_the_pages_resolves(page: str) -> None:
    path = ROOT / page if page == "README.md" else ROOT / "docs" / page
    text = path.read_text(encoding="utf-8")
    for target, anchor in re.findall(r"\]\((?!https?:)([^)#\s]*)(?:#([^)\s]+))?\)", text):
        linked = (path.parent / target).resolve() if target else path
        assert linked.is_file(), f"{page}: {target}"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", linked.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"{page}: {target}#{anchor}"


def test_the_tiers_table_is_the_tier_and_price_tables() -> None:
    import csv

    from tierscope.demo import BUNDLED

    data = BUNDLED.parent
    section = README.split("## Supported tiers and machines", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("| ")]
    header, *tiers = [r for r in rows if not set(r[0]) <= {"-"}]
    assert header[:4] == ["tier", "master", "workers", "parameter servers"]
    composition: dict[str, dict[str, str]] = {}
    with (data / "tiers.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            composition.setdefault(row["tier"], {})[row["role"]] = f"{row['count']} × {row['machine_type']}"
    units: dict[tuple[str, str], str] = {}
    with (ROOT / "analysis" / "data" / "ml_units.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["kind"] == "tier":
                units[(row["name"], row["effective_date"][:4])] = row["ml_units_per_hour"]
    assert {r[0] for r in tiers} == set(composition)
    for tier, master, workers, ps, per_hour in tiers:
        roles = composition[tier]
        assert [master, workers, ps] == [roles.get(r, "-") for r in ("master", "worker", "ps")], tier
        assert per_hour.split(" / ") == [units.get((tier, year), "-") for year in ("2016", "2018", "2019")], tier


def test_the_library_example_runs(tmp_path: Path, bundled_manifest: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The README's Python block, in a fresh folder, on the bundled manifest as its runs.toml.
    block = README.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    assert '"runs.toml"' in block
    exec(compile(block.replace('"runs.toml"', repr(str(bundled_manifest))), "README.md", "exec"), {})
    assert (tmp_path / "ds" / "steps").is_dir()
    assert "<html" in (tmp_path / "report.html").read_text(encoding="utf-8")[:200].lower()
    # the manifest copied away from its logs (paths relative to its folder): the block stops at its assert,
    # where it wrote an empty report before; 4 runs, 4 missing logs (local, basic, standard_1, premium_1)
    (tmp_path / "away").mkdir()
    monkeypatch.chdir(tmp_path / "away")
    (tmp_path / "away" / "runs.toml").write_bytes(bundled_manifest.read_bytes())
    with pytest.raises(AssertionError, match=r"cannot read local\.log") as stopped:
        exec(compile(block, "README.md", "exec"), {})
    assert len(stopped.value.args[0]) == 4
    assert not (tmp_path / "away" / "report.html").exists()
