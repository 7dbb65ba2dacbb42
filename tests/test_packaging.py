"""What ``pip install .`` installs: one top-level package, ``tierscope``, its modules and bundled
data, and nothing else of the working tree (a ``tierscope-demo/`` output, a scratch folder).

The wheel is built from a copy of the source tree with the venv's own setuptools (no build
isolation, no index), so the test runs offline, as CI's ``pip install '.[test]'`` leaves it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT
from tests.support.checkout import differences, stale_message

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
#: Never copied: environments, caches and build output (large, and not source).
SKIP = {".git", ".venv", "build", "dist", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis"}


def _source_files() -> list[Path]:
    """The working tree's files, relative to its root: git's tracked and untracked-not-ignored
    files when this is a git checkout, else every file outside :data:`SKIP`."""
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
        ).stdout
        return [Path(p) for p in out.decode().split("\0") if p and (ROOT / p).is_file()]
    except (OSError, subprocess.CalledProcessError):
        return [
            p.relative_to(ROOT)
            for p in ROOT.rglob("*")
            if p.is_file() and not (SKIP & set(p.relative_to(ROOT).parts)) and ".egg-info" not in str(p)
        ]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    tree = tmp_path_factory.mktemp("tree")
    for rel in _source_files():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tree / rel)
    # What a working tree may hold beside the source: the README's demo output and a scratch package.
    (tree / "tierscope-demo").mkdir(exist_ok=True)
    (tree / "tierscope-demo" / "report.html").write_text("<html>decoy</html>")
    (tree / "scratch").mkdir()
    (tree / "scratch" / "__init__.py").write_text("")
    (tree / "scratch" / "x.py").write_text("DECOY = True\n")
    out = tmp_path_factory.mktemp("wheel")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "-q",
        "-w",
        str(out),
        ".",
    ]
    done = subprocess.run(cmd, cwd=tree, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("tierscope-*.whl")
    return zipfile.ZipFile(path)


def folder_of(package: str) -> Path:
    """The source folder of ``package``: its mapped room's folder, then the rest of its name."""
    room = max((p for p in PACKAGE_DIRS if package == p or package.startswith(p + ".")), key=len)
    return ROOT / PACKAGE_DIRS[room] / Path(*package[len(room) :].split(".")[1:])


def _dist_info(names: list[str]) -> str:
    (info,) = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
    return info


def test_one_top_level_package_and_nothing_else(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    info = _dist_info(names)
    assert info.startswith("tierscope-")
    assert wheel.read(f"{info}/top_level.txt").decode().split() == ["tierscope"]
    assert [n for n in names if not n.startswith(("tierscope/", f"{info}/"))] == []
    assert not [n for n in names if n.endswith(("/report.html", "/x.py")) or "scratch" in n or "tierscope-demo" in n]


def test_every_module_and_the_bundled_data_are_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())

    def installed(package: str, rel: Path) -> str:
        return "/".join((*package.split("."), *rel.parts))

    expected: set[str] = set()
    for package, folder in PACKAGE_DIRS.items():
        for py in (ROOT / folder).rglob("*.py"):
            if "__pycache__" not in py.parts and (py.parent / "__init__.py").is_file():
                expected.add(installed(package, py.relative_to(ROOT / folder)))
    data = {
        "tierscope": ("data", "*"),  # the 2016 logs, runs.toml, their README, the tier table
        "tierscope.analysis": ("data", "*.csv"),  # the price tables
        "tierscope.reports": ("templates", "*.j2"),
        "tierscope.reports.i18n": (".", "*.json"),
        "tierscope.trainer": (".", "Dockerfile"),  # the image tierscope spec names
    }
    for package, (sub, pattern) in data.items():
        folder = folder_of(package)
        for path in (folder / sub).rglob(pattern):
            if path.is_file():
                expected.add(installed(package, path.relative_to(folder)))
    assert expected - names == set()
    # Counted by hand: 4 logs, runs.toml and README of the 2016 data; the tier table; the machines
    # table and 3 price tables; 1 template; 2 catalogues (en, ja) and the Japanese notes of the tables;
    # the trainer's Dockerfile.
    bundled = [n for n in names if not n.endswith(".py") and not n.startswith("tierscope-")]
    assert sorted(bundled) == [
        "tierscope/analysis/data/machines.csv",
        "tierscope/analysis/data/ml_units.csv",
        "tierscope/analysis/data/prices.csv",
        "tierscope/analysis/data/unit_prices.csv",
        "tierscope/data/cloudml-tiers-2016/README.md",
        "tierscope/data/cloudml-tiers-2016/basic.log",
        "tierscope/data/cloudml-tiers-2016/local.log",
        "tierscope/data/cloudml-tiers-2016/premium_1.log",
        "tierscope/data/cloudml-tiers-2016/runs.toml",
        "tierscope/data/cloudml-tiers-2016/standard_1.log",
        "tierscope/data/tiers.csv",
        "tierscope/reports/i18n/en.json",
        "tierscope/reports/i18n/ja.json",
        "tierscope/reports/i18n/price_notes.ja.json",
        "tierscope/reports/i18n/sources.ja.json",
        "tierscope/reports/templates/report.html.j2",
        "tierscope/trainer/Dockerfile",
    ]


def test_the_packages_list_names_every_package_folder() -> None:
    # A new subpackage (a folder with __init__.py under a mapped room) must be listed, or it
    # would silently be left out of the wheel.
    found = set()
    for package, folder in PACKAGE_DIRS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            if not {"__pycache__", "build"} & set(rel.parts):
                found.add(".".join((package, *rel.parts)))
    assert set(PYPROJECT["tool"]["setuptools"]["packages"]) == found


def test_a_fresh_install_is_this_checkout_and_a_stale_one_is_named(wheel: zipfile.ZipFile, tmp_path: Path) -> None:
    # What tests/conftest.py checks before any test: the wheel's files, installed, are the checkout's.
    wheel.extractall(tmp_path)

    def locate(package: str) -> Path:
        return tmp_path.joinpath(*package.split("."))

    assert differences(ROOT, locate) == []
    # The installed copy as it was before three edits of the working tree.
    (tmp_path / "tierscope" / "dataset" / "store.py").write_text("# the code as it was\n")
    (tmp_path / "tierscope" / "analysis" / "throughput.py").unlink()
    (tmp_path / "tierscope" / "reports" / "removed_since.py").write_text("")
    found = differences(ROOT, locate)
    assert sorted(found) == [
        "analysis/throughput.py is not installed",
        "dataset/store.py differs",
        "reports/removed_since.py is installed but not in the checkout",
    ]
    message = stale_message(ROOT, {"tierscope": tmp_path / "tierscope"}, found)
    assert f"would import tierscope from {tmp_path / 'tierscope'}, not this checkout" in message
    assert "python -m pip install '.[test]'" in message and "pip install -e '.[test]'" in message
