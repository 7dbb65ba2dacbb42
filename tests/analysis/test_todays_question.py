"""Today's question: 1 x T4, 1 x A100, 8 x A100 or a v5e-8, which reaches 100,000 steps in 72 h for the least?

Four hand-made runs, each a short log (the 2016 text format, one constant rate) and its hardware, collected
through the collector and answered through the CLI. Every figure is computed by hand below from the steady
rate `summary --json` reports and the cited price rows of analysis/data/prices.csv (us-central1, on-demand,
valid from 2026-07-30, Compute Engine prices):

- n1-standard-8      0.379998 /h  Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml @fd66b26f
- NVIDIA_TESLA_T4    0.35 /GPU-h  skypilot-org/skypilot-catalog catalogs/v8/gcp/vms.csv @006059e0
- a2-highgpu-1g      0.73948 /h   (host; skypilot-catalog @006059e0)
- a2-highgpu-8g      5.91582 /h   (host; skypilot-catalog @006059e0)
- NVIDIA_TESLA_A100  2.93391 /GPU-h (skypilot-catalog @006059e0)
- TPU_V5_LITEPOD     1.20 /chip-h (skypilot-catalog @006059e0); a v5litepod-8 is 8 chips, no host row
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tierscope.analysis import machines as m
from tierscope.cli import app
from tierscope.collector.collect import collect_runs
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.store import Dataset

#: run id -> (steady global steps/s its log states, hardware)
RUNS = {
    "t4": (0.25, m.Hardware((m.pool("chief", "n1-standard-8", 1, "NVIDIA_TESLA_T4", 1),))),
    "a100": (1.0, m.Hardware((m.pool("chief", "a2-highgpu-1g"),))),
    "a100x8": (6.4, m.Hardware((m.pool("chief", "a2-highgpu-8g"),))),
    "v5e8": (2.5, m.Hardware((m.slice_pool("v5litepod-8"),))),
}
RAN = date(2026, 11, 20)


def write_log(path: Path, rate: float, lines: int = 12) -> None:
    """``lines`` records 100 steps apart at ``rate`` global steps/s, elapsed time step / rate."""
    path.write_text(
        "".join(
            f"Train [master/0], step {100 * k}:loss:2.000, accuracy:0.500 ({100 * k / rate:.3f} sec) "
            f"{rate:.3f} global_steps/s, {rate:.3f} local_steps/s\n"
            for k in range(1, lines + 1)
        )
    )


def make_dataset(root: Path, runs: dict[str, tuple[float, m.Hardware]], ran: date = RAN) -> Path:
    specs = []
    for run_id, (rate, hardware) in runs.items():
        log = root / f"{run_id}.log"
        write_log(log, rate)
        specs.append(RunSpec(run_id=run_id, tier=None, files=[log], date=ran, topology=hardware.to_json()))
    dataset = root / "ds"
    collect_runs(Dataset(dataset), specs)
    return dataset


def invoke(*args: str, code: int = 0) -> str:
    """The command's stdout; ``code``: the exit status it must end with (3: recommend found nothing that meets)."""
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})
    assert result.exit_code == code, result.output
    return result.stdout


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_dataset(tmp_path_factory.mktemp("today"), RUNS)


def test_recommend_picks_the_cheapest_that_meets_the_deadline(dataset: Path) -> None:
    summary = {r["run_id"]: r for r in json.loads(invoke("summary", "--dataset", str(dataset), "--json"))}
    rate = {run: summary[run]["steady_global_steps_per_s"] for run in RUNS}
    startup = {run: summary[run]["startup_s"] or 0.0 for run in RUNS}
    # the steady rates are the logs' own (each line states it and the elapsed time agrees)
    assert rate == pytest.approx({"t4": 0.25, "a100": 1.0, "a100x8": 6.4, "v5e8": 2.5})
    # USD an hour, from the rows above:
    #   t4     0.379998 + 1 x 0.35          = 0.729998
    #   a100   0.73948  + 1 x 2.93391       = 3.67339
    #   a100x8 5.91582  + 8 x 2.93391       = 5.91582 + 23.47128 = 29.3871
    #   v5e8   8 x 1.20                     = 9.60
    per_hour = {"t4": 0.729998, "a100": 3.67339, "a100x8": 29.3871, "v5e8": 9.6}
    # hours to 100,000 steps = (start-up + 100,000 / rate) / 3600 (start-up 0 here: the first line is on pace)
    #   t4 400,000 s = 111.11 h (misses 72 h); a100 100,000 s = 27.78 h; a100x8 15,625 s = 4.34 h;
    #   v5e8 40,000 s = 11.11 h
    hours = {run: (startup[run] + 100_000 / rate[run]) / 3600 for run in RUNS}
    assert hours == pytest.approx({"t4": 111.111, "a100": 27.7778, "a100x8": 4.34028, "v5e8": 11.1111}, rel=1e-4)
    # USD to 100,000 steps: t4 81.11 (too slow), a100 27.7778 x 3.67339 = 102.04, v5e8 11.1111 x 9.6 = 106.67,
    # a100x8 4.34028 x 29.3871 = 127.55: the cheapest that meets 72 h is a100, USD 102.04
    usd = {run: hours[run] * per_hour[run] for run in RUNS}
    assert usd == pytest.approx({"t4": 81.111, "a100": 102.039, "a100x8": 127.548, "v5e8": 106.667}, rel=1e-4)
    doc = json.loads(invoke("recommend", "--dataset", str(dataset), "--steps", "100000", "--deadline", "72h", "--json"))
    assert doc["choice"]["candidate"] == "a100"
    assert doc["choice"]["usd"] == pytest.approx(usd["a100"]) and doc["choice"]["hours"] == pytest.approx(hours["a100"])
    measured = {c["candidate"]: c for c in doc["candidates"] if c["basis"] == "measured"}
    assert {run: c["usd_per_hour"] for run, c in measured.items()} == pytest.approx(per_hour)
    assert {run: c["meets"] for run, c in measured.items()} == {"t4": False, "a100": True, "a100x8": True,
                                                                  "v5e8": True}  # fmt: skip
    # every price names its rows: resource, region, date and source
    rows = measured["a100x8"]["price_rows"]
    assert "1 x a2-highgpu-8g us-central1 on-demand 5.91582/h from 2026-07-30 (" in rows
    assert "8 x NVIDIA_TESLA_A100 us-central1 on-demand 2.93391/h from 2026-07-30 (" in rows
    assert "skypilot-org/skypilot-catalog" in rows
    # measured configurations first, then the predictions within the A100 type (fitted on 1 and 8 GPUs)
    bases = [c["basis"] for c in doc["candidates"]]
    assert bases[:4] == ["measured"] * 4 and set(bases[4:]) == {"predicted (amdahl)"}
    predicted = {c["devices"] for c in doc["candidates"] if c["basis"] != "measured"}
    assert predicted == {2, 4, 16} and all(c["accelerator"] == "NVIDIA_TESLA_A100" for c in doc["candidates"][4:])


def test_a_quota_refuses_eight_a100s_and_says_why(dataset: Path) -> None:
    args = ["recommend", "--dataset", str(dataset), "--steps", "100000", "--deadline", "72h"]
    doc = json.loads(invoke(*args, "--quota", "NVIDIA_A100_GPUS=4", "--json"))
    by = {c["candidate"]: c for c in doc["candidates"]}
    assert by["a100x8"]["refused"] == "needs 8 NVIDIA_TESLA_A100_GPUS, above the quota of 4"
    assert by["a100x8"]["meets"] is False and by["a100"]["refused"] is None
    assert doc["choice"]["candidate"] == "a100"
    table = invoke(*args, "--quota", "NVIDIA_A100_GPUS=4")
    assert "refused: needs 8 NVIDIA_TESLA_A100_GPUS, above the quota of 4" in table
    # a deadline only 8 x A100 meets (100,000 / 6.4 = 4.34 h < 5 h; v5e8 11.11 h; the predicted 4 x A100
    # 4 / (1 + 3 x 0.25 / 7) = 3.613 steps/s: 7.69 h): refused, so nothing meets, and the answer says so
    tight = json.loads(invoke("recommend", "--dataset", str(dataset), "--steps", "100000", "--deadline", "5h",
                              "--quota", "nvidia-a100-gpus=4", "--json", code=3))  # fmt: skip
    assert tight["choice"] is None and "no measured or predicted configuration can" in tight["reason"]
    unknown = CliRunner().invoke(app, [*args, "--quota", "A100=4"])
    assert unknown.exit_code == 2 and "not a quota tierscope knows" in unknown.stderr


def test_scaling_is_per_device_within_one_accelerator_type(dataset: Path) -> None:
    summary = {r["run_id"]: r for r in json.loads(invoke("summary", "--dataset", str(dataset), "--json",
                                                         "--baseline", "a100"))}  # fmt: skip
    # 8 x A100 against 1 x A100: speedup 6.4 / 1.0 = 6.4 on 8 GPUs -> efficiency 6.4 / 8 = 0.8 (never "6.40")
    assert summary["a100x8"]["speedup_vs_baseline"] == pytest.approx(6.4)
    assert summary["a100x8"]["scaling_efficiency_devices"] == pytest.approx(0.8)
    assert summary["a100x8"]["scaling_efficiency_tasks"] is None
    assert (summary["a100x8"]["devices"], summary["a100x8"]["device_basis"]) == (8, "GPU")
    # a T4 or a TPU chip is not an A100: no efficiency against it
    assert summary["t4"]["scaling_efficiency_devices"] is None and summary["v5e8"]["scaling_efficiency_devices"] is None
    # per device and per dollar: 6.4 / 8 = 0.8 steps/s a GPU; 6.4 x 3600 / 29.3871 = 784.0 steps a dollar
    assert summary["a100x8"]["steps_per_s_per_device"] == pytest.approx(0.8)
    assert summary["a100x8"]["steps_per_usd"] == pytest.approx(6.4 * 3600 / 29.3871)
    # the fit is over the A100 runs only, against GPUs; the others are left out, saying why
    doc = json.loads(invoke("predict", "--dataset", str(dataset), "--tasks", "4", "--json"))
    assert (doc["basis"], doc["accelerator"]) == ("GPU", "NVIDIA_TESLA_A100")
    assert {p["run_id"] for p in doc["points"]} == {"a100", "a100x8"}
    assert any("a prediction across accelerator types is not a fit" in why for why in doc["left_out"])
    # and each prediction's caveat names them, by accelerator type; 1 and 8 A100s on a2-highgpu-1g and -8g are
    # one machine's share per GPU: no mix of machines is claimed
    caveat = next(p for p in doc["predictions"] if p["model"] == "amdahl")["caveat"]
    assert "a fit over one accelerator type: the runs of another are left out of it (" in caveat
    assert "t4 (NVIDIA_TESLA_T4)" in caveat and "v5e8 (" in caveat
    assert "different machines per task" not in caveat
    # Amdahl through (1, 1.0) and (8, 6.4): 8 / (1 + 7 sigma) = 6.4 -> sigma = 0.25 / 7; at 4 GPUs 4 / (1 + 3 sigma)
    amdahl = next(p for p in doc["predictions"] if p["model"] == "amdahl")
    assert amdahl["global_steps_per_s"] == pytest.approx(4 / (1 + 3 * 0.25 / 7))


def test_summary_names_rows_and_flags_stale_ones(tmp_path: Path) -> None:
    # run on 2027-03-01: the 2026-07-30 rows are 214 days old then (> 180): flagged, with the remedy
    late = make_dataset(tmp_path, {"a100": RUNS["a100"]}, ran=date(2027, 3, 1))
    row = json.loads(invoke("summary", "--dataset", str(late), "--json"))[0]
    assert row["price_stale"] is True and row["price_date"] == "2027-03-01" and row["price_date_origin"] == "run"
    assert "a2-highgpu-1g from 2026-07-30 (214 days)" in row["price_note"]
    assert "tierscope prices update" in row["price_note"]
    wide = invoke("summary", "--dataset", str(late), "--wide")
    assert "older than 180 days" in wide and "NVIDIA_TESLA_A100 us-central1 on-demand 2.93391/h" in wide
    # --price-date meets runs of their own date: the output says which dates were used
    dated = invoke("summary", "--dataset", str(late), "--price-date", "2026-12-01")
    assert "priced at each run's own date: a100 on 2027-03-01" in dated
    assert "--price-date 2026-12-01 applies only to runs of unknown date" in dated
    out = tmp_path / "report.html"
    invoke("report", "--dataset", str(late), "--out", str(out), "--lang", "en")
    assert "tierscope prices update" in out.read_text(encoding="utf-8")


def test_user_prices_and_a_bad_price_file(dataset: Path, tmp_path: Path) -> None:
    prices = tmp_path / "ours.csv"
    prices.write_text(
        "resource,region,pricing,usd_per_hour,valid_from,source\n"
        "TPU_V5_LITEPOD,us-central1,on-demand,0.60,2026-10-01,committed use contract 2026-10\n"
    )
    # v5e8 at 8 x 0.60 = 4.80 an hour: 11.1111 h x 4.80 = 53.33, now the cheapest that meets 72 h
    doc = json.loads(invoke("recommend", "--dataset", str(dataset), "--steps", "100000", "--deadline", "72h",
                            "--prices", str(prices), "--json"))  # fmt: skip
    assert doc["choice"]["candidate"] == "v5e8" and doc["choice"]["usd"] == pytest.approx(100_000 / 2.5 / 3600 * 4.8)
    assert "committed use contract 2026-10" in doc["choice"]["price_rows"]
    prices.write_text("resource,region,pricing,usd_per_hour,valid_from,source\nTPU_V5E,us-central1,on-demand,1,x,y\n")
    bad = CliRunner().invoke(app, ["summary", "--dataset", str(dataset), "--prices", str(prices)])
    assert bad.exit_code == 1 and f"{prices}:2: unknown accelerator 'TPU_V5E'" in bad.stderr


def test_premium_1_is_refused_at_25_ml_units_and_its_failure_is_evidence(dataset_2016: Dataset, tmp_path: Path) -> None:
    args = ["recommend", "--dataset", str(dataset_2016.root), "--steps", "1000000", "--deadline", "6h",
            "--price-date", "2019-12-01", "--json"]  # fmt: skip
    free = json.loads(invoke(*args))
    assert free["choice"]["candidate"] == "PREMIUM_1"  # predicted, and the only one within 6 h
    # PREMIUM_1 on 2019-12-01: 33.7829 ML units an hour (the Nov 2019 page) > 25: refused
    capped = json.loads(invoke(*args, "--quota", "ml-units=25", code=3))
    by = {(c["candidate"], c["basis"]): c for c in capped["candidates"]}
    assert by[("PREMIUM_1", "predicted (amdahl)")]["refused"] == "needs 33.7829 ML_UNITS, above the quota of 25"
    assert capped["choice"] is None
    # the run that died is evidence, never a candidate
    failed = by[("premium_1", "failed (evidence)")]
    assert failed["meets"] is False and failed["usd"] is None
    assert failed["evidence"] == "failed on PREMIUM_1 with gcloud crashed (BadStatusCodeError)"
    # the same quota from a manifest's quotas table
    manifest = tmp_path / "plan.toml"
    manifest.write_text("[quotas]\nml-units = 25\n")
    from_manifest = json.loads(invoke(*args, "--manifest", str(manifest), code=3))
    assert from_manifest["quotas"] == {"ML_UNITS": 25.0} and from_manifest["choice"] is None


def test_collect_takes_the_hardware_from_options_and_a_custom_job(tmp_path: Path) -> None:
    ds = str(tmp_path / "ds")
    for name, rate in (("t4", 0.25), ("v5e", 2.5), ("job", 6.4)):
        write_log(tmp_path / f"{name}.log", rate)
    collect = ["collect", "files", "-d", ds, "-q"]
    invoke(*collect, str(tmp_path / "t4.log"), "--machine", "n1-standard-8", "--accelerator", "NVIDIA_TESLA_T4:1")
    invoke(*collect, str(tmp_path / "v5e.log"), "--tpu", "v5litepod-8", "--spot")
    # what `gcloud ai custom-jobs describe --format=json` prints (trimmed), with a field tierscope does not read
    job = {
        "name": "projects/123/locations/us-central1/customJobs/456",
        "displayName": "a100x8",
        "jobSpec": {
            "workerPoolSpecs": [{
                "machineSpec": {"machineType": "a2-highgpu-8g", "acceleratorType": "NVIDIA_TESLA_A100",
                                "acceleratorCount": 8},
                "replicaCount": "1",
                "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
                "containerSpec": {"imageUri": "us-docker.pkg.dev/x/y:z"},
            }],
            "futureKnob": True,
        },
        "state": "JOB_STATE_SUCCEEDED",
        "createTime": "2026-11-19T08:00:00.000Z",
        "startTime": "2026-11-20T09:30:00.123456Z",
    }  # fmt: skip
    spec = tmp_path / "job.json"
    spec.write_text(json.dumps(job))
    told = CliRunner().invoke(app, [*collect, str(tmp_path / "job.log"), "--job-spec", str(spec)])
    assert told.exit_code == 0, told.output
    assert "kept aside, not read: jobSpec.futureKnob" in told.stderr
    rows = {r["run_id"]: r for r in json.loads(invoke("summary", "--dataset", ds, "--json"))}
    assert rows["t4"]["hardware"] == "1 x n1-standard-8 (1 x NVIDIA_TESLA_T4)"
    assert rows["t4"]["usd_per_hour"] == pytest.approx(0.379998 + 0.35)
    # spot: 8 chips x the spot row 0.24493 = 1.95944
    assert rows["v5e"]["usd_per_hour"] == pytest.approx(8 * 0.24493) and "spot" in rows["v5e"]["hardware"]
    # the job's start day prices it, its region too: 5.91582 + 8 x 2.93391 = 29.3871
    assert rows["job"]["price_date"] == "2026-11-20" and rows["job"]["price_date_origin"] == "run"
    assert rows["job"]["usd_per_hour"] == pytest.approx(29.3871) and rows["job"]["devices"] == 8
    bad = CliRunner().invoke(app, [*collect, str(tmp_path / "t4.log"), "--machine", "n1-standrd-8"])
    assert bad.exit_code == 2 and "nearest known: n1-standard-8" in bad.stderr


def test_a_manifest_describes_each_runs_machines(tmp_path: Path) -> None:
    write_log(tmp_path / "t4.log", 0.25)
    write_log(tmp_path / "v5e.log", 2.5)
    write_log(tmp_path / "job.log", 6.4)
    (tmp_path / "job.json").write_text(json.dumps(
        {"workerPoolSpecs": [{"machineSpec": {"machineType": "a2-highgpu-8g", "acceleratorType": "NVIDIA_TESLA_A100",
                                              "acceleratorCount": 8}, "replicaCount": "1"}]}
    ))  # fmt: skip
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        '[[run]]\nid = "t4"\nfiles = ["t4.log"]\ndate = 2026-11-20\nmachine = "n1-standard-8"\n'
        'accelerator = "NVIDIA_TESLA_T4:1"\n\n'
        '[[run]]\nid = "v5e"\nfiles = ["v5e.log"]\ndate = 2026-11-20\ntpu = "v5litepod-8"\nspot = true\n\n'
        '[[run]]\nid = "a100x8"\nfiles = ["job.log"]\ndate = 2026-11-20\njob_spec = "job.json"\n'
        'region = "us-central1"\n'
    )
    ds = str(tmp_path / "ds")
    invoke("collect", "files", "-d", ds, "--manifest", str(manifest), "-q")
    rows = {r["run_id"]: r for r in json.loads(invoke("summary", "--dataset", ds, "--json"))}
    # 0.379998 + 0.35; 8 x 0.24493 (spot); 5.91582 + 8 x 2.93391 (the job spec's a2-highgpu-8g)
    assert rows["t4"]["usd_per_hour"] == pytest.approx(0.729998)
    assert rows["v5e"]["usd_per_hour"] == pytest.approx(8 * 0.24493)
    assert rows["a100x8"]["usd_per_hour"] == pytest.approx(29.3871)
    manifest.write_text('[[run]]\nid = "t4"\nfiles = ["t4.log"]\nmachine = "n1-standard-9"\n')
    bad = CliRunner().invoke(app, ["collect", "files", "-d", ds, "--manifest", str(manifest)])
    assert bad.exit_code == 2
    assert f"manifest {manifest}, run t4: unknown machine type 'n1-standard-9'" in bad.stderr


def test_a_run_directorys_run_json_names_its_machines(tmp_path: Path) -> None:
    run = tmp_path / "job7"
    run.mkdir()
    write_log(run / "chief-0.log", 2.5)
    (run / "run.json").write_text(json.dumps({"run_id": "job7", "tpu": "v5litepod-8", "region": "us-central1"}))
    ds = str(tmp_path / "ds")
    invoke("collect", "files", str(run), "-d", ds, "-q")
    row = json.loads(invoke("summary", "--dataset", ds, "--json"))[0]
    # 8 chips x 1.20 = 9.60 an hour
    assert row["run_id"] == "job7" and row["usd_per_hour"] == pytest.approx(9.6) and row["devices"] == 8


def test_a_run_that_died_of_oom_is_evidence_never_a_candidate(tmp_path: Path) -> None:
    write_log(tmp_path / "a100.log", 1.0)
    write_log(tmp_path / "a100x8.log", 6.4)
    with (tmp_path / "a100x8.log").open("a") as log:
        log.write(
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
            "shape[8192,8192] and type float on /job:worker/replica:0/task:0/device:GPU:0\n"
        )
    specs = [RunSpec(run_id=run, tier=None, files=[tmp_path / f"{run}.log"], date=RAN, topology=RUNS[run][1].to_json())
             for run in ("a100", "a100x8")]  # fmt: skip
    # settle 0: a finished job's log (while a log may grow, the lines it ends in may wait for the next)
    collect_runs(Dataset(tmp_path / "ds"), specs, settle_s=0.0)
    doc = json.loads(invoke("recommend", "--dataset", str(tmp_path / "ds"), "--steps", "100000", "--deadline", "10h",
                            "--json", code=3))  # fmt: skip
    by = {c["candidate"]: c for c in doc["candidates"]}
    # 8 x A100 logged 6.4 steps/s (4.34 h) and then died: never "meets", only evidence of the failure
    assert by["a100x8"]["basis"] == "failed (evidence)" and by["a100x8"]["meets"] is False
    assert by["a100x8"]["evidence"].startswith("failed on 1 x a2-highgpu-8g (8 x NVIDIA_TESLA_A100) with ")
    assert "ResourceExhaustedError: OOM" in by["a100x8"]["evidence"]
    # nor is its rate a point of a fit: one A100 size left, so nothing is predicted (no 8 x A100 by the back door)
    assert set(by) == {"a100", "a100x8"} and doc["choice"] is None


def test_recommend_when_the_only_run_with_a_rate_failed_names_it_and_its_cause(tmp_path: Path) -> None:
    write_log(tmp_path / "t4.log", 0.25)
    with (tmp_path / "t4.log").open("a") as log:
        log.write("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor\n")
    spec = RunSpec(run_id="t4", tier=None, files=[tmp_path / "t4.log"], date=RAN, topology=RUNS["t4"][1].to_json())
    # settle 0: a finished job's log (while a log may grow, the lines it ends in may wait for the next)
    collect_runs(Dataset(tmp_path / "ds"), [spec], settle_s=0.0)
    # summary shows its steady rate: 12 records 100 steps apart at 0.25 steps/s
    (row,) = json.loads(invoke("summary", "--dataset", str(tmp_path / "ds"), "--json"))
    assert row["status"] == "failed" and row["steady_global_steps_per_s"] == pytest.approx(0.25)
    result = CliRunner().invoke(app, ["recommend", "--dataset", str(tmp_path / "ds"), "--steps", "100000",
                                      "--deadline", "72h"], env={"COLUMNS": "250"})  # fmt: skip
    assert result.exit_code == 1
    said = " ".join(result.output.split())
    # not "no run in the dataset has a steady-state rate": the run has one, and failed
    assert "no run that finished has a steady-state rate to plan from" in said
    assert "a failed run is evidence, not a candidate" in said
    assert "run t4 failed on 1 x n1-standard-8 (1 x NVIDIA_TESLA_T4) with" in said and "ResourceExhaustedError" in said


def test_a_run_logged_before_the_price_rows_is_priced_from_the_earliest_and_flagged(tmp_path: Path) -> None:
    # the T4 run ran on 2024-03-11; the shipped rows start 2026-07-30: priced from them,
    # n1-standard-8 0.379998 + T4 0.35 = 0.729998 USD/h, and flagged (no row of 2024 exists)
    dataset = make_dataset(tmp_path, {"t4": RUNS["t4"]}, ran=date(2024, 3, 11))
    (row,) = json.loads(invoke("summary", "--dataset", str(dataset), "--json"))
    assert row["usd_per_hour"] == pytest.approx(0.729998) and row["price_date"] == "2024-03-11"
    assert row["price_stale"] is True
    assert "NVIDIA_TESLA_T4 from the 2026-07-30 row, after the priced date 2024-03-11" in row["price_note"]
    table = " ".join(invoke("summary", "--dataset", str(dataset), "--wide").split())
    assert "run t4: priced n1-standard-8 from the 2026-07-30 row" in table
