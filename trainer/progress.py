"""Progress of a local run as it goes: the launcher reads its tasks' step logs while they grow and
hands :class:`Progress` events to whoever watches (``tierscope train local`` draws them with rich;
this module, like the launcher, imports neither rich nor typer).

What an event knows comes only from files the run writes anyway: each task's JSON step log
(``chief-0.jsonl`` ...; a parameter-server job's coordinator logs its workers' steps too, so tasks
are keyed by the role and index *in the record*) and the tasks' exit codes. Text step logs
(``--log-format text``) give no progress, only failures by exit code.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tierscope.contract import KIND_KEY

#: Seconds between two progress events while nothing fails (a failure is reported at once).
EVERY_S = 0.5


@dataclass(frozen=True)
class TaskProgress:
    """One training task as its step log shows it so far: ``task`` (``role-index``), ``step`` (the global
    step of its last record), ``steps_per_s`` (the global steps/s that record logged over its interval)
    and ``records`` (step records so far)."""

    task: str
    step: int
    steps_per_s: float
    records: int


@dataclass(frozen=True)
class Progress:
    """A progress event. ``elapsed_s``: seconds since the launcher started the tasks. ``tasks``: every task
    that has logged a step, in the order of their first record. ``failure``: ``(task, the first line of
    its failure)`` on the event that reports it, the first time it is seen (the task's ``failed`` record,
    else its exit code); None on the others."""

    elapsed_s: float
    tasks: tuple[TaskProgress, ...]
    failure: tuple[str, str] | None = None
    #: Every process of the run and its state, in start order: ``starting`` (no record yet), ``logging``
    #: (its log has a step record), ``running`` (a record, but no step: a ps, a coordinator's peers),
    #: ``exited`` (code 0) or ``failed (exit N)``. Empty where the launcher gives no exits.
    processes: tuple[tuple[str, str], ...] = ()


ProgressCallback = Callable[[Progress], None]


@dataclass
class _Tail:
    """The complete lines a growing file gained since the last call (a cut-off last line waits)."""

    path: Path
    offset: int = 0
    partial: bytes = b""

    def lines(self) -> list[bytes]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        self.offset += len(data)
        *complete, self.partial = (self.partial + data).split(b"\n")
        return complete


def first_line(text: str) -> str:
    """The first non-empty line of ``text``, stripped."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


@dataclass
class Watcher:
    """Reads the step logs of ``logs`` (task name -> log path) and builds :class:`Progress` events for
    :meth:`poll`. ``started``: the launcher's ``time.monotonic()`` when the tasks started."""

    logs: dict[str, Path]
    started: float
    callback: ProgressCallback
    tasks: dict[str, TaskProgress] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    #: The processes whose own log has a record (any), and those with a step record.
    heard: set[str] = field(default_factory=set)
    stepping: set[str] = field(default_factory=set)
    _tails: dict[str, _Tail] = field(default_factory=dict)
    _last: float = 0.0

    def __post_init__(self) -> None:
        self._tails = {name: _Tail(path) for name, path in self.logs.items()}

    def _read(self) -> list[tuple[str, str]]:
        failures = []
        for name, tail in self._tails.items():
            for raw in tail.lines():
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue  # a text log, or a line that is no record: nothing to show
                if not isinstance(record, dict):
                    continue
                self.heard.add(name)
                kind = record.get(KIND_KEY)
                if kind == "step" and isinstance(record.get("step"), int):
                    self.stepping.add(name)
                    who = f"{record.get('role', name)}-{record.get('task_index', '')}".rstrip("-")
                    before = self.tasks.get(who)
                    rate = record.get("global_steps_per_s")
                    self.tasks[who] = TaskProgress(
                        who,
                        record["step"],
                        float(rate) if isinstance(rate, int | float) else 0.0,
                        (before.records if before else 0) + 1,
                    )
                elif kind == "event" and record.get("event") == "failed" and name not in self.failed:
                    self.failed.add(name)
                    failures.append((name, first_line(str(record.get("reason") or "failed"))))
        return failures

    def poll(self, exits: Sequence[tuple[str, int | None, str]] = ()) -> None:
        """Read what the logs gained and call back: at once for each new failure, else every :data:`EVERY_S`.
        ``exits``: ``(task, exit code or None, how the launcher words that exit)`` of every task."""
        failures = self._read()
        for name, code, why in exits:
            if code not in (None, 0) and name not in self.failed:
                self.failed.add(name)
                failures.append((name, first_line(why)))
        now = time.monotonic()
        states = tuple((name, self._state(name, code)) for name, code, _ in exits)
        for failure in failures:
            self.callback(Progress(now - self.started, tuple(self.tasks.values()), failure, states))
        if failures or now - self._last >= EVERY_S:
            self._last = now
            if not failures:
                self.callback(Progress(now - self.started, tuple(self.tasks.values()), None, states))

    def _state(self, name: str, code: int | None) -> str:
        """A process's state for :attr:`Progress.processes`."""
        if code == 0:
            return "exited"
        if code is not None:
            return f"failed (exit {code})"
        if name in self.stepping:
            return "logging"
        return "running" if name in self.heard else "starting"
