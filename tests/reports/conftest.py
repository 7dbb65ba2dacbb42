"""One headless chromium for every browser test of the session: starting one costs seconds on a loaded 2-core
runner, and a test needs a fresh tab (its own page, log and screen size), not a fresh browser."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.reports_cdp import Browser, find_chromium


@pytest.fixture(scope="session")
def _chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = find_chromium()
    if binary is None:
        pytest.skip("chromium not installed (Debian: apt-get install chromium; .ci/run does it)")
    with Browser(binary, tmp_path_factory.mktemp("chromium") / "profile") as browser:
        yield browser


@pytest.fixture
def browser(_chromium: Browser) -> Iterator[Browser]:
    """The session's browser; the tabs a test opens are closed after it."""
    before = _chromium.page_ids()
    yield _chromium
    _chromium.close_pages(keep=before)
