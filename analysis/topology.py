"""What machines a run had: its replicas per role and their machine types.

Two origins, in this order: the run's own ``topology`` from the manifest (a CUSTOM tier;
see :func:`tierscope.collector.manifest.topology_json`), else the composition of its scale tier from
the tier table the trainer reads too (:mod:`tierscope.tiertable`: columns ``tier, role, count,
machine_type, source``; every row names the page it comes from). A run with neither (a laptop,
an unknown tier) has no topology.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib.resources import files
from pathlib import Path

import polars as pl

from tierscope import tiertable
from tierscope.dataset.schema import TRAINING_ROLES

#: The price tables (:mod:`tierscope.analysis.cost`); the tier composition is :mod:`tierscope.tiertable`'s.
DATA = files("tierscope.analysis") / "data"

TIERS_SCHEMA: dict[str, pl.DataType] = {
    "tier": pl.String(),
    "role": pl.String(),
    "count": pl.Int32(),
    "machine_type": pl.String(),
    "source": pl.String(),
}

#: Columns of :func:`run_topology`.
TOPOLOGY_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "role": pl.String(),
    "count": pl.Int32(),  # replicas of the role
    "machine_type": pl.String(),
    "origin": pl.String(),  # "manifest" or "tier table"
}


def load_tiers(path: Path | None = None) -> pl.DataFrame:
    """The tier composition table (:data:`TIERS_SCHEMA`); ``path`` overrides the bundled one.
    Raises :class:`tierscope.tiertable.TierTableError` for a table that cannot be read."""
    return pl.DataFrame([asdict(r) for r in tiertable.load(path)], schema=TIERS_SCHEMA)


def _manifest_rows(runs: pl.DataFrame) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for run_id, text in runs.filter(pl.col("topology").is_not_null()).select("run_id", "topology").iter_rows():
        for role, spec in json.loads(text).items():
            rows.append({"run_id": run_id, "role": role, "count": spec["count"], "machine_type": spec["machine_type"]})
    return rows


def run_topology(runs: pl.DataFrame, tiers: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per run and role: :data:`TOPOLOGY_SCHEMA`.

    ``runs`` has ``run_id``, ``tier`` and ``topology`` (String JSON, may be null or
    absent). Runs with no manifest topology and a tier missing from the tier table
    get no rows.
    """
    tiers = load_tiers() if tiers is None else tiers
    if "topology" not in runs.columns:
        runs = runs.with_columns(topology=pl.lit(None, pl.String))
    manifest = pl.DataFrame(
        _manifest_rows(runs), schema={k: TOPOLOGY_SCHEMA[k] for k in TOPOLOGY_SCHEMA if k != "origin"}
    )
    from_tier = (
        runs.filter(pl.col("topology").is_null())
        .select("run_id", pl.col("tier").str.to_uppercase())
        .join(tiers, on="tier")
        .select("run_id", "role", "count", "machine_type")
    )
    return (
        pl.concat(
            [
                manifest.with_columns(origin=pl.lit("manifest")),
                from_tier.with_columns(origin=pl.lit("tier table")),
            ]
        )
        .select([pl.col(n).cast(t) for n, t in TOPOLOGY_SCHEMA.items()])
        .sort("run_id", "role")
    )


def training_tasks(topology: pl.DataFrame, key: str = "run_id") -> pl.DataFrame:
    """``key, training_tasks`` (UInt32): masters/chiefs plus workers of each topology."""
    return (
        topology.filter(pl.col("role").is_in(list(TRAINING_ROLES)))
        .group_by(key)
        .agg(training_tasks=pl.col("count").sum().cast(pl.UInt32))
    )
