"""Vertex AI custom-training SKUs of the Cloud Billing Catalog, read as price rows.

The rows are :class:`tierscope.analysis.prices.PriceRow`, written with
:func:`tierscope.analysis.prices.to_csv` (the price file format, ``resource,region,pricing,
usd_per_hour,valid_from,source``, that ``--prices FILE`` loads), each one's source naming its SKUs
and the day they were read:

- a Vertex AI machine type of the machines table (``n1-standard-8``: its vCPUs and memory,
  accelerators not included), an accelerator by the Vertex API's AcceleratorType name
  (``NVIDIA_TESLA_T4``, per accelerator-hour), or a TPU generation (``TPU_V5_LITEPOD``, per chip-hour).

The catalog prices a machine type by its parts: one SKU per vCPU-hour and one per GiB-hour of
memory of its family ("Vertex AI: Training/Pipelines on N1 Predefined Instance Core running in
Americas", "... on A3 Instance RAM in Iowa"), so a machine type's row is ``vCPUs x core price +
memory x RAM price``, its vCPUs and memory from the machines table (``analysis/data/machines.csv``,
:func:`known_hardware`). Prices are summed as exact decimals and become the row's float once.
Accelerators ("Vertex AI: Training/Pipelines on NVIDIA H100 80GB in Iowa") and TPU chips are one
SKU each. What these look like is documented in ``docs/prices-update.md`` with its public sources.

Management-fee SKUs ("Vertex AI: Training/Pipelines management fee on ...") are left out: they are
billed with flex-start (Dynamic Workload Scheduler) jobs beside Compute Engine's own VM SKUs, not
with an on-demand or spot job, whose Training/Pipelines SKUs already carry Vertex AI's share.

Everything else (prediction, generative AI, storage, commitments, SKUs of an unknown shape) is
skipped and counted by reason (:class:`Skipped`); nothing here raises for a SKU.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from tierscope.analysis import machines
from tierscope.analysis.prices import REGION, PriceRow

#: The Vertex AI service: its display name in the catalog, and its id (the catalog's
#: services list; also e.g. github.com/joakimcarlsson/model-sync, vertexai catalog, 2026).
VERTEX_AI_DISPLAY_NAME = "Vertex AI"
VERTEX_AI_SERVICE_ID = "C7E2-9256-1C43"

#: usageType -> the price file's ``pricing`` (:data:`tierscope.analysis.prices.PRICINGS`).
PRICING = {"OnDemand": "on-demand", "Preemptible": "spot"}
#: What rows read here carry as their ``origin`` until a file holds them.
ORIGIN = "Cloud Billing Catalog API"
#: The catalog's usage units per hour, and per GiB-hour of memory (some families say GBy.h).
HOUR_UNITS = frozenset({"h"})
MEMORY_HOUR_UNITS = frozenset({"GiBy.h", "GBy.h"})

#: What a SKU id may be to be written into a price file's source (the catalog's are like ``2E83-99F1-391A``).
SKU_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}")

#: Machine-type series priced by SKUs of their own, named by a word of the description ("A3 Mega
#: Instance Core"): a family key of their own, so their price is never taken for the plain family's.
VARIANTS = ("mega", "ultra", "edge")


def family_of(machine_type: str) -> str:
    """The family whose core and RAM SKUs price ``machine_type``: ``n1-standard-8`` -> ``n1``,
    ``a3-megagpu-8g`` -> ``a3-mega``, ``a2-ultragpu-1g`` -> ``a2-ultra``."""
    family, _, rest = machine_type.partition("-")
    variant = next((v for v in VARIANTS if rest.startswith(v)), None)
    return f"{family}-{variant}" if variant else family


def _patterns(*pairs: tuple[str, str]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), name) for pattern, name in pairs)


# An accelerator's name in a SKU description -> the Vertex API's AcceleratorType. The more specific
# names come first ("A100 80GB" before "A100", "H100 Mega" before "H100").
_ACCELERATORS = _patterns(
    (r"\ba100\b(?=.*\b80\s*gb\b)", "NVIDIA_A100_80GB"),
    (r"\ba100\b", "NVIDIA_TESLA_A100"),
    (r"\bh100\b(?=.*\bmega\b)", "NVIDIA_H100_MEGA_80GB"),
    (r"\bh100\b", "NVIDIA_H100_80GB"),
    (r"\bh200\b", "NVIDIA_H200_141GB"),
    (r"\bgb200\b", "NVIDIA_GB200"),
    (r"\bb200\b", "NVIDIA_B200"),
    (r"\bl4\b", "NVIDIA_L4"),
    (r"\bt4\b", "NVIDIA_TESLA_T4"),
    (r"\bv100\b", "NVIDIA_TESLA_V100"),
    (r"\bp100\b", "NVIDIA_TESLA_P100"),
    (r"\bp4\b", "NVIDIA_TESLA_P4"),
    (r"\bk80\b", "NVIDIA_TESLA_K80"),
)
_TPUS = _patterns(
    (r"\btpu[\s-]*v5[\s-]*(?:e|lite(?:pod)?)\b", "TPU_V5_LITEPOD"),
    (r"\btpu[\s-]*v5p\b", "TPU_V5P"),
    (r"\btpu[\s-]*(?:v6e|trillium)\b", "TPU_V6E"),
    (r"\btpu[\s-]*v4\b", "TPU_V4_POD"),
    (r"\btpu[\s-]*v3\b", "TPU_V3"),
    (r"\btpu[\s-]*v2\b", "TPU_V2"),
)
_FAMILY = re.compile(r"\b(n1|n2d|n2|n4|e2|c2d|c2|c3d|c3|a2|a3|a4|g2|m1|m2|m3)\b")
_CORE = re.compile(r"\b(?:core|cpu|vcpu)\b")
_RAM = re.compile(r"\b(?:ram|memory)\b")


@dataclass
class Skipped:
    """SKUs left out, by reason (a phrase that follows "SKUs ..."); a SKU counts once a reason, however
    many months of its pricing were read."""

    skus: dict[str, set[str]] = field(default_factory=dict)

    NOT_TRAINING = "for another Vertex AI product than custom training (prediction, generative AI, storage, ...)"
    MANAGEMENT_FEE = "for a management fee (billed with flex-start jobs, beside Compute Engine's VM SKUs)"
    UNKNOWN_SHAPE = "whose description names no machine, accelerator or TPU"
    USAGE = "of a usage type other than on-demand or spot (commitments, reservations, ...)"
    UNIT = "priced in another unit than per hour (or per GiB-hour for memory)"
    PRICE = "with no single USD rate (several tiers, another currency, or none)"
    NO_REGION = "naming no Google Cloud region (none, global, or a multi-region)"
    UNKNOWN_DEVICE = "of an accelerator or TPU generation tierscope does not know"
    NO_DATE = "with no effective time"
    NO_MACHINES = "of a machine family with no machine type tierscope knows, or with a core or RAM price but not both"
    NEGATIVE = "with a negative or malformed price (units and nanos of opposite signs, or not whole numbers)"
    BAD_ID = "whose id is not letters, digits and dashes (an id is written into the file's source column)"
    DUPLICATE = "pricing a resource, region and pricing another SKU already priced (the first was kept)"

    def add(self, reason: str, sku_id: str) -> None:
        self.skus.setdefault(reason, set()).add(sku_id)

    @property
    def reasons(self) -> dict[str, int]:
        """How many SKUs each reason left out."""
        return {reason: len(ids) for reason, ids in self.skus.items()}

    def lines(self) -> list[str]:
        """One sentence per reason, most first: ``skipped 12 SKUs whose description names ...``."""
        return [
            f"skipped {n:,} SKU{'s' if n != 1 else ''} {reason}"
            for reason, n in sorted(self.reasons.items(), key=lambda item: (-item[1], item[0]))
        ]


@dataclass(frozen=True)
class _Part:
    """One version of one SKU's price in one region, from ``effective`` on: a family's vCPU-hour or
    GiB-hour (``kind`` core/ram), or an accelerator's or TPU chip's hour (``kind`` device, ``name`` the
    resource)."""

    kind: str
    name: str
    region: str
    pricing: str
    usd: Decimal
    effective: datetime
    sku_id: str


def usd(money: Mapping[str, Any]) -> Decimal:
    """A ``google.type.Money`` in its JSON form (``units`` a string of an int64, ``nanos`` an int)
    as an exact Decimal: ``{"units": "1", "nanos": 500000000}`` -> ``Decimal("1.5")``."""
    return Decimal(int(money.get("units") or 0)) + Decimal(int(money.get("nanos") or 0)).scaleb(-9)


def _rate(money: Mapping[str, Any]) -> Decimal | None:
    """:func:`usd` of a price, or None when it is not one: negative, ``units`` and ``nanos`` of opposite signs
    (``google.type.Money`` forbids it), ``nanos`` beyond a unit, or either not a whole number."""
    units, nanos = money.get("units") or 0, money.get("nanos") or 0
    try:
        if isinstance(units, bool | float) or isinstance(nanos, bool | float):
            return None
        whole, part = int(units), int(nanos)
    except (TypeError, ValueError):
        return None
    if whole < 0 or part < 0 or part >= 1_000_000_000:
        return None
    return usd(money)


def _instant(text: str) -> datetime:
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)


def _classify(description: str) -> tuple[str, str] | str:
    """``(kind, name)`` for a training SKU's description, or the :class:`Skipped` reason."""
    text = description.lower()
    if "management fee" in text:
        return Skipped.MANAGEMENT_FEE
    if "training" not in text or "prediction" in text:
        return Skipped.NOT_TRAINING
    if re.search(r"workstation|sole tenan|\bcustom (?:instance|extended)\b|\bextended (?:memory|ram)\b", text):
        return Skipped.UNKNOWN_SHAPE
    for pattern, name in _TPUS:
        if pattern.search(text):
            return ("device", name)
    if "gpu" in text or "nvidia" in text:
        for pattern, name in _ACCELERATORS:
            if pattern.search(text):
                return ("device", name)
        return Skipped.UNKNOWN_SHAPE
    family = _FAMILY.search(text)
    name = family.group(1) if family else ("c2" if "compute optimized" in text else None)
    if name is None:
        return Skipped.UNKNOWN_SHAPE
    variant = next((v for v in VARIANTS if re.search(rf"\b{v}\b", text)), None)
    name = f"{name}-{variant}" if variant else name
    if _CORE.search(text):
        return ("core", name)
    if _RAM.search(text):
        return ("ram", name)
    return Skipped.UNKNOWN_SHAPE


def _version(info: Mapping[str, Any], kind: str) -> tuple[Decimal, datetime] | str:
    """One ``pricingInfo`` entry's hourly USD rate and effective time, or the :class:`Skipped` reason."""
    expression = info.get("pricingExpression") or {}
    if expression.get("usageUnit") not in (MEMORY_HOUR_UNITS if kind == "ram" else HOUR_UNITS):
        return Skipped.UNIT
    rates = expression.get("tieredRates") or []
    price = (rates[0].get("unitPrice") or {}) if len(rates) == 1 else None
    if price is None or (price.get("currencyCode") or "USD") != "USD":
        return Skipped.PRICE
    if not info.get("effectiveTime"):
        return Skipped.NO_DATE
    rate = _rate(price)
    if rate is None:
        return Skipped.NEGATIVE
    try:
        return rate, _instant(str(info["effectiveTime"]))
    except ValueError:
        return Skipped.NO_DATE


def _parts(sku: Mapping[str, Any], skipped: Skipped) -> list[_Part]:
    """The priced parts of one SKU (its JSON form, as the REST API and ``Sku.to_dict`` give it): one a
    region and pricing version. A SKU with no pricing in the range read gives none and is no skip."""
    sku_id = str(sku.get("skuId") or "")
    if not SKU_ID.fullmatch(sku_id):
        skipped.add(Skipped.BAD_ID, sku_id)
        return []
    shape = _classify(str(sku.get("description") or ""))
    if isinstance(shape, str):
        skipped.add(shape, sku_id)
        return []
    kind, name = shape
    pricing = PRICING.get(str((sku.get("category") or {}).get("usageType") or ""))
    if pricing is None:
        skipped.add(Skipped.USAGE, sku_id)
        return []
    regions = [r for r in sku.get("serviceRegions") or [] if REGION.match(str(r))]
    if not regions:
        skipped.add(Skipped.NO_REGION, sku_id)
        return []
    parts = []
    for info in sku.get("pricingInfo") or []:
        version = _version(info, kind)
        if isinstance(version, str):
            skipped.add(version, sku_id)
            return []
        parts.extend(_Part(kind, name, region, pricing, *version, sku_id) for region in regions)
    return parts


def _timeline(parts: Iterable[_Part]) -> list[tuple[datetime, Decimal]]:
    """The distinct (effective time, price) versions of ``parts``, in time order."""
    return sorted({(p.effective, p.usd) for p in parts})


def _at(timeline: list[tuple[datetime, Decimal]], when: datetime) -> Decimal | None:
    """The price of ``timeline`` in effect at ``when`` (its latest version from on or before it)."""
    price = None
    for effective, usd_per_hour in timeline:
        if effective > when:
            break
        price = usd_per_hour
    return price


def _by_day(versions: Iterable[tuple[datetime, Decimal]]) -> dict[date, Decimal]:
    """Versions by their UTC day; of several on one day, the last holds (a row holds from a day on)."""
    return {effective.date(): price for effective, price in sorted(versions)}


def _machine_versions(
    core: list[tuple[datetime, Decimal]], ram: list[tuple[datetime, Decimal]], vcpus: int, memory: Decimal
) -> dict[date, Decimal]:
    """A machine type's price by day: ``vCPUs x core + memory x RAM`` at each change of either."""
    versions = []
    for when in sorted({t for t, _ in core} | {t for t, _ in ram}):
        per_vcpu, per_gib = _at(core, when), _at(ram, when)
        if per_vcpu is not None and per_gib is not None:
            versions.append((when, per_vcpu * vcpus + per_gib * memory))
    return _by_day(versions)


def price_rows(
    skus: Iterable[Mapping[str, Any]],
    service_id: str,
    read_on: date,
    shapes: Mapping[str, tuple[int, Decimal]] | None = None,
    devices: frozenset[str] | None = None,
) -> tuple[list[PriceRow], Skipped, int]:
    """The price rows of ``skus`` (the service's SKUs in their JSON form, each listing one or more
    pricing versions; a SKU may come again with other versions, as when months are read one by one),
    sorted by resource, region, pricing and date; what was skipped and why; how many SKUs were read.

    Each version of a SKU's price is a row from its effective date (UTC). A machine type's row is
    ``vCPUs x core price + memory x RAM price``, one at each date either of the two changes.
    ``read_on`` dates each row's source; every row's ``origin`` is :data:`ORIGIN`. ``shapes`` maps the
    machine types to write to their (vCPUs, memory GB); ``devices`` are the accelerators and TPU
    generations to write; either None: the machines table's (:func:`known_hardware`).
    """
    if shapes is None or devices is None:
        known_shapes, known_devices = known_hardware()
        shapes = known_shapes if shapes is None else shapes
        devices = known_devices if devices is None else devices
    skipped = Skipped()
    seen: set[str] = set()
    owner: dict[tuple[str, ...], str] = {}  # the SKU that prices a device, or a family's core or RAM
    found: dict[tuple[str, ...], list[_Part]] = {}
    for sku in skus:
        seen.add(str(sku.get("skuId") or ""))
        for part in _parts(sku, skipped):
            if part.kind == "device" and part.name not in devices:
                skipped.add(Skipped.UNKNOWN_DEVICE, part.sku_id)
                continue
            key = (part.kind, part.name, part.region, part.pricing)
            if owner.setdefault(key, part.sku_id) != part.sku_id:
                skipped.add(Skipped.DUPLICATE, part.sku_id)
                continue
            found.setdefault(key, []).append(part)
    prefix = f"Cloud Billing Catalog API, service {service_id}, SKU"
    read = f"read {read_on.isoformat()}"
    rows: list[PriceRow] = []
    by_family: dict[str, list[str]] = {}
    for machine in shapes:
        by_family.setdefault(family_of(machine), []).append(machine)
    for (kind, name, region, pricing), parts in found.items():
        if kind == "device":
            source = f"{prefix} {owner[kind, name, region, pricing]}, {read}"
            versions = _by_day(_timeline(parts))
            rows.extend(PriceRow(name, region, pricing, float(p), day, source, ORIGIN) for day, p in versions.items())
            continue
        other = ("ram" if kind == "core" else "core", name, region, pricing)
        if other not in found or not by_family.get(name):
            skipped.add(Skipped.NO_MACHINES, owner[kind, name, region, pricing])
        elif kind == "core":
            source = (
                f"{prefix}s {owner[kind, name, region, pricing]} (per vCPU) + {owner[other]} (per GiB of memory), "
                f"{read}"
            )
            for machine in by_family[name]:
                versions = _machine_versions(_timeline(parts), _timeline(found[other]), *shapes[machine])
                rows.extend(
                    PriceRow(machine, region, pricing, float(p), day, source, ORIGIN) for day, p in versions.items()
                )
    seen.discard("")
    return sorted(rows, key=lambda r: (r.resource, r.region, r.pricing, r.valid_from)), skipped, len(seen)


def known_hardware() -> tuple[dict[str, tuple[int, Decimal]], frozenset[str]]:
    """The machine types a price file may name, with their (vCPUs, memory GB), and its accelerators
    and TPU generations: those of the machines table (:func:`tierscope.analysis.machines.catalog`),
    since a price file naming anything else does not load. TPU VMs are left out (their chips' rows
    price them whole), as are machine types without vCPUs or memory there (``cloud-tpu``)."""
    specs = machines.catalog()
    shapes = {
        name: (spec.vcpus, Decimal(str(spec.memory_gb)))
        for name, spec in specs.items()
        if spec.kind == "machine" and spec.vcpus and spec.memory_gb and spec.chips is None
    }
    return shapes, frozenset(name for name, spec in specs.items() if spec.kind in ("gpu", "tpu"))
