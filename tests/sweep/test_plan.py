"""The plan: what plan.toml says becomes configurations with their CustomJob bodies; every mistake is one line
naming the file, the line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sweep.plans import three_configurations
from tierscope.analysis import jobspec
from tierscope.sweep.launchers import label_value, labels
from tierscope.sweep.plan import PlanError, load_plan

PLAN = three_configurations('id = "calib"\nregion = "us-central1"\nbudget = 5', spot=True)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plan.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_configurations_become_custom_job_bodies(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path, PLAN))
    assert plan.sweep_id == "calib" and plan.budget == 5 and plan.minutes == 10 and plan.steps == 60
    assert plan.dataset == tmp_path / "tierscope-data"
    basic, standard, three = plan.configurations
    # BASIC: one chief; STANDARD_1 (tiers.csv): 1 master, 4 workers, 3 parameter servers, as Vertex AI pools
    pools = [p["replicaCount"] for p in standard.job["jobSpec"]["workerPoolSpecs"]]
    assert [p["replicaCount"] for p in basic.job["jobSpec"]["workerPoolSpecs"]] == ["1"]
    assert pools == ["1", "4", "3"]
    args = standard.job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"]
    # the run id: the sweep's id and the configuration's label, so another sweep of STANDARD_1 is another run
    assert standard.run_id == "calib-standard_1" and standard.name == "STANDARD_1"
    assert args[args.index("--run-id") + 1] == "calib-standard_1" and args[args.index("--steps") + 1] == "60"
    assert standard.job["jobSpec"]["scheduling"] == {"timeout": "600s"}
    assert three.job["jobSpec"]["scheduling"] == {"strategy": "SPOT", "timeout": "600s"}
    chief = three.job["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]
    assert chief == {"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1}
    # each body reads back (as `collect --job-spec` reads a CustomJob) as the configuration's hardware
    for c in plan.configurations:
        assert jobspec.read(c.job).hardware.to_json() == c.hardware.to_json()
    assert three.hardware.describe() == (
        "chief 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4) spot; worker 3 x n1-standard-8 (1 x NVIDIA_TESLA_T4) spot"
    )


def test_bare_tier_names_and_default_id(tmp_path: Path) -> None:
    path = write(tmp_path, 'configuration = ["BASIC", "standard_1"]\n[run]\nsteps = 5\n')
    plan = load_plan(path)
    assert [c.name for c in plan.configurations] == ["BASIC", "STANDARD_1"]
    assert plan.sweep_id.startswith("plan-") and len(plan.sweep_id) == len("plan-") + 8
    assert plan.minutes is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('budgett = 3\n[run]\nsteps = 5\n[[configuration]]\ntier = "BASIC"\n', "plan.toml:1: unknown key 'budgett'"),
        ('[run]\nsteps = 5\nminuts = 3\n[[configuration]]\ntier = "BASIC"\n',
         "plan.toml:3: unknown key 'minuts' in [run]"),
        ('[run]\nsteps = 5\n[[configuration]]\ntier = "BASIC"\n[[configuration]]\nname = "x"\nworker = 2\n',
         "plan.toml:7: configuration 2: unknown key 'worker'"),
        ('[run]\nsteps = 5\n[[configuration]]\ntier = "PREMIUM_9"\n',
         "plan.toml:4: configuration 1: unknown scale tier 'PREMIUM_9'"),
        ('[run]\nsteps = 5\n[[configuration]]\nname = "x"\nmachine_type = "n9-huge"\n',
         "plan.toml:5: configuration 1: unknown machine type 'n9-huge'"),
        ('[run]\nsteps = 5\n[[configuration]]\nworkers = 2\n',
         "plan.toml:4: configuration 1: machines described need a name"),
        ('[run]\nsteps = "many"\n', "plan.toml:2: steps must be a whole number"),
        ('[run]\nsteps = 5\n[[configuration]]\ntier = "BASIC"\nworkers = 2\n',
         "plan.toml:4: configuration 1: a tier fixes workers and ps"),
        ("[run\nsteps = 5\n", "plan.toml:1: not valid TOML"),
        ('[run]\nsteps = 5\n', "names no configuration"),
        ('[[configuration]]\ntier = "BASIC"\n', "[run] needs steps"),
        ('[run]\nsteps = 5\n[[configuration]]\nname = "A.b"\n[[configuration]]\nname = "a-b"\n',
         "get the same Vertex AI label 'a-b'"),
        # every key's type and range, at its line, before anything is submitted
        ('configuration = ["BASIC"]\n[run]\nsteps = 5\nminutes = inf\n',
         "plan.toml:4: minutes must be a finite number"),
        ('configuration = ["BASIC"]\n[run]\nsteps = 5\nminutes = nan\n',
         "plan.toml:4: minutes must be a finite number"),
        # 7 days = 10080 minutes
        ('configuration = ["BASIC"]\n[run]\nsteps = 5\nminutes = 1e300\n',
         "plan.toml:4: minutes must be at most 10080"),
        ('budget = inf\nconfiguration = ["BASIC"]\n[run]\nsteps = 5\n', "plan.toml:1: budget must be a finite number"),
        ('configuration = ["BASIC"]\n[run]\nsteps = 5\n[job]\ndata = 5\n', "plan.toml:5: job.data must be one of"),
        ('configuration = ["BASIC"]\n[run]\nsteps = 5\n[job]\ndata = "bogus"\n',
         "plan.toml:5: job.data must be one of 'synthetic', 'mnist', got 'bogus'"),
        ('configuration = ["BASIC"]\n[run]\nminutes = 5\n[job]\nargs = ["--epochs", "1"]\n',
         "plan.toml:5: job.args run a container of your own: name it with job.image"),
        ('[run]\nsteps = 5\n[[configuration]]\nname = "x"\nworkers = 1\nps = 1\nps_machine_type = 5\n',
         "plan.toml:7: configuration 1: ps_machine_type must be a string, got 5"),
    ],
)  # fmt: skip
def test_mistakes_are_one_line_naming_file_line_and_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(PlanError) as caught:
        load_plan(write(tmp_path, text))
    said = str(caught.value)
    assert "\n" not in said
    assert message in said, said


def test_mnist_is_the_trainers_data_set_when_the_plan_says_so(tmp_path: Path) -> None:
    plan = load_plan(write(tmp_path, 'configuration = ["BASIC"]\n[run]\nsteps = 5\n[job]\ndata = "mnist"\n'))
    args = plan.configurations[0].job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"]
    assert args[args.index("--dataset") + 1] == "mnist"


def test_labels_follow_vertex_rules() -> None:
    assert labels("Calib 1", "STANDARD_1") == {"tierscope-sweep": "calib-1", "tierscope-config": "standard_1"}
    long = label_value("x" * 100)
    assert len(long) == 63 and long.startswith("x" * 54 + "-") and long != label_value("x" * 99)


def test_two_names_with_one_vertex_label_refuse_the_sweep_before_anything_is_submitted(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tierscope.cli import app

    # the tier STANDARD_1 and machines named standard_1: both label as "standard_1", so a restarted sweep
    # looking for one by its label would find the other's job
    text = ('dataset = "ds"\nwork_dir = "work"\n[run]\nsteps = 5\n[[configuration]]\ntier = "STANDARD_1"\n'
            '[[configuration]]\nname = "standard_1"\nworkers = 1\n')  # fmt: skip
    path = write(tmp_path, text)
    result = CliRunner().invoke(app, ["sweep", str(path), "--local"])
    assert result.exit_code == 2, result.output
    said = [line for line in result.output.splitlines() if line.strip()]
    assert len(said) == 1, result.output
    # the line of the second one's name (line 8)
    assert said[0] == (
        f"error: {path}:8: configurations 'STANDARD_1' and 'standard_1' get the same Vertex AI label 'standard_1' "
        "(lowercase, other characters as '-'); rename one"
    )
    # nothing submitted, no ledger begun
    assert not (tmp_path / "work").exists() and not (tmp_path / "ds").exists()


def test_a_dataset_holding_the_work_folder_is_refused_at_load(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tierscope.cli import app

    with pytest.raises(PlanError) as caught:
        load_plan(write(tmp_path, 'dataset = "."\nconfiguration = ["BASIC"]\n[run]\nsteps = 5\n'))
    said = str(caught.value)
    assert said.startswith(f"{tmp_path / 'plan.toml'}:1: work_dir {tmp_path / 'runs/sweeps'} lies inside the dataset")
    # --dataset and --report: checked before anything runs too
    path = write(tmp_path, 'configuration = ["BASIC"]\n[run]\nsteps = 5\n')
    for extra in (["--dataset", str(tmp_path)], ["--report", str(tmp_path / "tierscope-data" / "r.html")]):
        result = CliRunner().invoke(app, ["sweep", str(path), "--local", *extra])
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.strip().splitlines()
        assert "lies inside the dataset" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.toml"]
