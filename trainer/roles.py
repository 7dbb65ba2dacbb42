"""Who am I in the cluster: a task's role and index from ``TF_CONFIG`` or Vertex AI's ``CLUSTER_SPEC``.

Both are JSON in an environment variable. ``TF_CONFIG`` (TensorFlow, AI Platform, and
Vertex AI for TensorFlow containers)::

    {"cluster": {"chief": ["h0:2222"], "worker": ["h1:2222", "h2:2222"], "ps": ["h3:2222"]},
     "task": {"type": "worker", "index": 1}}

Legacy AI Platform (and the 2016 CloudML beta) called the chief ``master``. Vertex AI's
``CLUSTER_SPEC`` names worker pools instead of roles::

    {"cluster": {"workerpool0": [...], "workerpool1": [...], "workerpool2": [...]},
     "task": {"type": "workerpool1", "index": 0}}

where pool 0 is the chief, pool 1 the workers, pool 2 the parameter servers and pool 3
the evaluators. :func:`task_from_env` reads either (``TF_CONFIG`` wins) and returns a
:class:`TaskSpec` whose ``cluster`` uses TensorFlow 2's names (``master`` -> ``chief``) while
``role`` keeps the name the platform used, so the step log says what the job said.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from tierscope.trainer.errors import TrainerError

TF_CONFIG = "TF_CONFIG"
CLUSTER_SPEC = "CLUSTER_SPEC"

#: Vertex AI worker pool -> TensorFlow role.
VERTEX_POOLS = {"workerpool0": "chief", "workerpool1": "worker", "workerpool2": "ps", "workerpool3": "evaluator"}
#: Legacy name -> TensorFlow 2 name.
TF_NAMES = {"master": "chief"}
KNOWN_ROLES = ("chief", "master", "worker", "ps", "evaluator")

Strategy = Literal["single", "mirrored", "ps"]
STRATEGIES: tuple[Strategy, ...] = ("single", "mirrored", "ps")


class ClusterConfigError(TrainerError, ValueError):
    """``TF_CONFIG`` / ``CLUSTER_SPEC`` is not JSON, lacks a field, or names a task not in the cluster."""


@dataclass(frozen=True)
class TaskSpec:
    """This task: ``role`` as the platform named it (``master``, ``chief``, ``worker``, ``ps``,
    ``evaluator``), ``index`` within the role, and the whole ``cluster`` keyed by TensorFlow 2
    role names (``chief``, ``worker``, ``ps``, ``evaluator``) with ``host:port`` lists."""

    role: str
    index: int
    cluster: dict[str, list[str]] = field(default_factory=dict)

    @property
    def tf_role(self) -> str:
        """The role as TensorFlow 2 names it (``master`` -> ``chief``)."""
        return TF_NAMES.get(self.role, self.role)

    @property
    def is_chief(self) -> bool:
        """The chief, or worker 0 of a cluster without one (TensorFlow's rule)."""
        if self.tf_role == "chief":
            return True
        return not self.cluster.get("chief") and self.tf_role == "worker" and self.index == 0

    def count(self, role: str) -> int:
        """How many tasks of TensorFlow role ``role`` the cluster has."""
        return len(self.cluster.get(role, []))


#: The task of a run without a cluster (``BASIC``, a laptop).
SINGLE = TaskSpec(role="master", index=0, cluster={})


def strategy_for(cluster: Mapping[str, list[str]]) -> Strategy:
    """The ``tf.distribute`` strategy a cluster calls for: ``ps`` when it has parameter servers,
    ``mirrored`` when it has more than one training task, ``single`` otherwise."""
    if cluster.get("ps"):
        return "ps"
    if len(cluster.get("chief", [])) + len(cluster.get("worker", [])) > 1:
        return "mirrored"
    return "single"


def _parse(text: str, variable: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClusterConfigError(
            f"{variable} is not valid JSON ({exc.msg} at column {exc.colno}): {text[:200]!r}"
        ) from None
    if not isinstance(doc, dict):
        raise ClusterConfigError(f"{variable} must be a JSON object, got {type(doc).__name__}")
    return doc


def _task_from(doc: Mapping[str, Any], variable: str, rename: Mapping[str, str]) -> TaskSpec:
    raw_cluster = doc.get("cluster") or {}
    if not isinstance(raw_cluster, dict):
        raise ClusterConfigError(f"{variable}: 'cluster' must be an object of role -> [host:port, ...]")
    cluster: dict[str, list[str]] = {}
    for name, hosts in raw_cluster.items():
        role = rename.get(name, name)
        if role not in KNOWN_ROLES:
            raise ClusterConfigError(
                f"{variable}: unknown role {name!r} in 'cluster' (expected {', '.join(rename or KNOWN_ROLES)})"
            )
        if isinstance(hosts, dict):  # TF_CONFIG allows {"0": "h:p", ...} for sparse clusters
            hosts = [hosts[k] for k in sorted(hosts, key=int)]
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            raise ClusterConfigError(f"{variable}: cluster[{name!r}] must be a list of 'host:port' strings")
        cluster[TF_NAMES.get(role, role)] = list(hosts)
    task = doc.get("task")
    if not isinstance(task, dict) or "type" not in task:
        raise ClusterConfigError(f"{variable}: missing 'task' with 'type' and 'index'")
    role = rename.get(str(task["type"]), str(task["type"]))
    if role not in KNOWN_ROLES:
        raise ClusterConfigError(f"{variable}: unknown task type {task['type']!r}")
    index = task.get("index", 0)
    if isinstance(index, bool) or not isinstance(index, int | str) or not str(index).isdigit():
        raise ClusterConfigError(f"{variable}: task index {index!r} is not a whole number >= 0")
    index = int(index)
    hosts = cluster.get(TF_NAMES.get(role, role), [])
    if cluster and index >= len(hosts):
        raise ClusterConfigError(
            f"{variable}: task {task['type']}/{index} is not in the cluster "
            f"({task['type']} has {len(hosts)} task{'s' if len(hosts) != 1 else ''})"
        )
    return TaskSpec(role=role, index=index, cluster=cluster)


def parse_tf_config(text: str) -> TaskSpec:
    """The task described by a ``TF_CONFIG`` value. Raises :class:`ClusterConfigError`."""
    return _task_from(_parse(text, TF_CONFIG), TF_CONFIG, {})


def parse_cluster_spec(text: str) -> TaskSpec:
    """The task described by a Vertex AI ``CLUSTER_SPEC`` value. Raises :class:`ClusterConfigError`."""
    return _task_from(_parse(text, CLUSTER_SPEC), CLUSTER_SPEC, VERTEX_POOLS)


def task_from_env(env: Mapping[str, str] | None = None) -> TaskSpec:
    """This process's task from ``TF_CONFIG``, else ``CLUSTER_SPEC``, else :data:`SINGLE`."""
    env = os.environ if env is None else env
    if env.get(TF_CONFIG, "").strip():
        spec = parse_tf_config(env[TF_CONFIG])
        # An empty cluster is TensorFlow's way of saying "no cluster"; keep the platform's name.
        return spec if spec.cluster else TaskSpec(role=spec.role, index=spec.index)
    if env.get(CLUSTER_SPEC, "").strip():
        return parse_cluster_spec(env[CLUSTER_SPEC])
    return SINGLE


def tf_config(cluster: Mapping[str, list[str]], role: str, index: int) -> str:
    """The ``TF_CONFIG`` JSON for task ``role/index`` of ``cluster`` (what the local launcher sets)."""
    return json.dumps({"cluster": dict(cluster), "task": {"type": role, "index": index}}, sort_keys=True)
