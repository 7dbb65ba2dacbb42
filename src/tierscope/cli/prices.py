"""``tierscope prices ...``: the price rows a command prices with (``list``), and price rows from the Cloud
Billing Catalog, written as a user price file (``update``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from itertools import chain
from pathlib import Path
from typing import Annotated

import typer

from tierscope.cli.common import (
    App,
    FormatChoice,
    FormatOpt,
    JsonOpt,
    PricesOpt,
    WideOpt,
    output_format,
    seconds_option,
)

prices_app = App(
    help="Price rows: list them, or fetch Vertex AI's from the Cloud Billing Catalog.",
    no_args_is_help=True,
)


@prices_app.command("list")
def list_cmd(
    resource: Annotated[
        list[str] | None,
        typer.Option(
            "--resource",
            help="Only the rows pricing this machine type, accelerator or TPU slice (a2-highgpu-8g: its host and "
            "its A100s; v5litepod-8: its chips); repeat for more.",
            metavar="NAME",
        ),
    ] = None,
    region: Annotated[
        str | None, typer.Option("--region", help="Only this Google Cloud region (us-central1).", metavar="REGION")
    ] = None,
    prices: PricesOpt = None,
    fmt: FormatOpt = FormatChoice.table,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """List the price rows `summary`, `report` and `recommend` price with: the shipped ones and those of
    --prices FILE, one a line (resource, region, pricing, USD an hour, the date it holds from, where it is
    from, its source). For a date, the newest row on or before it prices; a row of --prices wins over a
    shipped one (docs/machines-and-prices.md)."""
    from tierscope.analysis.prices import PriceTable
    from tierscope.cli.tables import Column, Grid, emit

    fmt = output_format(fmt, as_json)
    table = PriceTable.with_files(prices or [])
    wanted = set().union(*(_priced_as(name) for name in resource)) if resource else None
    rows = [
        r
        for r in (*table.user, *table.base)
        if (wanted is None or r.resource in wanted) and (region is None or r.region == region)
    ]
    rows.sort(key=lambda r: (r.resource, r.region, r.pricing, r.valid_from))
    grid = Grid(
        [Column("resource", "name"), Column("region", "label"), Column("pricing", "label"), Column("USD/h"),
         Column("valid from", "label"), Column("from", "label", wide=True), Column("source", "text")],
        title="price rows (USD per machine-, GPU- or TPU chip-hour)",
    )  # fmt: skip
    for r in rows:
        grid.add(r.resource, r.region, r.pricing, r.usd_text, str(r.valid_from), r.origin, r.source)
    if not rows:
        said = " or ".join(sorted(wanted)) if wanted else "any resource"
        where = f" in {region}" if region else ""
        grid.notes.append(f"no price row for {said}{where}: add one with --prices FILE")
    if not resource:
        grid.notes.append(
            "legacy tiers and machine types are priced in ML units (analysis/data/ml_units.csv, unit_prices.csv), "
            "not by these rows"
        )
    records = [
        {"resource": r.resource, "region": r.region, "pricing": r.pricing, "usd_per_hour": r.usd_per_hour,
         "valid_from": r.valid_from.isoformat(), "origin": r.origin, "source": r.source}
        for r in rows
    ]  # fmt: skip
    emit(fmt, grid, records, wide=wide)


def _priced_as(name: str) -> set[str]:
    """The resources whose rows price ``name``: itself, and the accelerator or chips it comes with. Raises
    :class:`tierscope.analysis.machines.UnknownMachineError` (a usage error) for a name it does not know."""
    from tierscope.analysis import machines

    spec = machines.catalog().get(name) or machines.catalog().get(name.lower()) or machines.catalog().get(name.upper())
    if spec is None:
        if name.isupper():
            spec = machines.accelerator(name)
        else:
            spec = machines.tpu_slice(name) if name.lower().startswith("v") else machines.machine(name)
    if spec.kind == "legacy":
        raise typer.BadParameter(
            f"{spec.name} is a legacy machine type, priced in ML units (analysis/data/ml_units.csv)",
            param_hint="--resource",
        )
    return {spec.name, *([spec.accelerator] if spec.accelerator else [])}


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
        seconds_option(
            "Seconds to keep retrying a request that meets 429, 5xx or a broken connection.", "--retry-deadline"
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
