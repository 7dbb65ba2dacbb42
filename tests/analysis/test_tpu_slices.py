"""Today's TPU slices: each resolves to its chips, topology and host machine type, and is priced a chip."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tierscope.analysis import jobspec
from tierscope.analysis import machines as m
from tierscope.analysis import prices as p
from tierscope.analysis.plan import Group, device_configurations
from tierscope.cli import app

ON = date(2026, 12, 6)

# slice: (chips, topology, host machine type, region with a price row). Chips and hosts: Cloud TPU pages
# (v5p, v6e, supported TPU configurations, types and topologies) and AI-Hypercomputer/xpk
# system_characteristics.py @02b0c092; v4 is priced in us-central2 only (its one shipped row).
SLICES = {
    "v4-8": (4, "2x2x1", "ct4p-hightpu-4t", "us-central2"),
    "v4-16": (8, "2x2x2", "ct4p-hightpu-4t", "us-central2"),
    "v4-32": (16, "2x2x4", "ct4p-hightpu-4t", "us-central2"),
    "v5p-8": (4, "2x2x1", "ct5p-hightpu-4t", "us-central1"),
    "v5p-16": (8, "2x2x2", "ct5p-hightpu-4t", "us-central1"),
    "v5p-32": (16, "2x2x4", "ct5p-hightpu-4t", "us-central1"),
    "v5litepod-1": (1, "1x1", "ct5lp-hightpu-1t", "us-central1"),
    "v5litepod-4": (4, "2x2", "ct5lp-hightpu-4t", "us-central1"),
    "v5litepod-8": (8, "2x4", "ct5lp-hightpu-8t", "us-central1"),
    "v5litepod-16": (16, "4x4", "ct5lp-hightpu-4t", "us-central1"),
    "v6e-1": (1, "1x1", "ct6e-standard-1t", "us-central1"),
    "v6e-4": (4, "2x2", "ct6e-standard-4t", "us-central1"),
    "v6e-8": (8, "2x4", "ct6e-standard-4t", "us-central1"),
    "v6e-16": (16, "4x4", "ct6e-standard-4t", "us-central1"),
}


@pytest.mark.parametrize("name", list(SLICES))
def test_every_slice_resolves_and_is_priced_a_chip(name: str) -> None:
    chips, topology, host, region = SLICES[name]
    spec = m.tpu_slice(name)
    pool = m.slice_pool(name)
    assert (pool.machine_type, pool.devices, pool.tpu_topology) == (host, chips, topology)
    assert spec.chips == chips and m.topology_chips(topology) == chips
    assert spec.source  # every row cites where its facts come from
    # the job spec Vertex AI is given: the host machine type and the topology, no accelerator count
    assert m.machine_spec(pool) == {"machineType": host, "tpuTopology": topology}
    # a TPU VM is priced by its chips alone: chips x the generation's chip row, no host row
    quote = p.quote(m.Hardware((pool,)), ON, region, p.PriceTable())
    chip = p.PriceTable().lookup(spec.accelerator or "", region, "on-demand", ON)
    assert chip is not None and quote.usd_per_hour == pytest.approx(chips * chip.usd_per_hour)
    assert [u.row.resource for u in quote.rows] == [spec.accelerator]


def test_two_slices_by_hand() -> None:
    table = p.PriceTable()
    # v5p-16: 8 chips x TPU_V5P 4.20 (skypilot-catalog @006059e0: v5p-1024, 512 chips, 2150.40/h) = 33.60
    v5p = p.quote(m.Hardware((m.slice_pool("v5p-16"),)), ON, "us-central1", table)
    assert v5p.usd_per_hour == pytest.approx(33.6)
    # v4-32 spot in us-central2: 16 chips x TPU_V4_POD spot 0.9215 = 14.744
    v4 = p.quote(m.Hardware((m.slice_pool("v4-32", spot=True),)), ON, "us-central2", table)
    assert v4.usd_per_hour == pytest.approx(14.744)


def test_a_job_spec_on_a_multi_host_slice_counts_the_topologys_chips() -> None:
    # ct5p-hightpu-4t carries 4 chips a host; tpuTopology 2x2x2 is a v5p-16, 8 chips over 2 hosts
    job = {"jobSpec": {"workerPoolSpecs": [{"machineSpec": {"machineType": "ct5p-hightpu-4t", "tpuTopology": "2x2x2"},
                                            "replicaCount": "1"}]}}  # fmt: skip
    read = jobspec.read(job)
    assert read.hardware.pools == (m.slice_pool("v5p-16"),)
    assert read.hardware.devices == 8
    # 2x3 is 6 chips: not whole hosts of 4
    job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["tpuTopology"] = "2x3"  # type: ignore[index]
    with pytest.raises(jobspec.JobSpecError, match="6 chips, not whole hosts"):
        jobspec.read(job)
    job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["tpuTopology"] = "two"  # type: ignore[index]
    with pytest.raises(jobspec.JobSpecError, match="not sides joined by x"):
        jobspec.read(job)


def test_a_v6e_8_run_is_collected_and_summarised_at_its_chips_price(tmp_path: Path) -> None:
    runner = CliRunner()
    log = tmp_path / "x.log"
    log.write_text("".join(f"INFO:tensorflow:loss = 0.5, step = {100 * k} (1.000 sec)\n" for k in range(1, 21)))
    ds = str(tmp_path / "ds")
    told = runner.invoke(app, ["collect", "files", str(log), "-d", ds, "--run-id", "a", "--tpu", "v6e-8", "-q"])
    assert told.exit_code == 0, told.output
    summary = runner.invoke(app, ["summary", "-d", ds, "--json"])
    assert summary.exit_code == 0, summary.output
    (row,) = json.loads(summary.stdout)
    # v6e-8 = 8 chips x TPU_V6E 2.70 (skypilot-catalog @006059e0: tpu-v6e-8 21.60/h) = 21.60 USD/h
    assert row["usd_per_hour"] == pytest.approx(21.6)


def test_spec_gives_a_vertex_worker_pool_for_a_v5p_slice() -> None:
    told = CliRunner().invoke(app, ["spec", "--tpu", "v5p-8", "--service", "vertex"])
    assert told.exit_code == 0, told.output
    (pool,) = json.loads(told.stdout)["jobSpec"]["workerPoolSpecs"]
    # v5p-8: one ct5p-hightpu-4t, 4 chips in 2x2x1 (cloud.google.com/tpu/docs/v5p)
    assert pool["machineSpec"] == {"machineType": "ct5p-hightpu-4t", "tpuTopology": "2x2x1"}
    assert pool["replicaCount"] == "1"


def test_each_unmeasured_tpu_configuration_is_offered_once() -> None:
    # v5e is sold as slices v5litepod-1/4/8/16 on host machine types ct5lp-hightpu-1t/4t/8t; the 1-chip machine
    # and the 1-chip slice are one configuration. Measured at 4 and 8 chips, what is left to predict is 1 chip
    # and 16 chips (4x4), each once.
    measured = pl.DataFrame({"accelerator": ["TPU_V5_LITEPOD"] * 2, "devices": [4, 8], "hardware": [None, None]})
    found = [h.describe() for h in device_configurations(Group("device", "TPU_V5_LITEPOD"), measured)]
    assert sorted(found) == [
        "1 x ct5lp-hightpu-1t (1 x TPU_V5_LITEPOD, 1x1)",
        "1 x ct5lp-hightpu-4t (16 x TPU_V5_LITEPOD, 4x4)",
    ]
