"""``tierscope spec TIER``: the job request that runs the reference trainer on a scale tier in the cloud.

Two shapes, for the two services:

- Vertex AI ``CustomJob`` (``jobSpec.workerPoolSpecs``): Vertex AI has no scale tiers, so the
  tier becomes worker pools: pool 0 the chief (the legacy master), pool 1 the workers, pool 2
  the parameter servers. Vertex AI sets ``TF_CONFIG`` (and ``CLUSTER_SPEC``) on every replica;
  :mod:`tierscope.trainer.roles` reads either.
- Legacy AI Platform Training (``trainingInput``): the tier is named as ``scaleTier`` and the
  service picks the machines.

Both run one container image on every replica: ``trainer/Dockerfile`` (``python:3.11-slim`` with the
tierscope wheel and its ``trainer`` extra; its entry point is ``python -m tierscope.trainer.task``),
given the same arguments ``tierscope train local`` gives its tasks. Not a Python package on a prebuilt
image: every prebuilt image that has TensorFlow runs a Python the package does not install on
(Vertex AI's ``tf-cpu.2-17.py310`` and older: 3.10, per the image name and Google's list of prebuilt
training containers; AI Platform's runtime 2.11: 3.7, per its runtime version list), while the package
needs ``requires-python`` >= 3.11. An image whose name says its Python (``...py310``, ``python:3.10``)
is checked against that before a spec is printed.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache
from importlib import metadata
from importlib.resources import files
from typing import Any

from tierscope.trainer.errors import TrainerError
from tierscope.trainer.task import task_args
from tierscope.trainer.tiers import get_tier
from tierscope.trainer.train import TrainConfig

#: Defaults; every one is an option of ``tierscope spec``.
MACHINE_TYPE = "n1-standard-4"
REGION = "us-central1"
#: Where ``trainer/Dockerfile``'s image is pushed: an Artifact Registry repository of your project.
IMAGE = "us-central1-docker.pkg.dev/YOUR_PROJECT/tierscope/trainer:latest"
#: The commands that build and upload the image the spec names (the first is tested; docker is not).
BUILD_COMMANDS = (
    "pip wheel --no-deps --wheel-dir dist .",
    f"docker build -f trainer/Dockerfile -t {IMAGE} .",
    f"docker push {IMAGE}",
)
#: A Python version in an image's name: Vertex AI's ``tf-cpu.2-17.py310``, Docker Hub's ``python:3.11-slim``.
_PYTHON_IN_NAME = re.compile(r"\.py3(\d{1,2})\b|(?:^|/)python:3\.(\d{1,2})\b")


class ImagePythonError(TrainerError, ValueError):
    """The container image runs a Python the tierscope package does not install on."""


def requires_python() -> str:
    """The package's ``requires-python`` (``>=3.11``), from its installed metadata."""
    return metadata.metadata("tierscope")["Requires-Python"] or ""


def minimum_python() -> tuple[int, int]:
    """The lowest Python (major, minor) that :func:`requires_python` allows; only ``>=3.N`` is written there."""
    found = re.fullmatch(r"\s*>=\s*(\d+)\.(\d+)\s*", requires_python())
    if found is None:
        raise ValueError(f"requires-python {requires_python()!r} is not of the form >=3.N")
    return int(found[1]), int(found[2])


def image_python(image: str) -> tuple[int, int] | None:
    """The Python (3, minor) an image's name says it runs, or None when the name does not say."""
    found = _PYTHON_IN_NAME.search(image)
    return None if found is None else (3, int(found[1] or found[2]))


@cache
def dockerfile() -> str:
    """The text of ``trainer/Dockerfile``, the image the default :data:`IMAGE` is built from."""
    return files("tierscope.trainer").joinpath("Dockerfile").read_text(encoding="utf-8")


def check_image(image: str) -> str:
    """``image``, if the Python its name says (if any) satisfies :func:`requires_python`; else raises
    :class:`ImagePythonError` saying what to use instead."""
    python = image_python(image)
    if python is not None and python < minimum_python():
        raise ImagePythonError(
            f"image {image} runs Python {python[0]}.{python[1]}, but tierscope needs {requires_python()}: "
            "build trainer/Dockerfile (Python 3.11) and pass its image (see tierscope spec --help)"
        )
    return image


def vertex_job(
    tier: str,
    config: TrainConfig,
    machine_type: str = MACHINE_TYPE,
    image: str = IMAGE,
    machine_spec: dict[str, Any] | None = None,
    spot: bool = False,
) -> dict[str, Any]:
    """A Vertex AI ``CustomJob`` body whose worker pools have ``tier``'s shape, each running ``image``.

    ``machine_spec``: every pool's ``machineSpec`` as Vertex AI takes it (``machineType`` with
    ``acceleratorType``/``acceleratorCount`` or ``tpuTopology``; the CLI builds it from the machines table),
    else ``{"machineType": machine_type}``. ``spot``: Spot VMs (``scheduling.strategy`` ``SPOT``).
    Raises :class:`tierscope.trainer.tiers.UnknownTierError` for an unknown tier, :class:`ImagePythonError`.
    """
    known = get_tier(tier)
    config = replace(config, tier=known.name)
    args = task_args(config)
    check_image(image)
    spec = dict(machine_spec) if machine_spec else {"machineType": machine_type}

    def pool(replicas: int) -> dict[str, Any]:
        return {
            "machineSpec": dict(spec),
            "replicaCount": str(replicas),
            "containerSpec": {"imageUri": image, "args": args},
        }

    topology = known.topology
    pools = [pool(1)]
    if topology.workers or topology.ps:
        pools.append(pool(topology.workers))
    if topology.ps:
        pools.append(pool(topology.ps))
    job: dict[str, Any] = {"workerPoolSpecs": pools}
    if spot:
        job["scheduling"] = {"strategy": "SPOT"}
    return {"displayName": config.run_id, "jobSpec": job}


def ai_platform_job(tier: str, config: TrainConfig, image: str = IMAGE, region: str = REGION) -> dict[str, Any]:
    """A legacy AI Platform Training job body (``projects.jobs.create``) on scale tier ``tier``, every replica
    running ``image`` (a custom container: no runtime version, whose Python would be 3.7).

    Raises :class:`tierscope.trainer.tiers.UnknownTierError`, :class:`ImagePythonError`.
    """
    known = get_tier(tier)
    config = replace(config, tier=known.name)
    check_image(image)
    topology = known.topology
    replicas = {"masterConfig": {"imageUri": image}}
    if topology.workers:
        replicas["workerConfig"] = {"imageUri": image}
    if topology.ps:
        replicas["parameterServerConfig"] = {"imageUri": image}
    return {
        "jobId": config.run_id.replace("-", "_"),  # job ids allow letters, digits and underscores
        "trainingInput": {"scaleTier": known.name, **replicas, "args": task_args(config), "region": region},
    }


def spec(tier: str, config: TrainConfig, **options: Any) -> dict[str, Any]:
    """Both job bodies: ``{"vertex_ai": {...}, "ai_platform": {...}}``. ``options`` go to the
    function that takes them (``machine_type``, ``machine_spec``, ``spot``, ``image``, ``region``)."""
    vertex_keys = {"machine_type", "image", "machine_spec", "spot"}
    legacy_keys = {"image", "region"}
    unknown = set(options) - vertex_keys - legacy_keys
    if unknown:
        raise TypeError(f"unknown spec options: {', '.join(sorted(unknown))}")
    return {
        "vertex_ai": vertex_job(tier, config, **{k: v for k, v in options.items() if k in vertex_keys}),
        "ai_platform": ai_platform_job(tier, config, **{k: v for k, v in options.items() if k in legacy_keys}),
    }
