"""Fixtures shared by every test, and the guard that makes the tests import the installed package.

``python -m pytest`` puts the working directory first on ``sys.path``. From the repository root
that would make ``import tierscope`` find the ``tierscope/`` folder of the working tree, which
holds only the CLI and the public API (the rooms are mapped into the package by
``pyproject.toml``), and it would make the rooms importable under their folder names. So the
repository root is taken off ``sys.path`` while tierscope is imported, so the tests run against
what ``pip install`` installed (the working tree itself under an editable install); it goes back
at the end, after site-packages, for ``benchmarks`` (a folder of scripts, not installed).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != ROOT]
import tierscope  # noqa: E402, F401  (imported here, with the root off the path)

sys.path.append(str(ROOT))

from importlib.resources import as_file  # noqa: E402

import pytest  # noqa: E402

from tierscope.collector.collect import collect_runs  # noqa: E402
from tierscope.collector.manifest import load_manifest  # noqa: E402
from tierscope.dataset.store import Dataset  # noqa: E402
from tierscope.demo import BUNDLED  # noqa: E402


@pytest.fixture(scope="session")
def bundled_manifest() -> Path:
    with as_file(BUNDLED / "runs.toml") as path:
        return Path(path)


@pytest.fixture(scope="session")
def dataset_2016(tmp_path_factory: pytest.TempPathFactory, bundled_manifest: Path) -> Dataset:
    """The 2016 experiment collected once for the session (tests must not write to it)."""
    dataset = Dataset(tmp_path_factory.mktemp("ds2016") / "dataset")
    collect_runs(dataset, load_manifest(bundled_manifest))
    return dataset
