"""Hostile hardware inputs of ``collect files``: --machine/--accelerator that cannot be, and job specs
with fields of the wrong type, out of bounds or nested without end. Each is a one-line usage error
naming the option or the JSON path, and nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.analysis import machines as m
from tierscope.cli import app


def _log(path: Path) -> Path:
    # 12 records 100 steps apart at 0.25 global steps/s
    path.write_text(
        "".join(
            f"Train [master/0], step {100 * k}:loss:2.000, accuracy:0.500 ({400 * k:.3f} sec) "
            "0.250 global_steps/s, 0.250 local_steps/s\n"
            for k in range(1, 13)
        )
    )
    return path


def _collect(tmp_path: Path, *options: str) -> tuple[int, str]:
    log = _log(tmp_path / "run.log")
    told = CliRunner().invoke(app, ["collect", "files", "-d", str(tmp_path / "ds"), "-q", str(log), *options])
    return told.exit_code, told.stderr


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (
            ["--machine", "a2-highgpu-1g", "--accelerator", "NVIDIA_TESLA_A100:8"],
            "a2-highgpu-1g carries 1 x NVIDIA_TESLA_A100, not 8",
        ),
        (
            ["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_A100:1"],
            "NVIDIA_TESLA_A100 does not attach to n1-standard-8: N1 takes NVIDIA_TESLA_T4",
        ),
        (["--machine", "e2-standard-4", "--accelerator", "NVIDIA_TESLA_T4:1"], "e2-standard-4 takes no GPU"),
        (["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:3"], "takes 1 or 2 or 4 x NVIDIA_TESLA_T4"),
        (["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:"], "'' is not a whole number"),
        (["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:0"], "0 is out of bounds; give one from 1"),
        (
            ["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:99999999999999999999"],
            "1e+20 is out of bounds; give one from 1 to 16",
        ),
        (
            ["--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:1", "--accelerator", "NVIDIA_TESLA_T4:2"],
            "--accelerator given 2 times (NVIDIA_TESLA_T4:1, NVIDIA_TESLA_T4:2); a machine takes one accelerator type",
        ),
    ],
)
def test_hardware_that_cannot_be_is_a_usage_error(tmp_path: Path, options: list[str], said: str) -> None:
    code, err = _collect(tmp_path, *options)
    assert code == 2 and said in err and "Traceback" not in err
    assert not (tmp_path / "ds").exists() or not list((tmp_path / "ds").rglob("*.parquet"))


def test_hardware_that_can_be_is_taken() -> None:
    # two T4s on an N1 (the GPU page allows 1, 2 or 4); a bundled machine type with its own count
    assert m.from_options("n1-standard-8", "NVIDIA_TESLA_T4:2").devices == 2
    assert m.from_options("a2-highgpu-1g", "NVIDIA_TESLA_A100:1").devices == 1
    assert m.from_options("n1-standard-8", "NVIDIA_TESLA_V100").devices == 1


def _job(pool: dict[str, object], **top: object) -> dict[str, object]:
    machine = {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1}
    entry = {"machineSpec": machine, "replicaCount": "1"}
    for key, value in pool.items():
        (machine if key in machine or key == "tpuTopology" else entry)[key] = value
    job: dict[str, object] = {"jobSpec": {"workerPoolSpecs": [entry]}, "startTime": "2026-11-20T09:30:00Z"}
    job.update(top)
    return job


AT = "jobSpec.workerPoolSpecs[0]."


@pytest.mark.parametrize(
    ("job", "said"),
    [
        (_job({}, startTime="yesterday"), "startTime 'yesterday' is not a timestamp like \"2026-10-01T10:00:00Z\""),
        (_job({}, startTime=1700000000), "startTime 1700000000 is not a timestamp"),
        (_job({"machineType": None}), f"{AT}machineSpec has no machineType"),
        (_job({"machineType": 5}), f"{AT}machineSpec machineType 5 is not a name"),
        (_job({"acceleratorCount": float("nan")}), f"{AT}machineSpec.acceleratorCount nan is not a whole number"),
        (_job({"replicaCount": float("inf")}), f"{AT}replicaCount inf is not a whole number"),
        (_job({"replicaCount": "abc"}), f"{AT}replicaCount 'abc' is not a whole number; give one from 1 to 10,000"),
        (_job({"replicaCount": 0}), f"{AT}replicaCount 0 is out of bounds; give one from 1 to 10,000"),
        (_job({"replicaCount": True}), f"{AT}replicaCount True is not a whole number"),
        (_job({"replicaCount": 1.5}), f"{AT}replicaCount 1.5 is not a whole number"),
        (_job({"replicaCount": "9" * 30}), f"{AT}replicaCount 1e+30 is out of bounds"),
        (_job({"acceleratorCount": 1e30}), f"{AT}machineSpec.acceleratorCount 1e+30 is out of bounds"),
        (
            _job({"acceleratorType": "NVIDIA_TESLA_A100"}),
            f"{AT[:-1]}: NVIDIA_TESLA_A100 does not attach to n1-standard-8",
        ),
        (
            {**_job({}), "jobSpec": {**_job({})["jobSpec"], "scheduling": {"strategy": ["SPOT"]}}},  # type: ignore[dict-item]
            "jobSpec.scheduling.strategy ['SPOT'] is not a string like \"SPOT\"",
        ),
    ],
)
def test_a_job_spec_field_of_the_wrong_type_or_size_is_one_line(tmp_path: Path, job: dict, said: str) -> None:
    spec = tmp_path / "job.json"
    spec.write_text(json.dumps(job))  # json writes NaN and Infinity as JavaScript does, as a hostile file would
    code, err = _collect(tmp_path, "--job-spec", str(spec))
    assert code == 2, err
    assert f"{spec}: {said}" in err and "Traceback" not in err


def test_a_job_spec_nested_without_end_is_refused(tmp_path: Path) -> None:
    spec = tmp_path / "deep.json"
    spec.write_text('{"a":' * 50_000 + "1" + "}" * 50_000)
    code, err = _collect(tmp_path, "--job-spec", str(spec))
    assert code == 2 and "is nested too deeply to read" in err and "Traceback" not in err


def test_a_job_spec_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    spec = tmp_path / "job.json"
    spec.write_bytes(b"\xef\xbb\xbf" + json.dumps(_job({"replicaCount": "3", "acceleratorCount": 2})).encode())
    code, err = _collect(tmp_path, "--job-spec", str(spec))
    assert code == 0, err
    summary = CliRunner().invoke(app, ["summary", "--dataset", str(tmp_path / "ds"), "--json"])
    (row,) = json.loads(summary.stdout)
    # 3 replicas x 2 T4s
    assert row["hardware"] == "3 x n1-standard-8 (2 x NVIDIA_TESLA_T4)" and row["devices"] == 6
