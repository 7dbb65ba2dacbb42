"""A sweep's ledger: what was submitted for each configuration, what became of it, and whether its logs are
in the dataset. One state document of the dataset per sweep (``state/sweep-<id>.json``), saved atomically as
every state document is (:class:`tierscope.dataset.state.StateStore`: a temporary file renamed over the old
one), under the dataset's lock.

The ledger is what makes a sweep safe to kill: a configuration with a job id is never submitted again, one
marked ``collected`` is never collected again; the gap between a submission and its save is closed by the
launcher's :meth:`~tierscope.sweep.launchers.Launcher.find` (by labels), the gap between a collect and its save
by the collector's own positions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from tierscope.dataset.errors import StateCorruptError
from tierscope.dataset.objects import GsPath, as_location
from tierscope.dataset.state import StateStore, state_dir
from tierscope.sweep.errors import SweepError
from tierscope.sweep.launchers import FINAL_STATES, label_value

VERSION = 1
PREFIX = "sweep-"
#: The states a ledger entry may be in besides a job's: not submitted yet, or never (the budget stopped it).
PLANNED = "planned"
SKIPPED = "skipped"


class SweepBusyError(SweepError):
    """Another ``tierscope sweep`` process runs this sweep now."""


class LedgerCorruptError(SweepError):
    """A sweep's ledger that cannot be read or is not what this module writes (hand-edited, cut short)."""

    def __init__(self, path: Path | GsPath, problem: str, root: Path | GsPath) -> None:
        self.path, self.problem = path, problem
        super().__init__(
            f"the sweep ledger {path} {problem}; run `tierscope doctor --dataset {root} --fix` to move it to "
            "quarantine, then run the sweep again: it finds the jobs it submitted by their labels, submits "
            "nothing twice, and collects each ended job again (the dataset stores no record twice)"
        )


@dataclass
class Entry:
    """One configuration of a sweep: its ``job_id`` (None: not submitted), ``state`` (a job's, or ``planned``
    / ``skipped``), the ``reason`` of a failed, cancelled or skipped one, when it was submitted, started and ended
    (ISO 8601 UTC), its estimate (USD) and price an hour, and whether its logs (or its failure) are
    ``collected``."""

    job_id: str | None = None
    state: str = PLANNED
    reason: str | None = None
    submitted_at: str | None = None
    start_time: str | None = None
    end_time: str | None = None
    estimate_usd: float | None = None
    collected: bool = False
    #: The configuration's price an hour when it was submitted (the estimate's rows), for :attr:`ran_usd`.
    usd_per_hour: float | None = None
    #: The SHA-256 of the configuration's job body when it was first submitted (:func:`fingerprint`): a
    #: resumed sweep refuses a plan that changed it under the same sweep id.
    job_sha256: str | None = None

    @property
    def ran_usd(self) -> float | None:
        """Its price an hour times how long its job ran (start to end); None until both are known."""
        if self.usd_per_hour is None or self.start_time is None or self.end_time is None:
            return None
        start, end = (datetime.fromisoformat(t.replace("Z", "+00:00")) for t in (self.start_time, self.end_time))
        return self.usd_per_hour * max(0.0, (end - start).total_seconds()) / 3600

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES or self.state == SKIPPED


@dataclass
class Ledger:
    """A sweep's ledger: its id, the plan it came from, its launcher (``local``, ``vertex``), and one
    :class:`Entry` per configuration in the plan's order."""

    sweep_id: str
    plan: str
    launcher: str
    entries: dict[str, Entry] = field(default_factory=dict)
    budget: float | None = None
    #: Where the launcher keeps its jobs (the local launcher's folder; Vertex AI's project and region).
    where: str | None = None

    def to_doc(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "sweep_id": self.sweep_id,
            "plan": self.plan,
            "launcher": self.launcher,
            "budget": self.budget,
            "where": self.where,
            "configurations": [{"name": name, **asdict(e)} for name, e in self.entries.items()],
        }

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Ledger:
        """Raises KeyError, TypeError or ValueError (saying which key of which configuration) for a document this
        module does not write: every key's type is checked, times parse as ISO 8601, amounts are finite."""
        if doc.get("version") != VERSION:
            raise ValueError(f"version {doc.get('version')!r}, expected {VERSION}")
        for key in ("sweep_id", "plan", "launcher"):
            _check(doc, key, str, "", optional=False)
        _check(doc, "where", str, "")
        _amount(doc, "budget", "")
        items = doc["configurations"]
        if not isinstance(items, list):
            raise TypeError(f"configurations is {type(items).__name__}, not a list")
        entries = {}
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise TypeError(f"a configuration without a name: {str(item)[:80]}")
            name = item["name"]
            _entry(item, f"configuration {name!r}: ")
            entries[name] = Entry(**{k: v for k, v in item.items() if k in _ENTRY_KEYS})
        return cls(doc["sweep_id"], doc["plan"], doc["launcher"], entries, doc.get("budget"), doc.get("where"))


_ENTRY_KEYS = {f.name for f in fields(Entry)}
_STATES = {"queued", "provisioning", "running", *FINAL_STATES, PLANNED, SKIPPED}


def _check(doc: dict[str, Any], key: str, kind: type, where: str, optional: bool = True) -> None:
    value = doc.get(key)
    if value is None and optional:
        return
    # bool is an int: a "collected": 1 or an "estimate_usd": true is as wrong as a string there
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise TypeError(f"{where}{key} is {value!r}, not {'true/false' if kind is bool else kind.__name__}")


def _amount(doc: dict[str, Any], key: str, where: str) -> None:
    value = doc.get(key)
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{where}{key} is {value!r}, not an amount in USD")


def _entry(item: dict[str, Any], where: str) -> None:
    for key in ("job_id", "reason", "job_sha256"):
        _check(item, key, str, where)
    _check(item, "state", str, where, optional=False)
    if item["state"] not in _STATES:
        raise ValueError(f"{where}state is {item['state']!r}, not one of {', '.join(sorted(_STATES))}")
    _check(item, "collected", bool, where, optional=False)
    for key in ("estimate_usd", "usd_per_hour"):
        _amount(item, key, where)
    for key in ("submitted_at", "start_time", "end_time"):
        _check(item, key, str, where)
        if item.get(key) is not None:
            try:
                when = datetime.fromisoformat(item[key].replace("Z", "+00:00"))
            except ValueError:
                raise ValueError(f"{where}{key} is {item[key]!r}, not an ISO 8601 time") from None
            if when.tzinfo is None:
                raise ValueError(f"{where}{key} is {item[key]!r}, a time without its zone (UTC: end it with Z)")


def fingerprint(job: dict[str, Any]) -> str:
    """The SHA-256 (hex) of a CustomJob body, its keys sorted: what a ledger remembers of a configuration."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps(job, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()


def _read(store: StateStore, name: str) -> Ledger | None:
    """The ledger in document ``name``, None if there is none. Raises :class:`StateCorruptError`."""
    doc = store.load(name)
    if doc is None:
        return None
    try:
        return Ledger.from_doc(doc)
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"lacks {exc}" if isinstance(exc, KeyError) else str(exc)
        raise StateCorruptError(store.path(name), f"is not a sweep ledger ({problem})") from None


def check_ledgers(state_dir: Path) -> list[StateCorruptError]:
    """One :class:`StateCorruptError` per sweep ledger in ``state_dir`` that does not load or is not what this
    module writes (a check of ``tierscope doctor``, whose ``--fix`` moves such a ledger to quarantine)."""
    store = StateStore(state_dir)
    found = []
    for name in store.names():
        if name.startswith(PREFIX):
            try:
                _read(store, name)
            except StateCorruptError as exc:
                found.append(exc)
    return found


def document_name(sweep_id: str) -> str:
    """The state document of sweep ``sweep_id``: ``sweep-<its label>``."""
    return PREFIX + label_value(sweep_id)


class LedgerStore:
    """The ledgers of the dataset at ``root`` (local or ``gs://``)."""

    def __init__(self, root: Path | GsPath | str, lock_timeout: float = 60.0) -> None:
        self.root = as_location(root)
        self.store = StateStore(state_dir(self.root))
        self.lock_timeout = lock_timeout

    def load(self, sweep_id: str) -> Ledger | None:
        """The ledger of ``sweep_id``, None if there is none. Raises :class:`StateCorruptError`."""
        name = document_name(sweep_id)
        try:
            ledger = _read(self.store, name)
        except StateCorruptError as exc:
            raise LedgerCorruptError(exc.path, exc.problem, self.root) from None
        if ledger is None:
            return None
        if ledger.sweep_id != sweep_id:
            raise SweepError(
                f"sweep ids {ledger.sweep_id!r} and {sweep_id!r} share the ledger {self.store.path(name)}; "
                "give the plan another id"
            )
        return ledger

    def save(self, ledger: Ledger) -> None:
        """Replace the ledger's document atomically, holding the dataset's lock (a collect never sees half)."""
        with self._locked():
            self.store.save(document_name(ledger.sweep_id), ledger.to_doc())

    def sweeps(self) -> list[str]:
        """The ids of the sweeps with a ledger here."""
        found = []
        for name in self.store.names():
            if name.startswith(PREFIX):
                try:
                    doc = self.store.load(name)
                except StateCorruptError:  # unreadable: its name is all there is to show
                    found.append(f"{name} (unreadable)")
                    continue
                if doc is not None and isinstance(doc.get("sweep_id"), str):
                    found.append(doc["sweep_id"])
        return found

    @contextmanager
    def _locked(self) -> Iterator[None]:
        if isinstance(self.root, GsPath):
            from tierscope.dataset.lock import locked
            from tierscope.dataset.store import Dataset

            with locked(Dataset(self.root), self.lock_timeout, recover_first=False):
                yield
            return
        from tierscope.dataset.lock import held

        self.root.mkdir(parents=True, exist_ok=True)
        with held(self.root, self.lock_timeout):
            yield

    @contextmanager
    def running(self, sweep_id: str) -> Iterator[None]:
        """Hold this sweep for the ``with`` block: a second ``tierscope sweep`` of it (which could submit what
        this one is submitting) is refused with :class:`SweepBusyError`. ``flock`` held: released by the
        kernel when this process dies, SIGKILL included. (A dataset on Cloud Storage: not held.)"""
        if isinstance(self.root, GsPath):
            yield
            return
        from filelock import FileLock, Timeout

        directory = state_dir(self.root)
        directory.mkdir(parents=True, exist_ok=True)
        lock = FileLock(directory / f".{document_name(sweep_id)}.lock", timeout=0)
        try:
            lock.acquire()
        except Timeout:
            raise SweepBusyError(
                f"sweep {sweep_id} is being run by another tierscope sweep now; wait for it, or follow it with "
                f"tierscope sweep --status {sweep_id}"
            ) from None
        try:
            yield
        finally:
            lock.release()
