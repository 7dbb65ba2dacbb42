"""Figures, targets and the one table (and JSON file) the benchmark prints."""

from __future__ import annotations

import json
import operator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.table import Table

_OPS = {">=": operator.ge, "<=": operator.le, "<": operator.lt, ">": operator.gt}


@dataclass(frozen=True)
class Target:
    """``value`` (or the ratio to the baseline, ``on="ratio"``, or value / baseline, ``on="times"``:
    "at most 2× the baseline's seconds") ``op`` ``threshold``."""

    op: Literal[">=", "<=", "<", ">"]
    threshold: float
    on: Literal["value", "ratio", "times"] = "value"

    def text(self, unit: str) -> str:
        if self.on == "ratio":
            return f"{self.op} {self.threshold:g}× baseline"
        if self.on == "times":
            return f"value {self.op} {self.threshold:g}× baseline's"
        return f"{self.op} {self.threshold:g} {unit}"


@dataclass
class Figure:
    """One measured figure. ``value`` is None when the section was skipped (``note`` says why).

    ``ratio`` is how many times better than the baseline: value / baseline when higher is
    better (throughput), baseline / value when lower is better (time, memory).
    """

    section: str
    name: str
    unit: str
    value: float | None
    baseline: float | None = None
    higher_is_better: bool = True
    targets: tuple[Target, ...] = ()
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    #: Beside a figure in CPU seconds: the wall seconds of the same run (and the baseline's), and the
    #: 1-minute load average as it ended (shown in the table's "wall" column).
    wall_s: float | None = None
    baseline_wall_s: float | None = None
    load_1m: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.value is None or self.baseline is None or not self.value or not self.baseline:
            return None
        return self.value / self.baseline if self.higher_is_better else self.baseline / self.value

    @property
    def times(self) -> float | None:
        """value / baseline (None without both)."""
        if self.value is None or not self.baseline:
            return None
        return self.value / self.baseline

    def verdicts(self) -> list[dict[str, Any]]:
        """Each target: its text, whether it is met, and by how much it is missed (percent)."""
        out = []
        for target in self.targets:
            got = {"ratio": self.ratio, "times": self.times, "value": self.value}[target.on]
            entry: dict[str, Any] = {"target": target.text(self.unit), "met": None, "missed_by_pct": None}
            if got is not None:
                entry["met"] = bool(_OPS[target.op](got, target.threshold))
                if not entry["met"]:
                    entry["missed_by_pct"] = abs(got - target.threshold) / target.threshold * 100
            out.append(entry)
        return out


def _num(value: float | None, unit: str = "") -> str:
    if value is None:
        return "–"
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2 if abs(value) >= 1 else 3
    return f"{value:,.{digits}f}" + (f" {unit}" if unit else "")


def _status(fig: Figure) -> str:
    if fig.value is None:
        return f"[yellow]skipped[/]: {fig.note}"
    parts = []
    for v in fig.verdicts():
        if v["met"]:
            parts.append(f"[green]met[/] ({v['target']})")
        else:
            parts.append(f"[red]missed by {v['missed_by_pct']:.0f}%[/] ({v['target']})")
    if fig.note:
        parts.append(fig.note)
    return "; ".join(parts) or "–"


def _ratio(fig: Figure) -> str:
    r = fig.ratio
    if r is None:
        return "–"
    return f"{r:.2f}× better" if r >= 1 else f"{1 / r:.2f}× worse"


def _wall(fig: Figure) -> str:
    """The wall seconds beside a figure in CPU seconds (``value / baseline`` where both are given), and
    the load average they were taken under."""
    if fig.wall_s is None:
        return "–"
    text = _num(fig.wall_s, "s")
    if fig.baseline_wall_s is not None:
        text += f" / {_num(fig.baseline_wall_s, 's')}"
    if fig.load_1m is not None:
        text += f" (load {fig.load_1m:.1f})"
    return text


def render(figures: list[Figure], title: str, console: Console | None = None) -> None:
    """Print the one table: figure, value, baseline, ratio, wall time (beside a CPU time), targets and verdicts."""
    table = Table("section", "figure", "value", "baseline", "vs baseline", "wall", "target: verdict", title=title)
    for fig in figures:
        table.add_row(
            fig.section,
            fig.name,
            _num(fig.value, fig.unit),
            _num(fig.baseline, fig.unit),
            _ratio(fig),
            _wall(fig),
            _status(fig),
        )
    (console or Console(width=200)).print(table)


def write_json(path: Path, figures: list[Figure], meta: dict[str, Any]) -> None:
    """Every figure with its verdicts, and ``meta`` (machine, versions, sizes), as JSON."""
    rows = []
    for fig in figures:
        row = asdict(fig)
        row["targets"] = fig.verdicts()
        row["ratio"] = fig.ratio
        rows.append(row)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "figures": rows}, indent=2, default=str) + "\n")
