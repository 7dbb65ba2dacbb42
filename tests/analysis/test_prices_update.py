"""`tierscope prices update` through the real google-cloud-billing client (REST transport) against a
local server that speaks the Cloud Billing Catalog API (tests/support/fake_catalog_server.py), with the
SKUs of tests/support/catalog_skus.py (their sources are cited there)."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from tests.support.catalog_skus import VERTEX_SKUS, sku
from tests.support.fake_catalog_server import TIMELINE, FakeCatalogServer
from tests.support.network import only_localhost
from tierscope.analysis import machines, prices
from tierscope.analysis.billing_catalog import connect, month_spans, read_skus
from tierscope.analysis.prices import COLUMNS
from tierscope.analysis.sku_prices import (
    ORIGIN,
    VERTEX_AI_SERVICE_ID,
    Skipped,
    family_of,
    known_hardware,
    price_rows,
)
from tierscope.cli import app

runner = CliRunner()
SERVICES = {
    "6F81-5844-456A": "Compute Engine",
    "95FF-2EF5-5EA1": "Cloud Storage",
    "24E6-581D-38E5": "BigQuery",
    VERTEX_AI_SERVICE_ID: "Vertex AI",
}
TODAY = datetime.now(UTC).date().isoformat()


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client must reach only the local server; no endpoint of the environment may redirect it."""
    only_localhost(monkeypatch)
    monkeypatch.delenv("TIERSCOPE_CATALOG_ENDPOINT", raising=False)


def _update(server: FakeCatalogServer, *args: str) -> tuple[int, list[str]]:
    result = runner.invoke(app, ["prices", "update", "--endpoint", server.url, *args])
    return result.exit_code, result.output.strip().splitlines()


def _rows(path: Path) -> dict[tuple[str, str, str], list[dict[str, str]]]:
    """The file's rows by resource, region and pricing, each key's in the file's order."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        rows: dict[tuple[str, str, str], list[dict[str, str]]] = {}
        for r in reader:
            rows.setdefault((r["resource"], r["region"], r["pricing"]), []).append(r)
        return rows


def _month_starts(months: int) -> list[str]:
    """The first days of the last ``months`` calendar months in Los Angeles (this one included), oldest
    first: the days from which an update's rows hold when its SKUs' prices did not change in them."""
    today = datetime.now(ZoneInfo("America/Los_Angeles")).date()
    year, month, firsts = today.year, today.month, []
    for _ in range(months):
        firsts.append(date(year, month, 1).isoformat())
        year, month = (year, month - 1) if month > 1 else (year - 1, 12)
    return firsts[::-1]


def test_update_writes_the_catalogs_training_prices_through_paging_429_503_and_a_cut_body(tmp_path: Path) -> None:
    out = tmp_path / "prices.csv"
    # 3 items a page: the services take 2 pages, the 12 SKUs 4 a month, for 2 months.
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES, page_limit=3) as server:
        server.burst(429, after_pages=1)  # the services' second page
        server.burst(503, after_pages=3)  # the SKUs' second page of the first month
        server.cut_bodies(1, after_pages=4)  # its third page, cut mid-body
        code, lines = _update(server, "--out", str(out), "--months", "2")
        assert code == 0, lines
        skus = [r for r in server.requests if r.path.endswith("/skus")]
    assert server.statuses.count(429) == 1 and server.statuses.count(503) == 1
    assert all(r.params["currencyCode"] == "USD" and "startTime" in r.params and "endTime" in r.params for r in skus)
    # 4 pages a month, the first month's second and third asked twice: a retry asks for the same page again.
    tokens = [r.params.get("pageToken") for r in skus]
    assert len(tokens) == 6 + 4 and tokens[0] is None and tokens[6] is None
    assert tokens[1] == tokens[2] and tokens[3] == tokens[4] and len({*tokens[1:6]}) == 3
    assert [r.params["startTime"] for r in skus[:6]] == [skus[0].params["startTime"]] * 6
    assert skus[6].params["startTime"] > skus[0].params["startTime"]

    rows = _rows(out)
    # Hand-checked (units + nanos / 1e9 -> USD; a machine type is vCPUs x core + GB x RAM):
    # - H100: units 11, nanos 266,033,200 -> 11.2660332 USD per GPU-hour (SKU 3F95-001E-B747).
    # - a3-highgpu-8g: 208 x 0.0293227 = 6.0991216, 1,872 x 0.0025534 = 4.7799648; sum 10.8790864
    #   (the Zenn article's two subtotals, SKUs 2E83-99F1-391A and B045-9255-8314).
    # - a3-highgpu-1g: 26 x 0.0293227 = 0.7623902, 234 x 0.0025534 = 0.5974956; sum 1.3598858.
    # - n1-standard-4: 4 x 0.03635265 = 0.1454106, 15 x 0.00487255 = 0.07308825; sum 0.21849885, the
    #   0.2185 USD/h of the Vertex AI pricing page; n1-standard-8: 0.2908212 + 30 x 0.00487255
    #   (0.1461765) = 0.4369977, in both regions the two N1 SKUs name.
    # - T4: nanos 402,500,000 -> 0.4025 on demand in us-central1 and us-east1; spot 0.161 (us-central1 only).
    # - TPU v5e: units 1, nanos 200,000,000 -> 1.2 per chip-hour.
    expected = {
        ("NVIDIA_H100_80GB", "us-central1", "on-demand"): "11.2660332",
        ("a3-highgpu-8g", "us-central1", "on-demand"): "10.8790864",
        ("a3-highgpu-1g", "us-central1", "on-demand"): "1.3598858",
        ("n1-standard-4", "us-central1", "on-demand"): "0.21849885",
        ("n1-standard-8", "us-central1", "on-demand"): "0.4369977",
        ("n1-standard-8", "us-east1", "on-demand"): "0.4369977",
        ("NVIDIA_TESLA_T4", "us-central1", "on-demand"): "0.4025",
        ("NVIDIA_TESLA_T4", "us-east1", "on-demand"): "0.4025",
        ("NVIDIA_TESLA_T4", "us-central1", "spot"): "0.161",
        ("TPU_V5_LITEPOD", "us-central1", "on-demand"): "1.2",
    }
    # The prices did not change: each key has one row a month, from the month's first day (the SKUs
    # hold from 2026-11-01, so both months read have them), each at the same price.
    months = _month_starts(2)
    assert all([r["valid_from"] for r in found] == months for found in rows.values())
    assert {key: {r["usd_per_hour"] for r in rows[key]} for key in expected} == {k: {v} for k, v in expected.items()}
    h100 = rows[("NVIDIA_H100_80GB", "us-central1", "on-demand")][-1]
    assert h100["source"] == f"Cloud Billing Catalog API, service C7E2-9256-1C43, SKU 3F95-001E-B747, read {TODAY}"
    assert rows[("a3-highgpu-8g", "us-central1", "on-demand")][-1]["source"] == (
        "Cloud Billing Catalog API, service C7E2-9256-1C43, SKUs 2E83-99F1-391A (per vCPU) + B045-9255-8314 "
        f"(per GiB of memory), read {TODAY}"
    )
    # 5 device keys (H100, T4 x 2 regions, spot T4, v5e); every known A3 High type in us-central1 (not
    # a3-megagpu-8g: A3 Mega SKUs price it, and there are none here); every N1 type in 2 regions.
    shapes, _ = known_hardware()
    a3 = [m for m in shapes if family_of(m) == "a3"]
    n1 = [m for m in shapes if family_of(m) == "n1"]
    assert {"a3-highgpu-1g", "a3-highgpu-8g"} <= set(a3) and {"n1-standard-4", "n1-standard-8"} <= set(n1)
    assert len(rows) == 5 + len(a3) + 2 * len(n1)
    assert ("a3-megagpu-8g", "us-central1", "on-demand") not in rows
    assert lines == [
        f"wrote {2 * len(rows)} price rows ({len(a3) + len(n1)} machine types, 2 accelerators, 1 TPU generation; "
        f"2 regions; dated {months[0]} to {months[1]}) from 12 SKUs of service C7E2-9256-1C43 to {out}",
        "skipped 1 SKU for a management fee (billed with flex-start jobs, beside Compute Engine's VM SKUs)",
        "skipped 1 SKU for another Vertex AI product than custom training (prediction, generative AI, storage, ...)",
        "skipped 1 SKU of a usage type other than on-demand or spot (commitments, reservations, ...)",
        "skipped 1 SKU whose description names no machine, accelerator or TPU",
        "3 requests retried (1 ChunkedEncodingError, 1 ServiceUnavailable, 1 TooManyRequests)",
        f"use it with --prices {out}",
    ]


def test_a_price_change_in_a_month_read_is_a_row_from_its_day() -> None:
    # Read through the client as the command does, at a fixed "now" (past: the server refuses a future end):
    # 2 months on 2026-12-06 06:00 UTC (2026-12-05 22:00 PST) are [2026-11-01 00:00 PDT = 07:00 UTC,
    # 2026-12-01 00:00 PST = 08:00 UTC) and [then, 05:55 UTC on the 6th).
    now = datetime(2026, 12, 6, 6, tzinfo=UTC)
    spans = month_spans(now, 2)
    assert [(a.astimezone(UTC).isoformat(), b.astimezone(UTC).isoformat()) for a, b in spans] == [
        ("2026-11-01T07:00:00+00:00", "2026-12-01T08:00:00+00:00"),
        ("2026-12-01T08:00:00+00:00", "2026-12-06T05:55:00+00:00"),
    ]
    t4 = {
        **VERTEX_SKUS[8],
        TIMELINE: [("2026-11-01T08:00:00Z", 0, 450_000_000), ("2026-11-20T08:00:00Z", 0, 402_500_000)],
    }
    core = {
        **VERTEX_SKUS[6],
        TIMELINE: [("2026-10-01T07:00:00Z", 0, 36_352_650), ("2026-12-03T08:00:00Z", 0, 40_000_000)],
    }
    skus = [core, VERTEX_SKUS[7], t4]
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: skus}) as server:
        reading = connect(server.url)
        read = [sku for span in spans for sku in read_skus(reading, VERTEX_AI_SERVICE_ID, span)]
    rows, skipped, count = price_rows(read, VERTEX_AI_SERVICE_ID, now.date())
    assert count == 3 and skipped.reasons == {}
    by_day = {(r.resource, r.region, r.valid_from.isoformat()): r.usd_per_hour for r in rows}
    # The T4 from 0.45 (its start, 2026-11-01 08:00 UTC), 0.4025 from 2026-11-20 and so at December's start.
    assert [(d, p) for (res, reg, d), p in by_day.items() if res == "NVIDIA_TESLA_T4" and reg == "us-east1"] == [
        ("2026-11-01", 0.45),
        ("2026-11-20", 0.4025),
        ("2026-12-01", 0.4025),
    ]
    # n1-standard-4: 4 x 0.03635265 + 15 x 0.00487255 = 0.21849885 at the start of each month (the RAM SKU
    # holds from 2026-11-01 08:00, later than November's start: its row is from that day); from
    # 2026-12-03 the core is 0.04: 4 x 0.04 + 0.07308825 = 0.23308825.
    assert [(d, p) for (res, reg, d), p in by_day.items() if res == "n1-standard-4" and reg == "us-central1"] == [
        ("2026-11-01", 0.21849885),
        ("2026-12-01", 0.21849885),
        ("2026-12-03", 0.23308825),
    ]


def test_a_body_cut_short_is_asked_for_again(tmp_path: Path) -> None:
    out = tmp_path / "prices.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES, page_limit=5) as server:
        server.cut_bodies(2)  # the services page, then its retry: both cut mid-body
        code, lines = _update(server, "--out", str(out))
    assert code == 0, lines
    assert "2 requests retried (2 ChunkedEncodingError)" in lines
    assert sum(map(len, _rows(out).values())) == int(lines[0].split()[1])


def test_the_file_is_a_price_file_of_the_agreed_format(tmp_path: Path) -> None:
    out = tmp_path / "prices.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        assert _update(server, "--service-id", VERTEX_AI_SERVICE_ID, "--out", str(out))[0] == 0
        assert not any(r.path == "/v1/services" for r in server.requests)  # --service-id needs no lookup
    shapes, _ = known_hardware()
    # 12 months read by default; the SKUs hold from 2026-11-01, so no row is older.
    for (resource, region, pricing), found in _rows(out).items():
        assert resource in shapes or resource in ("NVIDIA_H100_80GB", "NVIDIA_TESLA_T4", "TPU_V5_LITEPOD")
        assert region in ("us-central1", "us-east1")
        assert pricing in ("on-demand", "spot")
        assert [r["valid_from"] for r in found] == [m for m in _month_starts(12) if m >= "2026-11"]
        for row in found:
            assert Decimal(row["usd_per_hour"]) > 0
            assert row["source"].startswith("Cloud Billing Catalog API, service C7E2-9256-1C43, SKU")


def test_every_resource_written_is_one_the_machines_table_knows(tmp_path: Path) -> None:
    known = set(machines.catalog())
    out = tmp_path / "prices.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        assert _update(server, "--out", str(out))[0] == 0
    assert {resource for resource, _, _ in _rows(out)} - known == set()


def test_the_file_loads_as_user_prices_that_hold_from_the_skus_effective_date(tmp_path: Path) -> None:
    out = tmp_path / "prices.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        assert _update(server, "--out", str(out))[0] == 0
    assert len(prices.load_file(out)) == sum(map(len, _rows(out).values()))  # every row loads
    table = prices.PriceTable.with_files([out])
    # 208 x 0.0293227 + 1,872 x 0.0025534 = 10.8790864 (see the first test): from 2026-11-01, and again from
    # the first of each later month read.
    row = table.lookup("a3-highgpu-8g", "us-central1", "on-demand", date(2026, 11, 15))
    assert (row.usd_per_hour, row.valid_from, row.origin) == (10.8790864, date(2026, 11, 1), str(out))
    today = table.lookup("a3-highgpu-8g", "us-central1", "on-demand", datetime.now(UTC).date())
    assert (today.usd_per_hour, today.valid_from.isoformat(), today.origin) == (
        10.8790864,
        _month_starts(1)[0],
        str(out),
    )
    before = table.lookup("a3-highgpu-8g", "us-central1", "on-demand", date(2026, 10, 31))
    assert before is None or before.origin == "shipped"


def test_the_next_summary_prices_a_run_from_the_file(tmp_path: Path) -> None:
    from tierscope.collector.collect import collect_runs
    from tierscope.collector.manifest import RunSpec
    from tierscope.dataset.store import Dataset

    # One run today on n1-standard-8 with 1 x T4 (us-central1, on demand), a constant 2 global steps/s.
    log = tmp_path / "t4.log"
    log.write_text(
        "".join(
            f"Train [master/0], step {100 * k}:loss:2.000, accuracy:0.500 ({50 * k:.3f} sec) "
            "2.000 global_steps/s, 2.000 local_steps/s\n"
            for k in range(1, 13)
        )
    )
    hardware = machines.Hardware((machines.pool("chief", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1),))
    today = datetime.now(UTC).date()
    spec = RunSpec(run_id="t4", tier=None, files=[log], date=today, topology=hardware.to_json())
    collect_runs(Dataset(tmp_path / "ds"), [spec])
    out = tmp_path / "prices.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        assert _update(server, "--out", str(out), "--months", "1")[0] == 0
    result = runner.invoke(app, ["summary", "--dataset", str(tmp_path / "ds"), "--prices", str(out), "--json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    # From the SKUs to the run's price, by hand:
    # - TEST-N1-CORE: nanos 36,352,650 -> 0.03635265 USD a vCPU-hour; TEST-N1-RAM: nanos 4,872,550 -> 0.00487255
    #   USD a GiB-hour; n1-standard-8 has 8 vCPUs and 30 GB (analysis/data/machines.csv), so its row is
    #   8 x 0.03635265 + 30 x 0.00487255 = 0.2908212 + 0.1461765 = 0.4369977 USD an hour, from this month's first
    #   day (--months 1); TEST-T4: nanos 402,500,000 -> 0.4025 USD a GPU-hour.
    # - The run: 1 x n1-standard-8 + 1 x T4 = 0.4369977 + 0.4025 = 0.8394977 USD an hour, both rows of the file.
    # - Steps per USD: 2 steps/s x 3,600 s / 0.8394977 USD = 8,575.37.
    [written] = _rows(out)[("n1-standard-8", "us-central1", "on-demand")]
    assert (written["usd_per_hour"], written["valid_from"]) == ("0.4369977", _month_starts(1)[0])
    assert row["usd_per_hour"] == pytest.approx(0.8394977, abs=1e-9)
    assert row["steps_per_usd"] == pytest.approx(7200 / 0.8394977, rel=1e-9)
    assert "SKU TEST-T4" in row["price_rows"] and "SKUs TEST-N1-CORE (per vCPU) + TEST-N1-RAM" in row["price_rows"]
    assert not row["price_stale"]
    # --wide names the rows as the file holds them: resource, region, pricing, price, date and source.
    wide = runner.invoke(
        app, ["summary", "--dataset", str(tmp_path / "ds"), "--prices", str(out), "--wide"], env={"COLUMNS": "1000"}
    )
    assert wide.exit_code == 0, wide.output
    source = f"Cloud Billing Catalog API, service {VERTEX_AI_SERVICE_ID}"
    assert (
        f"1 x n1-standard-8 us-central1 on-demand 0.4369977/h from {_month_starts(1)[0]} ({source}, SKUs "
        f"TEST-N1-CORE (per vCPU) + TEST-N1-RAM (per GiB of memory), read {TODAY})"
    ) in wide.stdout
    assert f"1 x NVIDIA_TESLA_T4 us-central1 on-demand 0.4025/h from {_month_starts(1)[0]} ({source}, SKU TEST-T4" in (
        wide.stdout
    )


def test_the_default_file_is_dated_today_in_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        code, lines = _update(server)
    assert code == 0, lines
    assert (tmp_path / f"prices-{TODAY}.csv").is_file()
    assert lines[-1] == f"use it with --prices prices-{TODAY}.csv"


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (503, "(503 injected permanent fault) after"),
        (429, "(429 injected permanent fault) after"),
    ],
)
def test_a_fault_that_outlasts_the_retries_is_one_line_and_writes_nothing(
    tmp_path: Path, status: int, said: str
) -> None:
    out = tmp_path / "prices.csv"
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        server.fail_always(status)
        code, lines = _update(server, "--out", str(out), "--retry-deadline", "0.5")
        tries, url = len(server.requests), server.url
    assert code == 1
    [line] = lines
    assert line.startswith(
        f"error: the Cloud Billing Catalog API at {url} kept failing while listing the catalog's services {said}"
    )
    assert line.endswith("s: nothing was written; try again later, or raise --retry-deadline")
    assert tries >= 2  # retried at least once
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_bodies_cut_short_without_end_are_one_line(tmp_path: Path) -> None:
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        server.cut_bodies(1000)
        code, lines = _update(server, "--out", str(tmp_path / "p.csv"), "--retry-deadline", "0.5")
        url = server.url
    assert code == 1
    [line] = lines
    assert line.startswith(
        f"error: the Cloud Billing Catalog API's answers at {url} kept arriving cut short while listing"
    )


def test_no_credentials_says_how_to_get_some(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing-key.json"))
    result = runner.invoke(app, ["prices", "update", "--out", str(tmp_path / "p.csv")])
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith("error: no Google Cloud credentials found (File ")
    assert line.endswith(
        ": run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS "
        "(reading the public catalog needs no billing role)"
    )


def test_permission_refused_says_to_enable_the_api(tmp_path: Path) -> None:
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES) as server:
        server.fail_always(403, "Cloud Billing API has not been used in project 123 before or it is disabled.")
        code, lines = _update(server, "--out", str(tmp_path / "p.csv"))
    assert code == 1
    assert lines == [
        "error: the Cloud Billing Catalog API refused listing the catalog's services (Cloud Billing API has not "
        "been used in project 123 before or it is disabled.): enable the Cloud Billing API (`gcloud services "
        "enable cloudbilling.googleapis.com`) in the credentials' quota project, or set one with `gcloud auth "
        "application-default set-quota-project PROJECT`; no billing role is needed"
    ]


def test_no_vertex_ai_service_or_an_unknown_service_id_is_one_line(tmp_path: Path) -> None:
    others = {sid: name for sid, name in SERVICES.items() if name != "Vertex AI"}
    with FakeCatalogServer({}, others, page_limit=2) as server:
        code, lines = _update(server, "--out", str(tmp_path / "p.csv"))
        assert code == 1
        assert lines == [
            "error: the Cloud Billing Catalog lists no service named 'Vertex AI' (3 services read): pass "
            "--service-id (Vertex AI's is C7E2-9256-1C43; `gcloud billing services list` shows them)"
        ]
        code, lines = _update(server, "--service-id", "0000-0000-0000", "--out", str(tmp_path / "p.csv"))
    assert code == 1
    assert lines == [
        "error: the Cloud Billing Catalog has no service '0000-0000-0000' (Service services/0000-0000-0000 not "
        "found.): check --service-id, or leave it out to look up 'Vertex AI' by name"
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_page_token_handed_out_twice_stops_the_read(tmp_path: Path) -> None:
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: VERTEX_SKUS}, SERVICES, page_limit=3) as server:
        server.repeat_token = True
        code, lines = _update(server, "--service-id", VERTEX_AI_SERVICE_ID, "--out", str(tmp_path / "p.csv"))
        served = server.pages_served
    assert code == 1
    [line] = lines
    assert line.startswith("error: the Cloud Billing Catalog API returned the page token ")
    assert served == 2
    assert list(tmp_path.iterdir()) == []


def test_a_service_with_no_training_sku_writes_nothing(tmp_path: Path) -> None:
    gemini = sku("EAC4-305F-1249", "Gemini 3.0 Pro Text Input - Predictions", 0, 2000, unit="count")
    with FakeCatalogServer({VERTEX_AI_SERVICE_ID: [gemini]}, SERVICES) as server:
        code, lines = _update(server, "--out", str(tmp_path / "p.csv"))
    assert code == 1
    assert lines == [
        "error: no training prices among the 1 SKUs of service C7E2-9256-1C43 (skipped 1 SKU for another Vertex AI "
        "product than custom training (prediction, generative AI, storage, ...)); nothing was written: check "
        "--service-id"
    ]
    assert list(tmp_path.iterdir()) == []


def test_skus_of_other_shapes_are_skipped_and_counted() -> None:
    def training(sku_id: str, description: str, **kwargs: object) -> dict:
        return sku(sku_id, f"Vertex AI: Training/Pipelines on {description}", 0, 500_000_000, **kwargs)  # type: ignore[arg-type]

    tiers = training("T", "Nvidia Tesla P4 GPU running in Americas")
    tiers["pricingInfo"][0]["pricingExpression"]["tieredRates"].append(
        {"startUsageAmount": 100, "unitPrice": {"currencyCode": "USD", "units": "0", "nanos": 1}}
    )
    euro = training("E", "Nvidia Tesla P100 GPU running in EMEA")
    euro["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]["currencyCode"] = "EUR"
    skus = [
        training("A", "Nvidia A100 80GB GPU running in Americas"),
        training("B", "Nvidia Tesla A100 GPU running in Americas"),
        training("M1", "A3 Mega Instance Core running in Americas"),
        training("M2", "A3 Mega Instance Ram running in Americas", unit="GiBy.h"),
        training("C", "Custom Instance Core running in Americas"),
        training("R", "Nvidia L4 GPU running in Americas", regions=()),
        training("G", "Nvidia L4 GPU running in Americas", regions=("global",)),
        training("H", "N1 Predefined Instance Ram running in Americas", unit="GiBy.mo"),
        training("O", "M1 Memory-optimized Instance Core running in Americas"),
        tiers,
        euro,
    ]
    rows, skipped, read = price_rows(skus, "S", date(2026, 12, 6))
    assert read == 11
    # A100 80GB and A100 40GB apart, both in the machines table. The table has no A3 Mega machine type, and
    # A3 Mega's SKUs are never taken for A3 High's (a3-highgpu-*): their core and RAM are skipped.
    assert [(r.resource, r.usd_per_hour, r.origin) for r in rows] == [
        ("NVIDIA_A100_80GB", 0.5, ORIGIN),
        ("NVIDIA_TESLA_A100", 0.5, ORIGIN),
    ]
    assert skipped.reasons == {
        Skipped.UNKNOWN_SHAPE: 1,  # a custom machine type's core
        Skipped.NO_REGION: 2,  # none; "global"
        Skipped.UNIT: 1,  # RAM per GiB-month
        Skipped.NO_MACHINES: 3,  # A3 Mega's core and RAM (no machine type); M1's core (no RAM, no machine type)
        Skipped.PRICE: 2,  # two tiers; euros
    }
    # Given a machine type of their own family, A3 Mega's SKUs price it: a3-megagpu-8g has 208 vCPUs and
    # 1,872 GB (cloud.google.com/compute/docs/accelerator-optimized-machines, read 2026-12-06), so
    # 0.5 x 208 + 0.5 x 1,872 = 1,040. Devices not named are not written (a file naming them would not load).
    mega = {"a3-megagpu-8g": (208, Decimal(1872))}
    rows, skipped, _ = price_rows(skus, "S", date(2026, 12, 6), mega, frozenset({"NVIDIA_TESLA_A100"}))
    assert [(r.resource, r.usd_per_hour) for r in rows] == [("NVIDIA_TESLA_A100", 0.5), ("a3-megagpu-8g", 1040.0)]
    assert skipped.reasons[Skipped.UNKNOWN_DEVICE] == 1 and skipped.reasons[Skipped.NO_MACHINES] == 1


def test_the_machine_shapes_are_the_machines_tables() -> None:
    shapes, devices = known_hardware()
    # analysis/data/machines.csv: n1-standard-8 8 vCPUs, 30 GB; a3-highgpu-8g 208, 1,872; the TPU VM
    # ct5lp-hightpu-8t is priced by its chips, and cloud-tpu has no shape: neither is a machine type here.
    assert shapes["n1-standard-8"] == (8, Decimal(30)) and shapes["a3-highgpu-8g"] == (208, Decimal(1872))
    assert "ct5lp-hightpu-8t" not in shapes and "cloud-tpu" not in shapes
    assert {"NVIDIA_TESLA_T4", "NVIDIA_H100_80GB", "TPU_V5_LITEPOD"} <= devices
    assert set(shapes) | devices <= set(machines.catalog())


def test_the_rows_written_read_back_as_the_same_rows() -> None:
    # One writer (prices.to_csv), read back by the loader (prices.parse_csv): the same rows, the origin aside.
    rows, _, _ = price_rows(VERTEX_SKUS, VERTEX_AI_SERVICE_ID, date(2026, 12, 6))
    text = prices.to_csv(rows)
    assert text.splitlines()[0] == ",".join(COLUMNS)
    # n1-standard-8: 8 x 0.03635265 + 30 x 0.00487255 = 0.2908212 + 0.1461765 = 0.4369977, in plain digits.
    assert "n1-standard-8,us-central1,on-demand,0.4369977,2026-11-01," in text
    back = prices.parse_csv(text, "written.csv")
    assert back == [replace(r, origin="written.csv") for r in rows]
