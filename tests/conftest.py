from __future__ import annotations

from importlib.resources import as_file
from pathlib import Path

import pytest

from collector.collect import collect_runs
from collector.dataset import Dataset
from collector.manifest import load_manifest
from tierscope.demo import BUNDLED


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
