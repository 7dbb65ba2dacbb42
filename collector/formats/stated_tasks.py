"""Tasks a file states rather than logs: a job's status names replicas that left no line in it.

- A Cloud ML Engine / AI Platform job error names each replica that failed: ``The replica worker 4
  exited with a non-zero status of 1`` is worker 4 (one error message may name several).
- ``kubectl describe tfjob``'s ``Replica Statuses:`` block lists each replica type (``Chief``,
  ``Master``, ``PS``, ``Worker``, ``Evaluator``) with its ``Active``, ``Succeeded`` and ``Failed``
  counts. A type with *n* replicas in all is tasks 0 .. *n*-1 (the training operator indexes a type's
  replicas from 0: pods ``<job>-worker-0``, ``-1``, ..., github.com/kubeflow/training-operator,
  ``pkg/controller.v1/tensorflow``); a type listed with no count is the role, its tasks unknown.

These are tasks of the job, not lines of the file: :mod:`tierscope.collector.explain` adds them to a
file's tasks so that a status page without a log line still says which tasks the job had.
"""

from __future__ import annotations

import re

import polars as pl

from tierscope.dataset.schema import ROLES

_ROLE = "|".join(ROLES)
_REPLICA_EXIT = rf"(?i:the replica) (?P<role>{_ROLE}) (?P<index>\d+) (?:ran out-of-memory and )?exited\b"
_BLOCK = re.compile(r"^(?P<indent>\s*)Replica Statuses:\s*$")
_TYPE = re.compile(r"^(?P<indent>\s*)(?P<type>Chief|Master|PS|Worker|Evaluator):\s*$")
_COUNT = re.compile(r"^\s*(?:Active|Succeeded|Failed):\s+(?P<n>\d+)\s*$")
#: More replicas than any job has: a count beyond it is no count of tasks (and would list that many).
MOST_REPLICAS = 100_000


def stated_tasks(messages: pl.Series) -> set[str]:
    """The tasks ``messages`` (bare messages, after their envelopes) state, as ``role/index`` or
    ``role`` (index unknown) labels."""
    labels: set[str] = set()
    exits = messages.str.extract_all(_REPLICA_EXIT).explode().drop_nulls()
    for text in exits.to_list():
        _, _, role, index, *_ = text.split()
        labels.add(f"{role.lower()}/{int(index)}")
    if messages.str.contains("Replica Statuses:", literal=True).any():
        labels |= _replica_statuses(messages.to_list())
    return labels


def _replica_statuses(lines: list[str | None]) -> set[str]:
    """The tasks of each ``Replica Statuses:`` block in ``lines``: its lines indented deeper than it."""
    labels: set[str] = set()
    block: int | None = None
    counts: dict[str, int] = {}
    current = ""
    for line in [*lines, ""]:
        text = line or ""
        indent = len(text) - len(text.lstrip(" "))
        if block is not None and (not text.strip() or indent <= block):
            labels |= _labels(counts)
            block, counts = None, {}
        if m := _BLOCK.match(text):
            block = len(m["indent"])
        elif block is not None and (m := _TYPE.match(text)):
            role = m["type"].lower()
            counts.setdefault(role, 0)
            current = role
        elif block is not None and counts and (m := _COUNT.match(text)):
            counts[current] += int(m["n"])
    return labels


def _labels(counts: dict[str, int]) -> set[str]:
    got: set[str] = set()
    for role, n in counts.items():
        got |= {f"{role}/{i}" for i in range(n)} if 0 < n <= MOST_REPLICAS else {role}
    return got
