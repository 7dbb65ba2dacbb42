"""What the trainer and the collector share (tierscope.contract), the one atomic write
(tierscope.atomic), the one tier table (tierscope.tiertable), and doctor's state checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import typing
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.support.ingest_helpers import collect, write_steps
from tierscope import atomic, tiertable
from tierscope.analysis.topology import load_tiers, training_tasks
from tierscope.cli import app
from tierscope.collector.collect import STATE_CHECKS, runs_from_paths
from tierscope.contract import LOCAL_TIER_PATTERN, RUN_FILE, RunDoc, is_local_tier
from tierscope.dataset import doctor
from tierscope.dataset.store import Dataset
from tierscope.trainer.launch import launch_local
from tierscope.trainer.tiers import Topology, UnknownTierError, get_tier, tiers
from tierscope.trainer.train import TrainConfig

#: What a TensorFlow task must not pay for at import.
HEAVY = ("polars", "pyarrow", "tierscope.collector", "tierscope.dataset", "tierscope.analysis", "tierscope.reports")


@pytest.mark.parametrize(
    "modules",
    [
        ("tierscope.trainer.steplog",),
        # task's own module-level imports (python -m tierscope.trainer.task), and the rest of the room.
        ("tierscope.trainer.task",),
        ("tierscope.trainer.launch", "tierscope.trainer.spec", "tierscope.trainer.tiers", "tierscope.trainer.bench"),
    ],
)
def test_the_trainer_imports_no_polars_and_no_collector(modules: tuple[str, ...], tmp_path: Path) -> None:
    code = (
        "import importlib, json, sys\n"
        f"for m in {list(modules)!r}: importlib.import_module(m)\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('polars', 'pyarrow') "
        f"or any(m == h or m.startswith(h + '.') for h in {list(HEAVY)!r}))))\n"
    )
    # Run outside the repository: from its root, "-c" would put the tierscope/ folder of the
    # working tree first on sys.path, hiding the installed package's rooms.
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True, cwd=tmp_path
    )
    assert json.loads(done.stdout) == []


@pytest.mark.parametrize(
    ("tier", "local"),
    [
        ("local", True),  # the 2016 laptop
        ("LOCAL", True),
        ("local-BASIC", True),  # tierscope train local
        ("Local-standard_1", True),
        ("local-", True),
        ("localhost", False),  # a name that merely starts the same way
        ("my-local", False),
        ("BASIC", False),
        ("", False),
        (None, False),
    ],
)
def test_one_local_rule_in_python_and_in_polars(tier: str | None, local: bool) -> None:
    assert is_local_tier(tier) is local
    in_polars = pl.Series("tier", [tier], pl.String).str.contains(LOCAL_TIER_PATTERN).fill_null(False)
    assert in_polars.to_list() == [local]


def test_run_json_is_the_contract_and_the_collector_reads_it(tmp_path: Path) -> None:
    out = tmp_path / "r1"
    run = launch_local(
        TrainConfig(run_id="r1", tier="local-BASIC"),
        Topology(),
        out,
        timeout_s=60,
        command=lambda config: [sys.executable, "-c", "pass"],
    )
    assert run.status == "finished"
    doc = json.loads((out / RUN_FILE).read_text())
    assert set(doc) == set(typing.get_type_hints(RunDoc))  # every field written is documented, and only those
    # A killed write of run.json leaves a temporary file: it is neither a log nor the run's description.
    (out / f"{atomic.TMP_PREFIX}0badcafe-{RUN_FILE}").write_text("{")
    (spec,) = runs_from_paths([out], None, None, None)
    assert (spec.run_id, spec.tier, spec.ran_on) == ("r1", "local-BASIC", doc["host"])
    assert [p.name for p in spec.files] == ["chief-0.jsonl", "launcher.jsonl"]


def test_atomic_write_keeps_the_old_file_when_the_rename_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "sub" / "doc.json"
    atomic.write_text_atomic(target, "old")
    assert target.read_text() == "old" and os.listdir(target.parent) == ["doc.json"]

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        atomic.write_text_atomic(target, "new")
    assert target.read_text() == "old" and os.listdir(target.parent) == ["doc.json"]  # no .tmp-* left


def test_trainer_and_analysis_read_the_same_tier_table() -> None:
    # Training tasks = master + workers: BASIC 1, STANDARD_1 1 + 4 = 5, PREMIUM_1 1 + 19 = 20.
    tasks = dict(training_tasks(load_tiers(), key="tier").iter_rows())
    assert {name: 1 + t.topology.workers for name, t in tiers().items()} == {
        "BASIC": 1,
        "STANDARD_1": 5,
        "PREMIUM_1": 20,
    }
    assert all(tasks[name] == 1 + t.topology.workers for name, t in tiers().items())
    # The table's GPU and TPU tiers are analysis's (priced, never predicted), not the CPU trainer's.
    assert {"BASIC_GPU", "BASIC_TPU"} <= set(tasks) and not {"BASIC_GPU", "BASIC_TPU"} & set(tiers())
    with pytest.raises(UnknownTierError, match=r"BASIC_TPU runs on cloud_tpu.*CPU tiers: BASIC, STANDARD_1, PREMIUM_1"):
        get_tier("basic_tpu")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tier,role,count,machine_type\n", r"t\.csv:1: the tier table has no column source"),
        ("tier,role,count,machine_type,source\nX,master,1,m,s\nX,chief,1,m,s\n", r"t\.csv:3: .*role 'chief'"),
        ("tier,role,count,machine_type,source\nX,master,one,m,s\n", r"t\.csv:2: count 'one' of X master"),
        ("tier,role,count,machine_type,source\nX,ps,-1,m,s\n", r"t\.csv:2: count '-1'"),
        ("tier,role,count,machine_type,source\nX,ps,1,m,s\nx,ps,2,m,s\n", r"t\.csv:3: tier X lists role ps twice"),
    ],
)
def test_a_broken_tier_table_names_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(tiertable.TierTableError, match=message):
        tiertable.load(path)


def test_doctor_runs_the_collectors_state_checks(tmp_path: Path) -> None:
    ds = Dataset(tmp_path / "ds")
    log = tmp_path / "a.log"
    write_steps(log, range(1, 4))
    collect(ds, log, run_id="a")
    offsets = ds.state_dir / "files.json"
    offsets.write_text('{"version": 1, "files": [{"bogus": 1}]}')  # a JSON object, not file offsets
    assert doctor.check(ds).problems == []  # the dataset room alone knows JSON, not what ingest writes
    (problem,) = doctor.check(ds, STATE_CHECKS).problems
    assert problem.path == offsets and problem.problem.startswith("is not a file-offsets document")
    result = CliRunner().invoke(app, ["doctor", "-d", str(ds.root)])
    assert result.exit_code == 1 and "files.json: is not a file-offsets document" in result.output
