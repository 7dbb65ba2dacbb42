"""Fixtures shared by every test, after a check that the tests test this checkout.

The tests import the installed package (``pip install '.[test]'``): the package root lives in
``src/tierscope`` and the rooms are mapped into it by ``pyproject.toml``, so the repository root
that ``python -m pytest`` puts on ``sys.path`` holds no ``tierscope`` to shadow it. An installed
copy older than the working tree stops the run before any test, naming what differs and the
reinstall command (:mod:`tests.support.checkout`); an editable install is the tree itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.resources import as_file
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from tests.support import ROOT
from tests.support.checkout import differences, imported_dir, package_dirs, stale_message
from tests.support.gcs_emulator import Emulator, running_emulator

# Hypothesis' 200 ms deadline per example measures the machine's load, not our code: on a 2-core
# runner shared with other jobs a pure function missed it (a deadline failure is no finding here;
# speed is measured in benchmarks/).
settings.register_profile("tierscope", deadline=None)
settings.load_profile("tierscope")

if TYPE_CHECKING:
    from tierscope import Dataset


def pytest_configure(config: pytest.Config) -> None:
    # Before any test module imports tierscope (this module imports it only in its fixtures): a
    # stale copy would fail there with an unrelated error, or pass tests the working tree fails.
    stale = differences(ROOT)
    if stale:
        raise pytest.UsageError(stale_message(ROOT, {p: imported_dir(p) for p in package_dirs(ROOT)}, stale))


@pytest.fixture(scope="session")
def bundled_manifest() -> Path:
    from tierscope.demo import BUNDLED

    with as_file(BUNDLED / "runs.toml") as path:
        return Path(path)


@pytest.fixture(scope="session")
def dataset_2016(tmp_path_factory: pytest.TempPathFactory, bundled_manifest: Path) -> Dataset:
    """The 2016 experiment collected once for the session (tests must not write to it)."""
    from tierscope import Dataset, collect_runs, load_manifest

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
