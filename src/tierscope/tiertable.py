"""The scale tiers' composition: how many replicas of which machine type each legacy tier is.

One table, ``data/tiers.csv`` beside this module (columns ``tier, role, count, machine_type,
source``; one row per tier and role, roles ``master``, ``worker``, ``ps``; every row names the
page it comes from). The trainer reads it for a tier's topology (``tierscope train local
--tier``, ``tierscope spec``), analysis for a tier's training tasks and machine types
(:mod:`tierscope.analysis.topology`). Prices stay with analysis (``analysis/data/``): this
table says what a tier *is*, not what it costs.

Standard library only: the trainer's TensorFlow tasks may import it.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from tierscope.errors import TierscopeError

TIERS_CSV = Path(__file__).with_name("data") / "tiers.csv"
COLUMNS = ("tier", "role", "count", "machine_type", "source")
ROLES = ("master", "worker", "ps")
#: Machine types with a GPU or TPU (a regular expression for :mod:`re` and polars alike): a
#: model of throughput against task count on CPUs cannot speak for them, and the reference
#: trainer (TensorFlow on CPUs) does not emulate them.
ACCELERATOR = "gpu|tpu|p100|v100"


class TierTableError(TierscopeError, ValueError):
    """A tier table that cannot be read: the file and line, what is wrong."""


@dataclass(frozen=True)
class Replicas:
    """One row: ``count`` replicas of ``machine_type`` in ``role`` of scale tier ``tier`` (upper case)."""

    tier: str
    role: str
    count: int
    machine_type: str
    source: str


def load(path: Path | None = None) -> list[Replicas]:
    """Every row of the tier table (``path`` overrides the bundled :data:`TIERS_CSV`), in file order.

    Raises :class:`TierTableError` naming ``file:line`` for a missing column, an unknown role,
    a count that is not a whole number >= 0, or a tier and role given twice.
    """
    path = path or TIERS_CSV
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TierTableError(f"cannot read the tier table {path}: {exc}") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise TierTableError(
            f"{path}:1: the tier table has no column {', '.join(missing)}; expected {', '.join(COLUMNS)}"
        )
    rows: list[Replicas] = []
    seen: set[tuple[str, str]] = set()
    for row in reader:
        where = f"{path}:{reader.line_num}"
        tier, role = (row["tier"] or "").strip().upper(), (row["role"] or "").strip()
        if not tier or role not in ROLES:
            raise TierTableError(f"{where}: tier {tier!r}, role {role!r}: give a tier and one of {', '.join(ROLES)}")
        if (tier, role) in seen:
            raise TierTableError(f"{where}: tier {tier} lists role {role} twice; give each role one row")
        count = (row["count"] or "").strip()
        if not count.isdigit():
            raise TierTableError(f"{where}: count {count!r} of {tier} {role} is not a whole number >= 0")
        seen.add((tier, role))
        rows.append(Replicas(tier, role, int(count), (row["machine_type"] or "").strip(), row["source"] or ""))
    return rows


def by_tier(rows: list[Replicas]) -> dict[str, list[Replicas]]:
    """``rows`` grouped by tier, tiers and roles in file order."""
    out: dict[str, list[Replicas]] = {}
    for r in rows:
        out.setdefault(r.tier, []).append(r)
    return out
