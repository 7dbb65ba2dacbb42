"""What machines a run had: its replicas per role and their machine types.

Two origins, in this order: the run's own ``topology`` from the manifest (a CUSTOM tier;
see :func:`tierscope.collector.manifest.topology_json`), else the composition of its scale tier from
the tier table the trainer reads too (:mod:`tierscope.tiertable`: columns ``tier, role, count,
machine_type, source``; every row names the page it comes from). A run with neither (a laptop,
an unknown tier) has no topology.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict
from importlib.resources import files
from pathlib import Path

import polars as pl

from tierscope import tiertable
from tierscope.analysis.machines import (
    Hardware,
    HardwareError,
    UnknownMachineError,
    catalog,
    from_tier,
    from_topology,
    pool,
)
from tierscope.contract import LOCAL_PREFIX
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
    return _bundled_tiers() if path is None else _read_tiers(path)


def _read_tiers(path: Path | None) -> pl.DataFrame:
    return pl.DataFrame([asdict(r) for r in tiertable.load(path)], schema=TIERS_SCHEMA)


@functools.cache
def _bundled_tiers() -> pl.DataFrame:
    # The bundled table is part of the installed package: read once a process, not once a run (a summary of
    # many runs asked for it in every run's cost, topology and fit). A failed read raises, and is not cached.
    return _read_tiers(None)


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


#: Columns of :func:`declared_tasks`.
DECLARED_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "training_tasks": pl.UInt32(),  # replicas that compute steps (see declared_tasks)
    "ps_tasks": pl.UInt32(),  # parameter servers
    "evaluator_tasks": pl.UInt32(),
    "tasks_origin": pl.String(),  # "declared" (run.json / manifest counts), "manifest", "tier table"
}

#: The strategy whose chief only coordinates (TF2 ParameterServerStrategy's ClusterCoordinator):
#: its workers train, the chief schedules their steps.
COORDINATOR_STRATEGY = "ps"


def _split(counts: dict[str, int], strategy: str | None) -> tuple[int, int, int]:
    lead = 0 if strategy == COORDINATOR_STRATEGY else counts.get("master", 0) + counts.get("chief", 0)
    return lead + counts.get("worker", 0), counts.get("ps", 0), counts.get("evaluator", 0)


def declared_tasks(runs: pl.DataFrame, tiers: pl.DataFrame | None = None) -> pl.DataFrame:
    """The tasks each run was given, not those that happened to log: :data:`DECLARED_SCHEMA`, one row
    per run whose topology is known, sorted by run id.

    ``runs``: the run index (``run_id, tier``, optionally ``replicas``, ``strategy``, ``topology``;
    :func:`tierscope.analysis.summary.run_index`). In this order: the declared replica counts
    (``replicas``: run.json's topology, the manifest's ``workers``/``ps``/``evaluators``), the
    manifest's ``machine_types`` topology, the tier's composition in the tier table (a local
    ``local-<TIER>`` run emulates ``<TIER>``). Training tasks are the master/chief plus the workers,
    except under the ``ps`` strategy (run.json), whose chief only coordinates: there the workers.
    """
    tiers = load_tiers() if tiers is None else tiers
    composition: dict[str, dict[str, int]] = {}
    for tier, role, count in tiers.select("tier", "role", "count").iter_rows():
        composition.setdefault(tier, {})[role] = composition.get(tier, {}).get(role, 0) + count
    rows = []
    for row in runs.iter_rows(named=True):
        strategy = row.get("strategy")
        if row.get("replicas"):
            counts, origin = json.loads(row["replicas"]), "declared"
        elif row.get("topology"):
            counts = {role: spec["count"] for role, spec in json.loads(row["topology"]).items()}
            origin, strategy = "manifest", None
        else:
            tier = (row["tier"] or "").upper()
            tier = tier.removeprefix(LOCAL_PREFIX.upper())
            if tier not in composition:
                continue
            counts, origin = composition[tier], "tier table"
        training, ps, evaluators = _split(counts, strategy)
        rows.append(
            {"run_id": row["run_id"], "training_tasks": training, "ps_tasks": ps, "evaluator_tasks": evaluators,
             "tasks_origin": origin}
        )  # fmt: skip
    return pl.DataFrame(rows, schema=DECLARED_SCHEMA).sort("run_id")


def tier_hardware(tier: str, tiers: pl.DataFrame | None = None) -> Hardware | None:
    """A legacy scale tier as the pools it was (the tier table's composition; ``local-<TIER>`` emulates
    ``<TIER>``); None: not a tier of the table (CUSTOM, a laptop, a name nobody knows)."""
    tiers = load_tiers() if tiers is None else tiers
    name = tier.upper().removeprefix(LOCAL_PREFIX.upper())
    rows = tiers.filter(pl.col("tier") == name).select("role", "count", "machine_type").rows()
    return from_tier(rows) if rows else None


def run_hardware(tier: str | None, topology: str | None, tiers: pl.DataFrame | None = None) -> Hardware | None:
    """What a run ran on: its stored ``topology`` (worker pools, :meth:`Hardware.to_json`), else its tier's
    composition, else its tier read as one machine of that type (``--tier n1-standard-8``); None: unknown
    (a laptop, a tier or machine type nobody knows, a stored pool naming one)."""
    try:
        if topology:
            return from_topology(topology)
        if not tier:
            return None
        found = tier_hardware(tier, tiers)
        if found is not None:
            return found
        spec = catalog().get(tier.lower())
        return Hardware((pool("chief", spec.name),)) if spec is not None and spec.kind == "machine" else None
    except (UnknownMachineError, HardwareError, ValueError, KeyError):
        return None
