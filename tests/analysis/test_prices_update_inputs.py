"""Hostile answers of the Cloud Billing Catalog to ``tierscope prices update``: page tokens without end,
bodies that arrive whole but are not SKUs, a 400, negative prices and SKU ids with control characters.
Each is a one-line error that writes nothing, or a SKU skipped and counted."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.support.catalog_skus import VERTEX_SKUS, sku
from tests.support.fake_catalog_server import FakeCatalogServer
from tests.support.network import only_localhost
from tierscope.analysis import billing_catalog
from tierscope.analysis.billing_catalog import CatalogError
from tierscope.analysis.sku_prices import VERTEX_AI_SERVICE_ID, Skipped, price_rows
from tierscope.cli import app

SERVICES = {VERTEX_AI_SERVICE_ID: "Vertex AI"}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    only_localhost(monkeypatch)
    monkeypatch.delenv("TIERSCOPE_CATALOG_ENDPOINT", raising=False)


def _update(server: FakeCatalogServer, out: Path, *args: str) -> tuple[int, list[str]]:
    told = CliRunner().invoke(
        app,
        ["prices", "update", "--endpoint", server.url, "--service-id", VERTEX_AI_SERVICE_ID, "--out", str(out), *args],
    )
    return told.exit_code, told.output.strip().splitlines()


def test_fresh_page_tokens_without_end_stop_the_read(tmp_path: Path) -> None:
    out = tmp_path / "p.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES, page_limit=3) as server:
        server.endless_tokens = True
        code, lines = _update(server, out, "--months", "0")
        served = server.pages_served
    assert code == 1
    assert lines == [
        f"error: the Cloud Billing Catalog API kept handing out next pages ({billing_catalog.MAX_EMPTY_PAGES} empty "
        "pages in a row, each with a new page token); stopped reading (nothing was written): try again later"
    ]
    # the SKUs fill ceil(len / 3) pages, then 50 empty ones
    assert served == -(-len(VERTEX_SKUS) // 3) + billing_catalog.MAX_EMPTY_PAGES
    assert not out.exists()


class _Page:
    def __init__(self, number: int) -> None:
        self.skus = [number]
        self.next_page_token = f"token-{number}"


class _EndlessPager:
    """A pager whose every page holds a SKU and names a new token: pages without end."""

    @property
    def pages(self) -> Any:
        number = 0
        while True:
            number += 1
            yield _Page(number)


def test_pages_beyond_the_cap_stop_the_read() -> None:
    read = 0
    with pytest.raises(CatalogError, match=r"kept handing out next pages \(1,000 pages, each with a new page token\)"):
        for _ in billing_catalog._pages(_EndlessPager()):
            read += 1
    assert read == billing_catalog.MAX_PAGES == 1000


def _units(value: object) -> Any:
    def mangle(payload: dict[str, Any]) -> None:
        for item in payload.get("skus", []):
            for info in item["pricingInfo"]:
                info["pricingExpression"]["tieredRates"][0]["unitPrice"]["units"] = value

    return mangle


@pytest.mark.parametrize("units", ["1.5", "junk", 1.5, [], "NaN"])
def test_a_whole_body_that_is_not_skus_is_said_and_not_retried(tmp_path: Path, units: object) -> None:
    out = tmp_path / "p.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        server.mangle = _units(units)
        code, lines = _update(server, out, "--months", "0", "--retry-deadline", "5")
        asked, url = len(server.requests), server.url
    assert code == 1
    [line] = lines
    assert line.startswith(
        f"error: the Cloud Billing Catalog API at {url} answered with a body that is JSON but not SKUs as the API "
        f"defines them while reading the SKUs of service {VERTEX_AI_SERVICE_ID} (Failed to parse skus field"
    )
    assert line.endswith("): not a network fault; nothing was written: try again later, or check the endpoint")
    assert "cut short" not in line and asked == 1  # the same answer would come again: asked once
    assert not out.exists()


def test_a_400_is_a_refusal_not_a_network_fault(tmp_path: Path) -> None:
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        server.fail_always(400, "Request contains an invalid argument.")
        code, lines = _update(server, tmp_path / "p.csv", "--months", "0")
        url = server.url
    assert code == 1
    assert lines == [
        f"error: the Cloud Billing Catalog API at {url} refused the request while reading the SKUs of service "
        f"{VERTEX_AI_SERVICE_ID} (400 Request contains an invalid argument.): nothing was written; check "
        "--service-id and --months, or try again later"
    ]


def test_negative_prices_and_odd_ids_are_skipped_and_counted() -> None:
    t4 = "Vertex AI: Training/Pipelines on Nvidia Tesla T4 GPU running in Americas"
    good = sku("GOOD-T4", t4, 0, 402_500_000)
    negative = sku("NEG-T4", t4.replace("T4", "V100"), -2, 0)
    mixed = sku("MIX-T4", t4.replace("T4", "P100"), 1, -500_000_000)
    both_negative = sku("NEG2-T4", t4.replace("T4", "P4"), -1, -500_000_000)
    fraction = sku("FRAC-T4", t4.replace("Tesla T4", "L4"), 0, 0)
    fraction["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]["units"] = "1.5"
    escape = sku("AB\x1b[31mC", t4.replace("T4", "K80"), 0, 450_000_000)
    newline = sku("ABC\n", t4.replace("Tesla T4", "A100"), 2, 0)
    rows, skipped, read = price_rows(
        [good, negative, mixed, both_negative, fraction, escape, newline], "S", date(2026, 12, 6)
    )
    # only the T4 at 0 + 402,500,000 nanos = 0.4025 USD/h is a row
    assert [(r.resource, r.usd_per_hour) for r in rows] == [("NVIDIA_TESLA_T4", 0.4025)]
    assert skipped.reasons == {Skipped.NEGATIVE: 4, Skipped.BAD_ID: 2}
    assert read == 7
    assert "skipped 4 SKUs with a negative or malformed price" in skipped.lines()[0]
