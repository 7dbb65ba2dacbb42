"""``collect files gs://...``: job directories, globs, manifests and sink exports on Cloud Storage,
read from a real emulator (tests/support/gcs_emulator.py) through gcsfs, into a local dataset."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.support.gcs_emulator import Emulator
from tierscope import gcs
from tierscope.cli import app
from tierscope.collector.collect import collect_runs, runs_from_paths
from tierscope.collector.errors import InputError, ManifestError
from tierscope.collector.manifest import load_manifest
from tierscope.dataset.store import Dataset
from tierscope.demo import BUNDLED

runner = CliRunner()
DEMO = Path(str(BUNDLED))
#: The 2016 BASIC log: 10 lines, one step record each (steps 100 ... 1000).
BASIC = (DEMO / "basic.log").read_bytes()


@pytest.fixture
def storage(gcs_emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Emulator]:
    """The emulator, with this process's environment pointing gcsfs at it."""
    for key, value in gcs_emulator.env.items():
        monkeypatch.setenv(key, value)
    gcs.filesystem.cache_clear()
    yield gcs_emulator
    gcs.filesystem.cache_clear()


def upload(bucket: Any, objects: dict[str, bytes]) -> None:
    for name, data in objects.items():
        bucket.blob(name).upload_from_string(data)


def test_demo_from_a_bucket_summarises_like_the_local_demo(
    storage: Emulator, dataset_2016: Dataset, tmp_path: Path
) -> None:
    bucket = storage.bucket("inputs-demo-2016")
    upload(bucket, {f"experiments/2016/{p.name}": p.read_bytes() for p in DEMO.iterdir() if p.is_file()})
    ds = tmp_path / "ds"
    args = ["collect", "files", "--manifest", "gs://inputs-demo-2016/experiments/2016/runs.toml", "-d", str(ds)]
    first = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert first.exit_code == 0, first.output
    assert "in gs://inputs-demo-2016/experiments/2016/" in first.output  # the URL's // kept, not folded to gs:/
    remote = runner.invoke(app, ["summary", "-d", str(ds), "--json"])
    local = runner.invoke(app, ["summary", "-d", str(dataset_2016.root), "--json"])
    assert remote.exit_code == 0 and local.exit_code == 0, remote.output + local.output
    assert json.loads(remote.output) == json.loads(local.output)

    files = sorted(p.relative_to(ds) for p in ds.rglob("*.parquet"))
    again = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert again.exit_code == 0, again.output
    # Each of the 4 logs' generation was read already: nothing read, nothing written.
    assert again.output.count(": unchanged") == 4, again.output
    assert "read 0 lines" in again.output
    assert sorted(p.relative_to(ds) for p in ds.rglob("*.parquet")) == files


def test_job_directories_globs_and_gzip_objects(storage: Emulator, tmp_path: Path) -> None:
    bucket = storage.bucket("jobs-bucket")
    lines = BASIC.splitlines(keepends=True)
    upload(
        bucket,
        {
            "jobs/job42/run.json": json.dumps({"run_id": "job42", "tier": "BASIC"}).encode(),
            "jobs/job42/master-replica-0.log": b"".join(lines[:6]),
            "jobs/job42/eval/evaluator.log.gz": gzip.compress(b"".join(lines[6:])),
            "jobs/job43/run.json": json.dumps({"tier": "STANDARD_1"}).encode(),
            "jobs/job43/master.log": b"".join(lines[:6]),
            "jobs/notes.txt.tmp": b"not a log",
        },
    )
    runs = runs_from_paths(["gs://jobs-bucket/jobs/"], None, None, None)
    # Each folder holding a run.json is a run; its objects at any depth belong to it.
    assert [(r.run_id, r.tier, r.files) for r in runs] == [
        (
            "job42",
            "BASIC",
            ["gs://jobs-bucket/jobs/job42/eval/evaluator.log.gz", "gs://jobs-bucket/jobs/job42/master-replica-0.log"],
        ),
        ("job43", "STANDARD_1", ["gs://jobs-bucket/jobs/job43/master.log"]),
    ]
    globbed = runs_from_paths(["gs://jobs-bucket/jobs/*/*.log"], "picked", None, None)
    assert [(r.run_id, r.files) for r in globbed] == [
        ("picked", ["gs://jobs-bucket/jobs/job42/master-replica-0.log", "gs://jobs-bucket/jobs/job43/master.log"])
    ]

    dataset = Dataset(tmp_path / "ds")
    result = collect_runs(dataset, runs)
    assert not result.errors
    # 6 lines of the plain object + 4 of the gzip one: the 10 records of job42; 6 of job43.
    assert {s.source: s.steps for s in result.sources} == {
        "gs://jobs-bucket/jobs/job42/eval/evaluator.log.gz": 4,
        "gs://jobs-bucket/jobs/job42/master-replica-0.log": 6,
        "gs://jobs-bucket/jobs/job43/master.log": 6,
    }
    steps = dataset.read("steps")
    assert steps.filter(run_id="job42").get_column("step").sort().to_list() == list(range(100, 1001, 100))
    assert set(steps.get_column("source")) == {s.source for s in result.sources}

    # Objects do not grow: a longer log is a new generation, read from its start; the 6 records
    # stored already are duplicates, the 4 new ones stored.
    bucket.blob("jobs/job43/master.log").upload_from_string(BASIC)
    relisted = runs_from_paths(["gs://jobs-bucket/jobs/"], None, None, None)  # as each collect lists anew
    again = {s.source: s for s in collect_runs(dataset, relisted).sources}
    rewritten = again["gs://jobs-bucket/jobs/job43/master.log"]
    assert (rewritten.lines, rewritten.steps, rewritten.duplicates) == (10, 4, 6)
    assert any("new generation" in note for note in rewritten.notes)
    assert again["gs://jobs-bucket/jobs/job42/master-replica-0.log"].notes == ["unchanged"]
    state = json.loads((dataset.state_dir / "files.json").read_text())
    kept = {f["path"]: f for f in state["files"]}
    blob = bucket.get_blob("jobs/job43/master.log")
    assert kept["gs://jobs-bucket/jobs/job43/master.log"]["generation"] == str(blob.generation)


def test_a_manifest_names_objects_by_url(storage: Emulator, tmp_path: Path) -> None:
    bucket = storage.bucket("manifest-bucket")
    upload(bucket, {"logs/basic.log": BASIC, "logs/other/local.log": (DEMO / "local.log").read_bytes()})
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        '[[run]]\nid = "basic"\ntier = "BASIC"\nfiles = ["gs://manifest-bucket/logs/basic.log"]\n'
        '[[run]]\nid = "local"\ntier = "local"\nfiles = ["../logs/other/local.log"]\n'
    )
    bucket.blob("conf/runs.toml").upload_from_string(manifest.read_bytes())
    with pytest.raises(ManifestError, match="lies outside the manifest's folder"):
        load_manifest(manifest)  # on local disk, `..` out of its folder could read any file of the machine
    # Relative entries of a manifest on Cloud Storage are relative to its folder, `..` included.
    remote = load_manifest("gs://manifest-bucket/conf/runs.toml")
    assert [r.files for r in remote] == [
        ["gs://manifest-bucket/logs/basic.log"],
        ["gs://manifest-bucket/logs/other/local.log"],
    ]
    result = collect_runs(Dataset(tmp_path / "ds"), remote)
    assert [(s.run_id, s.steps) for s in result.sources] == [("basic", 10), ("local", 10)]


def _sink_line(n: int, text: str) -> bytes:
    entry = {
        "insertId": f"id{n:04d}",
        "logName": "projects/p/logs/master-replica-0",
        "resource": {"type": "ml_job", "labels": {"job_id": "sink_job", "task_name": "master-replica-0"}},
        "textPayload": text,
        "timestamp": f"2016-12-31T08:{n:02d}:00.000000Z",
        "severity": "INFO",
    }
    return json.dumps(entry).encode() + b"\n"


#: Where a sink writes the 08:00-08:59 UTC hour of 2016-12-31 of log master-replica-0 (shard 0),
#: as https://cloud.google.com/logging/docs/export/storage describes (read 2026-12-01).
SINK_OBJECT = "master-replica-0/2016/12/31/08:00:00_08:59:59_S0.json"


def test_a_sink_bucket_is_found_by_its_objects_names(storage: Emulator) -> None:
    bucket = storage.bucket("sink-layout")
    upload(bucket, {SINK_OBJECT: _sink_line(1, "x"), "master-replica-0/2016/12/31/09:00:00_09:59:59_S0.json": b""})
    [run] = runs_from_paths(["gs://sink-layout/"], None, None, None)
    assert run.run_id == "sink-layout"  # the bucket's name: the entries' job ids name their runs
    assert run.files == [
        "gs://sink-layout/master-replica-0/2016/12/31/08:00:00_08:59:59_S0.json",
        "gs://sink-layout/master-replica-0/2016/12/31/09:00:00_09:59:59_S0.json",
    ]


def test_a_sink_bucket_collects_its_entries(storage: Emulator, tmp_path: Path) -> None:
    bucket = storage.bucket("sink-export")
    text = BASIC.decode().splitlines()
    upload(bucket, {SINK_OBJECT: b"".join(_sink_line(n, line) for n, line in enumerate(text))})
    dataset = Dataset(tmp_path / "ds")
    result = collect_runs(dataset, runs_from_paths(["gs://sink-export/"], None, None, None))
    assert not result.errors
    steps = dataset.read("steps")
    # One entry per line of basic.log: 10 records of job sink_job (its job id), master 0.
    assert steps.height == 10
    assert set(steps.get_column("run_id")) == {"sink_job"}
    assert steps.get_column("step").sort().to_list() == list(range(100, 1001, 100))


def test_what_cannot_be_read_is_one_line_saying_what_to_do(storage: Emulator, tmp_path: Path) -> None:
    storage.bucket("errors-bucket").blob("logs/a.log").upload_from_string(BASIC)
    with pytest.raises(InputError) as nobucket:
        runs_from_paths(["gs://no-such-bucket-here/jobs/"], None, None, None)
    assert str(nobucket.value) == (
        "cannot list gs://no-such-bucket-here/jobs/: no such bucket 'no-such-bucket-here' (or it is in another "
        "project); check the name with `gcloud storage ls`"
    )
    with pytest.raises(InputError) as noobject:
        runs_from_paths(["gs://errors-bucket/logs/b.log"], None, None, None)
    assert str(noobject.value) == (
        "cannot read gs://errors-bucket/logs/b.log: no such object or prefix; list what is there with "
        "`gcloud storage ls gs://errors-bucket/logs/`"
    )
    with pytest.raises(InputError, match=r"^no object matches gs://errors-bucket/logs/\*\.txt; "):
        runs_from_paths(["gs://errors-bucket/logs/*.txt"], None, None, None)
    cli = runner.invoke(app, ["collect", "files", "gs://errors-bucket/nothing/", "-d", str(tmp_path / "ds")])
    assert cli.exit_code == 1
    assert cli.output.strip().splitlines() == [
        "error: no objects under gs://errors-bucket/nothing/; list what is there with `gcloud storage ls gs://errors-bucket/`"
    ]


def test_missing_credentials_and_refused_access_say_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing-key.json"))
    gcs.filesystem.cache_clear()
    try:
        cli = runner.invoke(app, ["collect", "files", "gs://some-bucket/jobs/", "-d", str(tmp_path / "ds")])
    finally:
        gcs.filesystem.cache_clear()
    assert cli.exit_code == 1
    [line] = cli.output.strip().splitlines()
    assert line.startswith("error: no Google Cloud credentials to read gs:// paths (File ")
    assert "run `gcloud auth application-default login`, or set GOOGLE_APPLICATION_CREDENTIALS" in line
    # gcsfs turns a 403 into OSError("Forbidden: <url>\n<message>") (gcsfs.retry.validate_response).
    refused = OSError("Forbidden: https://storage.googleapis.com/storage/v1/b/team/o\nno storage.objects.list")
    assert gcs.problem(refused, "gs://team/jobs/", "list") == (
        "cannot list gs://team/jobs/: permission denied on bucket 'team'; grant the account tierscope runs as "
        "Storage Object Viewer (roles/storage.objectViewer) on it, or use other credentials "
        "(run `gcloud auth application-default login`)"
    )


def test_a_json_export_object_is_read_whole_and_named_by_its_url(storage: Emulator, tmp_path: Path) -> None:
    bucket = storage.bucket("export-bucket")
    entries: list[Any] = [json.loads(_sink_line(n, line)) for n, line in enumerate(BASIC.decode().splitlines())]
    entries.append(42)  # not a LogEntry: a reject naming the object and the item
    bucket.blob("exports/job.json.gz").upload_from_string(gzip.compress(json.dumps(entries).encode()))
    dataset = Dataset(tmp_path / "ds")
    result = collect_runs(dataset, runs_from_paths(["gs://export-bucket/exports/job.json.gz"], None, None, None))
    [counts] = result.sources
    # 11 items: the 10 entries of basic.log's lines (job sink_job), and the 42.
    assert (counts.format, counts.lines, counts.steps, counts.rejects) == ("logentries", 11, 10, 1)
    assert set(dataset.read("steps").get_column("run_id")) == {"sink_job"}
    [reject] = dataset.read("rejects").to_dicts()
    assert (reject["source"], reject["source_offset"]) == ("gs://export-bucket/exports/job.json.gz", 11)
    assert collect_runs(dataset, runs_from_paths(["gs://export-bucket/exports/job.json.gz"], None, None, None)).sources[
        0
    ].notes == ["unchanged"]


def test_event_files_on_cloud_storage_say_to_copy_them(storage: Emulator) -> None:
    # Named by URL an event file was read as a text log: its binary "lines" gave no record and
    # no reject; a prefix of event files alone said "no log files (their suffixes: .h)".
    upload(
        storage.bucket("tb-bucket"),
        {"jobs/j/events.out.tfevents.1.h": b"\x00" * 64, "logs/events.out.tfevents.2.h": b"\x00" * 64},
    )
    with pytest.raises(InputError) as loose:
        runs_from_paths(["gs://tb-bucket/jobs/j/events.out.tfevents.*"], None, None, None)
    assert str(loose.value) == (
        "gs://tb-bucket/jobs/j/events.out.tfevents.* holds TensorBoard event files (1, e.g. events.out.tfevents.1.h), "
        "which are read from local files only: copy them (`gcloud storage cp -r gs://tb-bucket/jobs/j/events.out"
        ".tfevents.* DIR`) and collect the copy"
    )
    with pytest.raises(InputError, match=r"^gs://tb-bucket/jobs/ holds TensorBoard event files \(1, "):
        runs_from_paths(["gs://tb-bucket/jobs/"], None, None, None)


def test_a_manifest_object_that_is_not_there_names_its_run_and_is_not_recorded(
    storage: Emulator, tmp_path: Path
) -> None:
    # as a local file that is not there: the run is not an `empty` row of every summary, and the error
    # names the run and the manifest
    bucket = storage.bucket("typo-bucket")
    upload(bucket, {"logs/basic.log": BASIC})
    manifest = tmp_path / "runs.toml"
    manifest.write_text(
        '[[run]]\nid = "typo"\ntier = "BASIC"\nfiles = ["gs://typo-bucket/logs/basci.log"]\n'
        '[[run]]\nid = "basic"\ntier = "BASIC"\nfiles = ["gs://typo-bucket/logs/basic.log"]\n'
    )
    ds = Dataset(tmp_path / "ds")
    result = collect_runs(ds, load_manifest(manifest))
    assert [(s.run_id, s.steps) for s in result.sources] == [("basic", 10)]
    (error,) = result.errors
    assert "gs://typo-bucket/logs/basci.log" in str(error)
    assert f"(run 'typo' of manifest {manifest}, whose paths are relative to its folder)" in str(error)
    assert ds.read("runs")["run_id"].to_list() == ["basic"]


def test_a_gzip_bomb_object_is_one_reject_naming_it_as_a_local_one_is(storage: Emulator, tmp_path: Path) -> None:
    bucket = storage.bucket("bomb-bucket")
    # 72 MiB of newlines, some 72 KB compressed: 100 times that is below the 64 MiB floor, so the limit is 64 MiB.
    bomb = gzip.compress(b"\n" * (72 << 20), compresslevel=9)
    upload(bucket, {"logs/bomb.log.gz": bomb, "logs/ok.log.gz": gzip.compress(BASIC)})
    ds = tmp_path / "ds"
    args = ["collect", "files", "gs://bomb-bucket/logs/", "-d", str(ds), "--run-id", "r", "--tier", "BASIC"]
    first = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert first.exit_code == 0, first.output
    limit = 64 * 1024**2
    reason = (
        f"gs://bomb-bucket/logs/bomb.log.gz decompresses to more than {limit:,} bytes (100 times its {len(bomb):,} "
        "bytes, at least 64 MiB, at most 20 GiB): not read (a compressed bomb?); if it is a real log, decompress it "
        "and collect the text, or raise --max-expand"
    )
    assert Dataset(ds).read("rejects").select("source", "reason").rows() == [
        ("gs://bomb-bucket/logs/bomb.log.gz", reason)
    ]
    # The bomb counts as 1 line, rejected; the other object's 10 lines are 10 step records (BASIC: steps 100 ... 1000).
    assert sorted(Dataset(ds).read("steps")["step"].to_list()) == list(range(100, 1001, 100))
    assert "read 11 lines: stored 10 step records" in first.output
