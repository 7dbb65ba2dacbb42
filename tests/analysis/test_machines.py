"""A run's hardware as worker pools: machine types, bundled accelerators, TPU slices, legacy tiers."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tierscope.analysis import machines as m
from tierscope.analysis.topology import run_hardware
from tierscope.cli import app


def test_bundled_gpus_and_tpu_slices_count_their_devices() -> None:
    # a2-highgpu-8g bundles 8 A100 40GB (Cyclenerd pricing.yml @fd66b26f: "a100: 8"); one replica
    eight = m.Hardware((m.pool("chief", "a2-highgpu-8g"),))
    assert (eight.device_type, eight.devices) == ("NVIDIA_TESLA_A100", 8)
    # n1-standard-8 with one T4 attached: the accelerator is the pool's, one a replica, 2 replicas -> 2
    t4 = m.Hardware((m.pool("chief", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1),
                     m.pool("worker", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1)))  # fmt: skip
    assert (t4.device_type, t4.devices) == ("NVIDIA_TESLA_T4", 2)
    # v5litepod-8: 8 chips in a 2x4 topology on one ct5lp-hightpu-8t (cloud.google.com/tpu/docs/supported-versions)
    v5e = m.slice_pool("v5litepod-8")
    assert (v5e.machine_type, v5e.devices, v5e.tpu_topology) == ("ct5lp-hightpu-8t", 8, "2x4")
    assert m.slice_pool("v5e-8") == v5e
    # Vertex AI counts TPU v2 in TensorCores: cloud-tpu x TPU_V2 x 8 is 4 chips
    v2 = m.slice_pool("v2-8")
    assert (v2.machine_type, v2.accelerator_count, v2.devices) == ("cloud-tpu", 8, 4)


def test_the_legacy_tiers_are_the_pools_they_were() -> None:
    standard = run_hardware("STANDARD_1", None)
    assert standard is not None and standard.legacy
    assert [(p.role, p.replicas, p.machine_type) for p in standard.pools] == [
        ("master", 1, "complex_model_s"), ("worker", 4, "complex_model_s"), ("ps", 3, "standard")
    ]  # fmt: skip
    assert standard.devices == 0 and standard.device_type is None
    gpu = run_hardware("BASIC_GPU", None)
    assert gpu is not None and (gpu.device_type, gpu.devices) == ("NVIDIA_TESLA_K80", 1)
    tpu = run_hardware("BASIC_TPU", None)  # a master and a Cloud TPU v2 (4 chips) as its worker
    assert tpu is not None and (tpu.device_type, tpu.devices) == ("TPU_V2", 4)
    premium = run_hardware("PREMIUM_1", None)
    assert premium is not None and sum(p.replicas for p in premium.training) == 20
    custom = json.dumps({"master": {"machine_type": "complex_model_s", "count": 1},
                         "worker": {"machine_type": "complex_model_s", "count": 4},
                         "ps": {"machine_type": "standard", "count": 3}})  # fmt: skip
    assert run_hardware("CUSTOM", custom) == standard
    # a tier that is a machine type is one machine of it; a laptop is nothing known
    one = run_hardware("n1-standard-8", None)
    assert one is not None and one.describe() == "1 x n1-standard-8"
    assert run_hardware("local", None) is None


def test_the_topology_json_round_trips_every_pool_field() -> None:
    hw = m.Hardware((m.pool("chief", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1, spot=True, region="europe-west4"),
                     m.slice_pool("v5litepod-8", role="worker")))  # fmt: skip
    assert m.from_topology(hw.to_json()) == hw


def test_unknown_names_list_the_nearest_known() -> None:
    with pytest.raises(m.UnknownMachineError, match=r"'n1-standrd-8'; nearest known: n1-standard-8"):
        m.machine("n1-standrd-8")
    with pytest.raises(m.UnknownMachineError, match="NVIDIA_TESLA_A100"):
        m.accelerator("A100")
    with pytest.raises(m.UnknownMachineError, match="v5litepod-8"):
        m.tpu_slice("v5litepod-9")
    with pytest.raises(m.HardwareError, match="comes with 8 x NVIDIA_TESLA_A100"):
        m.pool("chief", "a2-highgpu-8g", 1, "NVIDIA_TESLA_T4", 1)


def test_an_accelerator_given_as_a_machine_type_names_the_machine_types_that_bundle_it() -> None:
    # `--machine A100` named no machine type at all (it listed the first twelve): the machines table's A2 rows
    # come with NVIDIA_TESLA_A100 (a2-highgpu-1g/2g/4g/8g, in table order), so those are the nearest
    with pytest.raises(m.UnknownMachineError) as raised:
        m.machine("A100")
    assert str(raised.value) == (
        "unknown machine type 'A100'; nearest known: a2-highgpu-1g, a2-highgpu-2g, a2-highgpu-4g, a2-highgpu-8g "
        "(with NVIDIA_TESLA_A100) (`tierscope machines` lists them all)"
    )
    # the near miss: a misspelt machine type is matched by its spelling, no accelerator named
    with pytest.raises(m.UnknownMachineError, match=r"nearest known: n1-standard-8, .*lists them all\)$") as typo:
        m.machine("n1-standrd-8")
    assert "(with " not in str(typo.value)


def test_machines_command_lists_devices_and_refuses_unknown_names() -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["machines", "a2-highgpu-8g", "v5litepod-8", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["a2-highgpu-8g"]["accelerator_count"] == 8 and rows["v5litepod-8"]["chips"] == 8
    assert rows["v5litepod-8"]["host"] == "ct5lp-hightpu-8t"
    unknown = runner.invoke(app, ["machines", "a2-highgpu-9g"])
    assert unknown.exit_code == 2
    assert "nearest known: a2-highgpu-1g" in unknown.stderr or "a2-highgpu" in unknown.stderr


def test_spec_writes_accelerators_tpu_topology_and_spot() -> None:
    runner = CliRunner()

    def pools(*args: str) -> list[dict]:
        result = runner.invoke(app, ["spec", *args, "--service", "vertex"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["jobSpec"]["workerPoolSpecs"]

    # a machine type bundling GPUs names them, or Vertex AI attaches none
    assert pools("--machine-type", "a2-highgpu-1g")[0]["machineSpec"] == {
        "machineType": "a2-highgpu-1g", "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 1
    }  # fmt: skip
    assert pools("--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:1")[0]["machineSpec"] == {
        "machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1
    }  # fmt: skip
    tpu = runner.invoke(app, ["spec", "--tpu", "v5litepod-8", "--spot"])
    job = json.loads(tpu.stdout)
    assert job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"] == {
        "machineType": "ct5lp-hightpu-8t",
        "tpuTopology": "2x4",
    }
    assert job["jobSpec"]["scheduling"] == {"strategy": "SPOT"}
    # a tier's shape, every pool on the machine asked for: STANDARD_1 = 1 chief, 4 workers, 3 ps
    shaped = pools("STANDARD_1", "--machine", "a2-highgpu-1g")
    assert [p["replicaCount"] for p in shaped] == ["1", "4", "3"]
    assert {p["machineSpec"]["acceleratorType"] for p in shaped} == {"NVIDIA_TESLA_A100"}
    bad = runner.invoke(app, ["spec", "--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:x"])
    assert bad.exit_code == 2 and "whole number" in bad.stderr


def test_a_gpu_attached_to_machines_given_as_a_machine_type_says_how_to_attach_it() -> None:
    # `--machine T4` suggested ct4p-hightpu-4t (a TPU v4 host: "t4" inside its name); a T4 comes with no machine
    # type of the table (NVIDIA_TESLA_T4 has none bundling it): it is attached with --accelerator
    with pytest.raises(m.UnknownMachineError) as raised:
        m.machine("T4")
    assert str(raised.value) == (
        "unknown machine type 'T4'; NVIDIA_TESLA_T4 is a GPU attached to a machine type: give the machine type and "
        "--accelerator NVIDIA_TESLA_T4:COUNT (e.g. --machine n1-standard-8 --accelerator NVIDIA_TESLA_T4:1) "
        "(`tierscope machines` lists them all)"
    )
    assert "ct4p" not in str(raised.value)
