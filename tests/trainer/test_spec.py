"""``tierscope spec`` names a job that would run: the image's Python satisfies the package's requires-python,
and the commands that build what the spec points to (the wheel the image installs) work."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support import ROOT
from tierscope.cli import app
from tierscope.trainer import spec
from tierscope.trainer.train import TrainConfig

#: Vertex AI's prebuilt TensorFlow training images (Google's list of prebuilt training containers: all
#: Python 3.10) and AI Platform's last runtime (2.11, Python 3.7): none can install the package.
PREBUILT = [
    "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest",
    "europe-docker.pkg.dev/vertex-ai/training/tf-cpu.2-12.py310:latest",
    "python:3.10-slim",
]


def test_every_image_the_spec_names_runs_a_python_the_package_installs_on() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert spec.requires_python() == pyproject["project"]["requires-python"] == ">=3.11"
    # the image the spec names is built FROM python:3.11-slim: Python 3.11 >= 3.11
    (base,) = re.findall(r"^FROM (\S+)", spec.dockerfile(), flags=re.M)
    assert base == "python:3.11-slim" and spec.image_python(base) == (3, 11) >= spec.minimum_python()
    doc = spec.spec("STANDARD_1", TrainConfig())
    images = {pool["containerSpec"]["imageUri"] for pool in doc["vertex_ai"]["jobSpec"]["workerPoolSpecs"]}
    legacy = doc["ai_platform"]["trainingInput"]
    images |= {legacy[k]["imageUri"] for k in ("masterConfig", "workerConfig", "parameterServerConfig")}
    assert images == {spec.IMAGE}
    assert "runtimeVersion" not in legacy and "pythonVersion" not in legacy  # runtime 2.11 is Python 3.7
    for image in PREBUILT:
        with pytest.raises(spec.ImagePythonError, match=r"runs Python 3\.10, but tierscope needs >=3\.11"):
            spec.vertex_job("BASIC", TrainConfig(), image=image)
    assert spec.check_image("python:3.12") == "python:3.12"


def test_spec_refuses_an_image_whose_python_is_too_old_in_one_line() -> None:
    result = CliRunner().invoke(app, ["spec", "BASIC", "--image", PREBUILT[0]])
    assert result.exit_code == 2
    assert "runs Python 3.10, but tierscope needs >=3.11" in result.output and "Traceback" not in result.output


def test_spec_help_gives_the_build_and_upload_commands() -> None:
    result = CliRunner().invoke(app, ["spec", "--help"], terminal_width=200)
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for command in spec.BUILD_COMMANDS:
        assert command in text, command
    doc = (ROOT / "docs" / "trainer.md").read_text()
    for command in spec.BUILD_COMMANDS:
        assert command in doc, command


def test_the_build_command_makes_the_wheel_the_image_installs(tmp_path: Path) -> None:
    # BUILD_COMMANDS[0], with the build backend taken from this environment instead of downloaded
    assert spec.BUILD_COMMANDS[0] == "pip wheel --no-deps --wheel-dir dist ."
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--wheel-dir", str(tmp_path), "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("tierscope-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        meta = next(archive.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert {"tierscope/trainer/task.py", "tierscope/trainer/Dockerfile", "tierscope/data/tiers.csv"} <= names
    assert "Requires-Python: >=3.11" in meta and "Provides-Extra: trainer" in meta
    # the Dockerfile installs exactly that: the wheel from dist/ with the trainer extra
    assert '"$(ls /tmp/dist/tierscope-*.whl)[trainer]"' in spec.dockerfile()
