"""Dated, sourced hourly prices of machine types, accelerators and TPU chips, and what a run's pools cost.

One table, whatever its origin: the shipped rows (``data/prices.csv``), the user's files (``--prices
FILE``: CSV, or TOML with the same keys as an array of tables ``[[price]]``), a manifest's ``prices``
key, and the file ``tierscope prices update`` writes from the Cloud Billing Catalog. Columns
(:data:`COLUMNS`):

- ``resource``: a machine type (``n1-standard-8``, ``a2-highgpu-1g``, ``ct5lp-hightpu-8t``), an
  accelerator by Vertex AI's AcceleratorType name (``NVIDIA_TESLA_T4``: per GPU-hour) or a TPU
  generation (``TPU_V5_LITEPOD``: per chip-hour); see :mod:`tierscope.analysis.machines`;
- ``region`` (``us-central1``), ``pricing`` (``on-demand`` or ``spot``), ``usd_per_hour``,
  ``valid_from`` (ISO date: the row holds from then on), ``source`` (the page or API and its date).

A run's hourly price (:func:`quote`) is, over its pools, replicas x (the machine type's row +
accelerators a replica x the accelerator's row). A machine type that bundles GPUs (a2, a3, g2) has
its host priced by its own row and its GPUs by the GPU's row; a TPU VM (ct5lp-...) is priced by its
chips alone (the chip price includes the host). For a date, the newest row on or before it wins;
a user's row wins over a shipped one whenever one of the user's applies. A date before every row of a
resource is priced from its earliest row, and said (a run logged in 2024, priced from the 2026 rows:
a price, flagged, rather than none). A row older than :data:`STALE_DAYS` at the priced date, and
the newest of its kind, is stale: ``tierscope prices update`` fetches newer ones. Either flag makes
a quote stale.
"""

from __future__ import annotations

import csv
import io
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from functools import cache
from importlib.resources import files
from pathlib import Path

from tierscope.analysis import machines
from tierscope.analysis.errors import AnalysisError
from tierscope.analysis.price_notes import STALE_DAYS, Said, english

PRICES_CSV = files("tierscope.analysis") / "data" / "prices.csv"
COLUMNS = ("resource", "region", "pricing", "usd_per_hour", "valid_from", "source")
PRICINGS = ("on-demand", "spot")
#: A Google Cloud region (``us-central1``, ``northamerica-northeast1``); "global" or a multi-region is none.
REGION = re.compile(r"^[a-z]+-[a-z]+\d+$")
#: The legacy price table's areas (:mod:`tierscope.analysis.cost`) and the region each stands for here.
AREA_REGION = {"us": "us-central1", "europe": "europe-west4", "asia": "asia-east1"}
#: The highest hourly price a row may hold: above every Vertex AI machine type, accelerator or TPU chip
#: (a3-megagpu-8g's eight H100s are near 100 USD/h), far below where a sum of them loses its digits.
MAX_USD_PER_HOUR = 10_000.0


class PriceFileError(AnalysisError, ValueError):
    """A price file that cannot be read, or a row of it that is wrong: ``file:line: what; what to do``."""


@dataclass(frozen=True)
class PriceRow:
    """One price row (module doc); ``origin``: the file it came from (``shipped`` for the bundled table,
    the API for rows just read from the Cloud Billing Catalog); it is not a column of the file."""

    resource: str
    region: str
    pricing: str
    usd_per_hour: float
    valid_from: date
    source: str
    origin: str = "shipped"

    @property
    def usd_text(self) -> str:
        """The price in plain decimal digits, the fewest that read back as the same float (``0.4369977``,
        ``1040``): as a price file holds it, so that a row named is a row found in its file."""
        return format(Decimal(repr(self.usd_per_hour)).normalize(), "f")

    def label(self) -> str:
        """``NVIDIA_TESLA_T4 us-central1 on-demand 0.35/h from 2026-07-30 (source)``."""
        return self.said().text()

    def said(self) -> Said:
        """:meth:`label` as a sentence of :mod:`tierscope.analysis.price_notes` (a report writes it in its language)."""
        return Said.of("price_row", resource=self.resource, region=self.region, pricing=self.pricing,
                       usd=self.usd_text, date=self.valid_from, source=self.source)  # fmt: skip


def _row(raw: dict[str, object], where: str, origin: str) -> PriceRow:
    missing = [c for c in COLUMNS if raw.get(c) in (None, "")]
    if missing:
        raise PriceFileError(f"{where}: no {', '.join(missing)}; a price row has {', '.join(COLUMNS)}")
    resource = str(raw["resource"]).strip()
    known = machines.catalog().get(resource) or machines.catalog().get(resource.lower())
    if known is None or known.kind not in ("machine", "gpu", "tpu"):
        try:
            machines.accelerator(resource) if resource.isupper() else machines.machine(resource)
        except machines.UnknownMachineError as exc:
            raise PriceFileError(f"{where}: {exc}") from None
        raise PriceFileError(
            f"{where}: {resource!r} is a legacy machine type, priced in ML units (analysis/data/ml_units.csv)"
        )
    region, pricing = str(raw["region"]).strip(), str(raw["pricing"]).strip()
    if not REGION.match(region):
        raise PriceFileError(f"{where}: region {region!r} is not a Google Cloud region like us-central1")
    if pricing not in PRICINGS:
        raise PriceFileError(f"{where}: pricing {pricing!r}; give one of {', '.join(PRICINGS)}")
    usd = _usd(raw["usd_per_hour"], where)
    valid = raw["valid_from"]
    if isinstance(valid, datetime):  # a TOML date-time: a price holds from a day, not an instant
        raise PriceFileError(
            f"{where}: valid_from {valid.isoformat()} is a date and time; give the day alone, like {valid.date()}"
        )
    if not isinstance(valid, date):
        try:
            valid = date.fromisoformat(str(valid).strip())
        except ValueError:
            raise PriceFileError(f"{where}: valid_from {valid!r} is not an ISO date like 2026-07-30") from None
    return PriceRow(known.name, region, pricing, usd, valid, str(raw["source"]).strip(), origin)


def _usd(value: object, where: str) -> float:
    """A row's ``usd_per_hour``: a finite number from 0 to :data:`MAX_USD_PER_HOUR`, written as one (a TOML
    boolean is not a number), not so small that it reads as 0 when it is not."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        said = str(value).lower() if isinstance(value, bool) else repr(value)
        raise PriceFileError(f"{where}: usd_per_hour {said} is not a number; give the price like 0.35")
    try:
        exact = Decimal(str(value).strip())
        usd = float(exact)
    except (ArithmeticError, ValueError):
        raise PriceFileError(f"{where}: usd_per_hour {value!r} is not a number; give the price like 0.35") from None
    if not exact.is_finite() or not 0 <= exact <= Decimal(repr(MAX_USD_PER_HOUR)):
        raise PriceFileError(
            f"{where}: usd_per_hour {value} is not a price; give a number from 0 to {MAX_USD_PER_HOUR:,.0f} USD an hour"
        )
    if usd == 0 and exact != 0:
        raise PriceFileError(
            f"{where}: usd_per_hour {value} is too small to be a price (it reads as 0); write 0 for a free resource"
        )
    return usd


def _no_conflicts(rows: list[PriceRow], wheres: list[str]) -> list[PriceRow]:
    """``rows`` when no two price the same resource, region, pricing and day differently (which one
    counted would be an accident of order). Raises :class:`PriceFileError` naming both places."""
    seen: dict[tuple[str, str, str, date], int] = {}
    for i, r in enumerate(rows):
        key = (r.resource, r.region, r.pricing, r.valid_from)
        first = seen.setdefault(key, i)
        if first != i and rows[first].usd_per_hour != r.usd_per_hour:
            raise PriceFileError(
                f"{wheres[i]}: {r.resource} {r.region} {r.pricing} from {r.valid_from} costs {r.usd_text}/h here "
                f"but {rows[first].usd_text}/h at {wheres[first]}; keep one of the two rows"
            )
    return rows


def parse_csv(text: str, name: str, origin: str | None = None) -> list[PriceRow]:
    """The rows of a price CSV ``text`` (``name`` for errors). Raises :class:`PriceFileError`."""
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))
    absent = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if absent:
        raise PriceFileError(f"{name}:1: no column {', '.join(absent)}; a price file has {','.join(COLUMNS)}")
    rows, wheres = [], []
    for raw in reader:
        wheres.append(f"{name}:{reader.line_num}")
        rows.append(_row(raw, wheres[-1], origin or name))
    return _no_conflicts(rows, wheres)


def to_csv(rows: Iterable[PriceRow]) -> str:
    """A price file's text, as :func:`parse_csv` reads it back: the header :data:`COLUMNS`, then one line
    a row (RFC 4180 quoting), each price as :attr:`PriceRow.usd_text`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        writer.writerow([r.resource, r.region, r.pricing, r.usd_text, r.valid_from.isoformat(), r.source])
    return out.getvalue()


def parse_toml(text: str, name: str) -> list[PriceRow]:
    """The rows of a price TOML ``text``: ``[[price]]`` tables with :data:`COLUMNS` as keys."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceFileError(f"{name}: not TOML: {exc}") from None
    return rows_of(doc.get("price"), name)


def rows_of(tables: object, name: str) -> list[PriceRow]:
    """Price rows from a list of tables (a TOML ``[[price]]`` array, a manifest's ``prices``); each row is
    named ``name:price[N]`` (1-based) in errors."""
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise PriceFileError(f"{name}: give the prices as an array of tables [[price]] with {', '.join(COLUMNS)}")
    wheres = [f"{name}:price[{i}]" for i in range(1, len(tables) + 1)]
    return _no_conflicts([_row(t, w, name) for t, w in zip(tables, wheres, strict=True)], wheres)


def load_file(path: Path) -> list[PriceRow]:
    """A user's price file: CSV, or TOML (``.toml``). Raises :class:`PriceFileError` naming ``file:line``."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (Excel's UTF-8 CSV) is no column
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceFileError(f"cannot read the price file {path}: {exc}") from None
    return parse_toml(text, str(path)) if path.suffix.lower() == ".toml" else parse_csv(text, str(path))


@cache
def shipped() -> tuple[PriceRow, ...]:
    """The bundled rows (``data/prices.csv``)."""
    return tuple(parse_csv(PRICES_CSV.read_text(encoding="utf-8"), "analysis/data/prices.csv", "shipped"))


@dataclass
class PriceTable:
    """The rows a pass prices with: the shipped ones and the user's (:meth:`lookup` says which wins)."""

    user: tuple[PriceRow, ...] = ()
    base: tuple[PriceRow, ...] = field(default_factory=shipped)

    @classmethod
    def with_files(cls, paths: Iterable[Path] = (), extra: Iterable[PriceRow] = ()) -> PriceTable:
        rows: list[PriceRow] = list(extra)
        for path in paths:
            rows.extend(load_file(path))
        return cls(tuple(rows))

    def lookup(self, resource: str, region: str, pricing: str, on: date) -> PriceRow | None:
        """The row that prices ``resource`` in ``region`` at ``pricing`` on ``on``: the newest user row on or
        before it, else the newest shipped one, else (every row starts after ``on``) the earliest row of
        the two, the user's first; None: no row at all."""
        for rows in (self.user, self.base):
            fit = [r for r in self._of(rows, resource, region, pricing) if r.valid_from <= on]
            if fit:
                return max(fit, key=lambda r: (r.valid_from, rows.index(r)))
        for rows in (self.user, self.base):
            later = self._of(rows, resource, region, pricing)
            if later:
                return min(later, key=lambda r: (r.valid_from, rows.index(r)))
        return None

    def regions_of(self, resource: str, pricing: str) -> list[str]:
        """The regions where a row prices ``resource`` at ``pricing``, sorted (for a run priced where none does)."""
        return sorted({r.region for r in (*self.user, *self.base) if r.resource == resource and r.pricing == pricing})

    def superseded(self, row: PriceRow) -> bool:
        """Whether the rows ``row`` came with hold a newer one of its resource, region and pricing: then
        ``row`` is known to have held up to that one, however old it is."""
        rows = self.user if row in self.user else self.base
        return any(r.valid_from > row.valid_from for r in self._of(rows, row.resource, row.region, row.pricing))

    @staticmethod
    def _of(rows: tuple[PriceRow, ...], resource: str, region: str, pricing: str) -> list[PriceRow]:
        return [r for r in rows if r.resource == resource and r.region == region and r.pricing == pricing]


@dataclass(frozen=True)
class UsedRow:
    """A row a quote used, ``quantity`` times (machines, or devices), whether it was stale then, and
    whether it starts after the priced date (``early``: no row of that date exists)."""

    row: PriceRow
    quantity: int
    stale: bool
    early: bool = False


@dataclass(frozen=True)
class Quote:
    """What a run's hardware costs an hour on ``on`` in the region(s) priced: ``usd_per_hour`` (None: a
    resource had no row, ``lacking`` says which), and the rows used."""

    on: date
    usd_per_hour: float | None
    rows: tuple[UsedRow, ...]
    lacking: tuple[Said, ...] = ()

    @property
    def missing(self) -> str | None:
        """Which resources had no row and what to do, in English; None: every one had a row."""
        return english(self.missing_said())

    def missing_said(self) -> list[Said]:
        """:attr:`missing` as the sentence of :mod:`tierscope.analysis.price_notes` (none: nothing lacked)."""
        return [Said.of("missing", resources=self.lacking)] if self.lacking else []

    def said(self) -> list[Said]:
        """The price note's sentences: the resources lacking a row, else :meth:`stale_said`."""
        return self.missing_said() or self.stale_said()

    @property
    def stale(self) -> bool:
        """A row older than :data:`STALE_DAYS`, or one from after the priced date."""
        return any(u.stale or u.early for u in self.rows)

    def sources(self) -> str:
        """Every row used, one ``quantity x label`` each, ``; ``-joined."""
        return english(self.rows_said()) or ""

    def rows_said(self) -> list[Said]:
        """:meth:`sources`' rows as sentences of :mod:`tierscope.analysis.price_notes`."""
        return [Said.of("price_row.used", quantity=u.quantity, row=u.row.said()) for u in self.rows]

    def stale_note(self) -> str | None:
        """The sentences flagging the rows from after the priced date and the rows older than
        :data:`STALE_DAYS` at it, each with its remedy, in English; None: neither."""
        return english(self.stale_said())

    def stale_said(self) -> list[Said]:
        """:meth:`stale_note`'s sentences (:mod:`tierscope.analysis.price_notes`)."""
        said = []
        early = [u.row for u in self.rows if u.early]
        if early:
            rows = tuple(Said.of("early.item", resource=r.resource, date=r.valid_from) for r in early)
            said.append(Said.of("early", rows=rows, on=self.on))
        old = [u.row for u in self.rows if u.stale]
        if old:
            rows = tuple(
                Said.of("stale.item", resource=r.resource, date=r.valid_from, days=(self.on - r.valid_from).days)
                for r in old
            )
            said.append(Said.of("stale", limit=STALE_DAYS, on=self.on, rows=rows))
        return said


#: What the shipped rows' sources name (docs/machines-and-prices.md): Compute Engine's catalog, whose on-demand
#: list prices are below what Vertex AI custom training bills for the same machines.
COMPUTE_ENGINE = "Compute Engine"


def on_compute_engine(price_rows: Iterable[str | None]) -> bool:
    """Whether any of ``price_rows`` (the rows behind a price, as the summary and the plan name them) is a
    Compute Engine list price: then a price shown is below a Vertex AI custom training job's bill."""
    return any(COMPUTE_ENGINE in rows for rows in price_rows if rows)


def quote(hardware: machines.Hardware, on: date, region: str, table: PriceTable) -> Quote:
    """The hourly price of ``hardware`` on ``on`` (module doc); ``region``: where a pool names none."""
    used: list[UsedRow] = []
    total = 0.0
    missing: list[Said] = []
    for p in hardware.pools:
        where = p.region or region
        pricing = "spot" if p.spot else "on-demand"
        spec = machines.catalog()[p.machine_type]
        tpu_vm = spec.kind == "machine" and spec.chips is not None
        parts: list[tuple[str, int]] = []
        if not tpu_vm and p.machine_type != "cloud-tpu":
            parts.append((p.machine_type, p.replicas))
        if p.accelerator and p.devices:
            # TPU chips are priced a chip; GPUs a GPU (devices is the same count for them)
            parts.append((p.accelerator, p.devices))
        for resource, quantity in parts:
            row = table.lookup(resource, where, pricing, on)
            if row is None:
                item = Said.of("missing.item", resource=resource, region=where, pricing=pricing, on=on)
                elsewhere = table.regions_of(resource, pricing)
                if elsewhere:  # a TPU generation sold in a few regions: the run may have run in one of them
                    item = Said.of("missing.elsewhere", item=item, regions=tuple(elsewhere), region=elsewhere[0])
                missing.append(item)
                continue
            old = (on - row.valid_from).days > STALE_DAYS and not table.superseded(row)
            used.append(UsedRow(row, quantity, old, early=row.valid_from > on))
            total += quantity * row.usd_per_hour
    if missing:
        return Quote(on, None, tuple(used), tuple(missing))
    return Quote(on, total, tuple(used))


def region_of(area_or_region: str) -> str:
    """A Google Cloud region for ``--region``: itself, or the region standing for a legacy area (``us``)."""
    return AREA_REGION.get(area_or_region, area_or_region)


def area_of(region: str) -> str:
    """The legacy price table's area (``us``, ``europe``, ``asia``) of a region or area."""
    if region in AREA_REGION:
        return region
    head = region.split("-")[0]
    return {"europe": "europe", "asia": "asia", "australia": "asia", "me": "europe"}.get(head, "us")
