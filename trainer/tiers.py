"""Scale tiers as data: how many masters, workers and parameter servers each one is.

The numbers live in ``tiers.toml`` beside this module, with their source.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tierscope.trainer.errors import TrainerError
from tierscope.trainer.roles import Strategy, strategy_for

TIERS_FILE = Path(__file__).with_name("tiers.toml")
#: The tier label of a topology given by ``--workers`` / ``--ps`` rather than a tier.
CUSTOM = "CUSTOM"


class UnknownTierError(TrainerError, ValueError):
    """A tier name that ``tiers.toml`` does not define."""


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
    ml_units: float | None


@cache
def tiers() -> dict[str, Tier]:
    """Every tier of ``tiers.toml`` by upper-case name."""
    doc = tomllib.loads(TIERS_FILE.read_text(encoding="utf-8"))
    out: dict[str, Tier] = {}
    for name, row in doc["tiers"].items():
        if row.get("master", 1) != 1:
            raise ValueError(f"{TIERS_FILE}: tier {name} has {row['master']} masters; a job has exactly one")
        out[name.upper()] = Tier(
            name=name.upper(),
            topology=Topology(workers=int(row.get("workers", 0)), ps=int(row.get("parameter_servers", 0))),
            ml_units=row.get("ml_units"),
        )
    return out


def get_tier(name: str) -> Tier:
    """The tier called ``name`` (any case). Raises :class:`UnknownTierError` listing the known ones."""
    try:
        return tiers()[name.upper()]
    except KeyError:
        raise UnknownTierError(f"unknown scale tier {name!r}; known tiers: {', '.join(tiers())}") from None
