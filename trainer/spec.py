"""``tierscope spec TIER``: the job request that runs the reference trainer on a scale tier in the cloud.

Two shapes, for the two services:

- Vertex AI ``CustomJob`` (``jobSpec.workerPoolSpecs``): Vertex AI has no scale tiers, so the
  tier becomes worker pools: pool 0 the chief (the legacy master), pool 1 the workers, pool 2
  the parameter servers. Vertex AI sets ``TF_CONFIG`` (and ``CLUSTER_SPEC``) on every replica;
  :mod:`tierscope.trainer.roles` reads either.
- Legacy AI Platform Training (``trainingInput``): the tier is named as ``scaleTier`` and the
  service picks the machines.

Both run ``python -m tierscope.trainer.task`` from the tierscope source package with the same arguments
``tierscope train local`` gives its tasks.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from tierscope.trainer.task import task_args
from tierscope.trainer.tiers import get_tier
from tierscope.trainer.train import TrainConfig

#: Defaults; every one is an option of ``tierscope spec``.
MACHINE_TYPE = "n1-standard-4"
EXECUTOR_IMAGE = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest"
PACKAGE_URI = "gs://YOUR_BUCKET/tierscope-0.1.0.tar.gz"
REGION = "us-central1"
#: AI Platform Training's last runtime version and its Python.
RUNTIME_VERSION, PYTHON_VERSION = "2.11", "3.7"
TASK_MODULE = "tierscope.trainer.task"


def vertex_job(
    tier: str,
    config: TrainConfig,
    machine_type: str = MACHINE_TYPE,
    image: str = EXECUTOR_IMAGE,
    package_uri: str = PACKAGE_URI,
) -> dict[str, Any]:
    """A Vertex AI ``CustomJob`` body whose worker pools have ``tier``'s shape.

    Raises :class:`tierscope.trainer.tiers.UnknownTierError` for an unknown tier.
    """
    known = get_tier(tier)
    config = replace(config, tier=known.name)
    args = task_args(config)

    def pool(replicas: int) -> dict[str, Any]:
        return {
            "machineSpec": {"machineType": machine_type},
            "replicaCount": str(replicas),
            "pythonPackageSpec": {
                "executorImageUri": image,
                "packageUris": [package_uri],
                "pythonModule": TASK_MODULE,
                "args": args,
            },
        }

    topology = known.topology
    pools = [pool(1)]
    if topology.workers or topology.ps:
        pools.append(pool(topology.workers))
    if topology.ps:
        pools.append(pool(topology.ps))
    return {"displayName": config.run_id, "jobSpec": {"workerPoolSpecs": pools}}


def ai_platform_job(
    tier: str,
    config: TrainConfig,
    package_uri: str = PACKAGE_URI,
    region: str = REGION,
    runtime_version: str = RUNTIME_VERSION,
    python_version: str = PYTHON_VERSION,
) -> dict[str, Any]:
    """A legacy AI Platform Training job body (``projects.jobs.create``) on scale tier ``tier``."""
    known = get_tier(tier)
    config = replace(config, tier=known.name)
    return {
        "jobId": config.run_id.replace("-", "_"),  # job ids allow letters, digits and underscores
        "trainingInput": {
            "scaleTier": known.name,
            "packageUris": [package_uri],
            "pythonModule": TASK_MODULE,
            "args": task_args(config),
            "region": region,
            "runtimeVersion": runtime_version,
            "pythonVersion": python_version,
        },
    }


def spec(tier: str, config: TrainConfig, **options: str) -> dict[str, Any]:
    """Both job bodies: ``{"vertex_ai": {...}, "ai_platform": {...}}``. ``options`` go to the
    function that takes them (``machine_type``, ``image``, ``package_uri``, ``region``, ...)."""
    vertex_keys = {"machine_type", "image", "package_uri"}
    legacy_keys = {"package_uri", "region", "runtime_version", "python_version"}
    unknown = set(options) - vertex_keys - legacy_keys
    if unknown:
        raise TypeError(f"unknown spec options: {', '.join(sorted(unknown))}")
    return {
        "vertex_ai": vertex_job(tier, config, **{k: v for k, v in options.items() if k in vertex_keys}),
        "ai_platform": ai_platform_job(tier, config, **{k: v for k, v in options.items() if k in legacy_keys}),
    }
