"""Scale tiers as data: how many masters, workers and parameter servers each one is.

The numbers live in the tier table that analysis reads too (:mod:`tierscope.tiertable`,
``tierscope/data/tiers.csv``), each row with its source. The trainer offers the CPU tiers:
it trains on CPUs, so a tier with a GPU or TPU (:data:`tierscope.tiertable.ACCELERATOR`)
is not one it can emulate or describe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from tierscope import tiertable
from tierscope.trainer.errors import TrainerError
from tierscope.trainer.roles import Strategy, strategy_for

#: The tier label of a topology given by ``--workers`` / ``--ps`` rather than a tier.
CUSTOM = "CUSTOM"


class UnknownTierError(TrainerError, ValueError):
    """A tier name that the tier table does not define, or one with accelerators."""


@dataclass(frozen=True)
class Topology:
    """A cluster's shape: one chief (the legacy ``master``) plus ``workers`` and ``ps`` tasks."""

    workers: int = 0
    ps: int = 0

    def __post_init__(self) -> None:
        if self.workers < 0 or self.ps < 0:
            raise ValueError(f"worker and parameter server counts must be >= 0, got {self.workers} and {self.ps}")
        if self.ps and not self.workers:
            raise ValueError("parameter servers need at least one worker to train on (--workers)")

    @property
    def tasks(self) -> list[tuple[str, int]]:
        """``(role, index)`` of every task, chief first, with TensorFlow 2's role names."""
        return [("chief", 0), *(("worker", i) for i in range(self.workers)), *(("ps", i) for i in range(self.ps))]

    def cluster(self, addresses: list[str]) -> dict[str, list[str]]:
        """The cluster dict for ``TF_CONFIG``, giving the tasks ``addresses`` in :attr:`tasks` order."""
        if len(addresses) != len(self.tasks):
            raise ValueError(f"{len(self.tasks)} tasks need {len(self.tasks)} addresses, got {len(addresses)}")
        cluster: dict[str, list[str]] = {}
        for (role, _), address in zip(self.tasks, addresses, strict=True):
            cluster.setdefault(role, []).append(address)
        return cluster

    @property
    def strategy(self) -> Strategy:
        return strategy_for({"chief": ["-"], "worker": ["-"] * self.workers, "ps": ["-"] * self.ps})

    def as_dict(self) -> dict[str, int]:
        return {"chief": 1, "worker": self.workers, "ps": self.ps}


@dataclass(frozen=True)
class Tier:
    name: str
    topology: Topology


def _accelerated(rows: list[tiertable.Replicas]) -> list[str]:
    return [r.machine_type for r in rows if re.search(tiertable.ACCELERATOR, r.machine_type)]


def _tier(name: str, rows: list[tiertable.Replicas]) -> Tier:
    count = {r.role: r.count for r in rows}
    if count.get("master", 0) != 1:
        raise tiertable.TierTableError(
            f"{tiertable.TIERS_CSV}: tier {name} has {count.get('master', 0)} masters; a job has exactly one"
        )
    return Tier(name=name, topology=Topology(workers=count.get("worker", 0), ps=count.get("ps", 0)))


@cache
def tiers() -> dict[str, Tier]:
    """Every CPU tier of the tier table by upper-case name, in the table's order."""
    return {
        name: _tier(name, rows) for name, rows in tiertable.by_tier(tiertable.load()).items() if not _accelerated(rows)
    }


def get_tier(name: str) -> Tier:
    """The tier called ``name`` (any case). Raises :class:`UnknownTierError` listing the known
    ones, or saying which accelerator keeps a tier of the table out."""
    try:
        return tiers()[name.upper()]
    except KeyError:
        rows = tiertable.by_tier(tiertable.load()).get(name.upper())
        if rows:
            raise UnknownTierError(
                f"scale tier {name.upper()} runs on {', '.join(_accelerated(rows))}, which the reference trainer "
                f"(TensorFlow on CPUs) does not use; CPU tiers: {', '.join(tiers())}"
            ) from None
        raise UnknownTierError(f"unknown scale tier {name!r}; known tiers: {', '.join(tiers())}") from None
