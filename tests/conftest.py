"""Fixtures shared by every test.

The tests import the installed package (``pip install '.[test]'``): the package root lives in
``src/tierscope`` and the rooms are mapped into it by ``pyproject.toml``, so the repository root
that ``python -m pytest`` puts on ``sys.path`` holds no ``tierscope`` to shadow it.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import as_file
from pathlib import Path

import pytest

from tests.support.gcs_emulator import Emulator, running_emulator
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import load_manifest
from tierscope.dataset.store import Dataset
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


@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[Emulator]:
    """A real Cloud Storage emulator on 127.0.0.1 for the session (tests/support/gcs_emulator.py).

    Each test makes its own bucket (``gcs_emulator.bucket(name)``) so tests never see each
    other's objects. Skips, saying why, where gcp-storage-emulator is not installed.
    """
    pytest.importorskip("gcp_storage_emulator", reason="gcp-storage-emulator is not installed (pip install '.[test]')")
    with running_emulator() as emulator:
        yield emulator
