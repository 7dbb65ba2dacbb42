"""``tierscope prices ...``: price rows from the Cloud Billing Catalog, written as a user price file."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import Annotated

import typer

from tierscope.cli.common import App

prices_app = App(help="Vertex AI prices from the Cloud Billing Catalog.", no_args_is_help=True)


@prices_app.command("update")
def update_cmd(
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The price file to write (CSV). Default: prices-YYYY-MM-DD.csv (today, UTC) in the current "
            "folder. Pass it to later commands with --prices FILE.",
            metavar="FILE",
            dir_okay=False,
        ),
    ] = None,
    service_id: Annotated[
        str | None,
        typer.Option(
            "--service-id",
            help="The catalog's service to read (Vertex AI's is C7E2-9256-1C43). Default: the service "
            "whose display name is 'Vertex AI', looked up in the catalog's list of services.",
            metavar="ID",
        ),
    ] = None,
    months: Annotated[
        int,
        typer.Option(
            "--months",
            min=0,
            help="Calendar months of price history to read, this one included: each month's prices are rows "
            "from its first day (and from the day of any change), so that runs of those months are priced as "
            "they were then. 0: today's prices only.",
            metavar="N",
        ),
    ] = 12,
    retry_deadline: Annotated[
        float,
        typer.Option(
            "--retry-deadline",
            min=0,
            help="Seconds to keep retrying a request that meets 429, 5xx or a broken connection.",
            metavar="SECONDS",
        ),
    ] = 120.0,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            help="Another Catalog API endpoint (a test server; anonymous credentials). Also "
            "$TIERSCOPE_CATALOG_ENDPOINT.",
            metavar="URL",
            hidden=True,
        ),
    ] = None,
) -> None:
    """Read the Vertex AI SKUs of the Cloud Billing Catalog (application-default credentials; no
    billing role needed) and write their training prices of the last --months months as a price file
    of dated rows: machine types (their vCPUs and memory), accelerators per accelerator-hour and TPU
    chips per chip-hour, on-demand and spot, per region. The file is written whole or not at all."""
    from tierscope.analysis.billing_catalog import (
        CatalogError,
        RetryPolicy,
        connect,
        find_service,
        month_spans,
        read_skus,
    )
    from tierscope.analysis.prices import to_csv
    from tierscope.analysis.sku_prices import price_rows
    from tierscope.atomic import write_bytes_atomic

    today = datetime.now(UTC).date()
    target = out if out is not None else Path(f"prices-{today.isoformat()}.csv")
    # A short deadline waits less before its first retry, so that it still retries a few times.
    policy = RetryPolicy(initial_s=min(RetryPolicy.initial_s, retry_deadline / 4), deadline_s=retry_deadline)
    reading = connect(endpoint, policy)
    if service_id is None:
        service_id, _ = find_service(reading)
    spans = month_spans(datetime.now(UTC), months)
    skus = chain.from_iterable(read_skus(reading, service_id, span) for span in spans)
    rows, skipped, read = price_rows(skus, service_id, today)
    if not rows:
        reasons = "; ".join(skipped.lines()) or "the service has no SKUs"
        raise CatalogError(
            f"no training prices among the {read:,} SKUs of service {service_id} ({reasons}); nothing was "
            "written: check --service-id"
        )
    write_bytes_atomic(target, to_csv(rows).encode("utf-8"))
    kinds = _kinds(row.resource for row in rows)
    regions = len({row.region for row in rows})
    dates = sorted({row.valid_from for row in rows})
    held = f"dated {dates[0]}" + (f" to {dates[-1]}" if len(dates) > 1 else "")
    print(
        f"wrote {len(rows):,} price rows ({kinds}; {regions:,} region{'s' if regions != 1 else ''}; {held}) "
        f"from {read:,} SKUs of service {service_id} to {target}"
    )
    for line in skipped.lines():
        print(line)
    if reading.retries:
        faults = ", ".join(f"{n} {name}" for name, n in sorted(reading.faults.items()))
        print(f"{reading.retries} request{'s' if reading.retries != 1 else ''} retried ({faults})")
    print(f"use it with --prices {target}")


def _kinds(resources: Iterable[str]) -> str:
    """How many machine types, accelerators and TPU generations ``resources`` name."""
    counts = {"machine type": 0, "accelerator": 0, "TPU generation": 0}
    for resource in set(resources):
        kind = "TPU generation" if resource.startswith("TPU_") else "accelerator" if resource.isupper() else None
        counts[kind or "machine type"] += 1
    return ", ".join(f"{n:,} {kind}{'' if n == 1 else 's'}" for kind, n in counts.items())


def register(app: App) -> None:
    app.add_typer(prices_app, name="prices")
