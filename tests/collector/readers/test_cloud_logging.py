"""`collect cloud` against the fake Logging server, driven by the real google-cloud-logging client."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from tests.collector.conftest import PROJECT
from tests.support.fake_logging_server import (
    START,
    FakeLoggingServer,
    compile_filter,
    error_copy,
    job_entries,
    write_export,
)
from tierscope.cli import app
from tierscope.collector.cloud import CloudOptions, CollectStopped, collect_cloud
from tierscope.collector.positions import load_watermark, watermark_name
from tierscope.collector.sources.cloud_logging import CloudLoggingError, RetryPolicy, job_filter, reading_client
from tierscope.dataset.state import StateStore
from tierscope.dataset.store import Dataset

JOB = "tierscope_job_1"
SINCE = START - timedelta(hours=1)
FAST = RetryPolicy(initial_s=0.001, maximum_s=0.004, deadline_s=2.0)
#: For permanent faults: give up quickly.
GIVE_UP = RetryPolicy(initial_s=0.001, maximum_s=0.002, deadline_s=0.05)


def collect(server: FakeLoggingServer, dataset: Dataset, **kw: object):
    args: dict[str, object] = {
        "project": PROJECT,
        "endpoint": server.url,
        "since": SINCE,
        "retry": FAST,
        "requests_per_minute": None,
        "tier": "STANDARD_1",
    }
    args.update(kw)
    now = args.pop("now", None)
    return collect_cloud(dataset, [JOB], CloudOptions(**args), now=now)  # type: ignore[arg-type]


def sorted_ts(entries: list[dict]) -> list[tuple[datetime, str]]:
    return sorted((datetime.fromisoformat(e["timestamp"]), e["insertId"]) for e in entries)


def test_real_client_through_endpoint_override(server: FakeLoggingServer) -> None:
    from google.auth.credentials import AnonymousCredentials
    from google.cloud.logging import ASCENDING

    server.add_entries(job_entries(2500))
    # google.cloud.logging.Client with one override (see reading_client: no metadata-server lookups).
    client = reading_client(
        project=PROJECT,
        credentials=AnonymousCredentials(),
        _use_grpc=False,
        client_options={"api_endpoint": server.url},
    )
    got = list(client.list_entries(filter_='timestamp>="2026-01-01T00:00:00Z"', order_by=ASCENDING, page_size=1000))
    assert len(got) == 2500
    # 2500 entries at 1000 a page: 3 requests, the 2nd and 3rd with the previous page's token.
    assert [(r.page_size, r.page_token is None, r.entries) for r in server.requests] == [
        (1000, True, 1000),
        (1000, False, 1000),
        (1000, False, 500),
    ]


def test_several_pages_and_the_filter_sent(server: FakeLoggingServer, tmp_path: Path) -> None:
    server.add_entries(job_entries(2500))
    ds = Dataset(tmp_path / "ds")
    result = collect(server, ds)
    assert ds.read("steps").height == 2500
    assert result.total("steps") == 2500
    assert result.complete
    assert len(server.requests) == 3  # ceil(2500 / 1000)
    first = server.requests[0]
    assert first.filter == (
        '(resource.type="ml_job" OR resource.type="cloudml_job") AND (resource.labels.job_id="tierscope_job_1") '
        'AND timestamp>="2026-01-05T08:00:00.000000Z"'
    )
    assert (first.order_by, first.page_size, first.resource_names) == ("timestamp asc", 1000, ["projects/test-project"])
    # The client added no "last 24 hours" bound of its own: the filter holds exactly one timestamp term.
    assert first.filter.count("timestamp") == 1


def test_job_ids_are_quoted_sorted_and_until_bounds(server: FakeLoggingServer, tmp_path: Path) -> None:
    ds = Dataset(tmp_path / "ds")
    collect_cloud(
        ds,
        ['we"ird\\job', "a_job"],
        CloudOptions(project=PROJECT, endpoint=server.url, since=SINCE, until=START, retry=FAST),
    )
    sent = server.requests[0].filter
    assert sent == (
        '(resource.type="ml_job" OR resource.type="cloudml_job") AND '
        '(resource.labels.job_id="a_job" OR resource.labels.job_id="we\\"ird\\\\job") AND '
        'timestamp>="2026-01-05T08:00:00.000000Z" AND timestamp<"2026-01-05T09:00:00.000000Z"'
    )
    compile_filter(sent)  # the fake server's parser reads the escapes back


def test_429_and_503_bursts_are_retried(server: FakeLoggingServer, tmp_path: Path) -> None:
    server.add_entries(job_entries(2500))
    server.burst(429, count=3, after_pages=1)
    server.burst(503, count=2, after_pages=2)
    ds = Dataset(tmp_path / "ds")
    result = collect(server, ds)
    assert ds.read("steps").height == 2500
    assert server.statuses == [200, 429, 429, 429, 200, 503, 503, 200]
    assert (result.stats.requests, result.stats.retries) == (8, 5)


def test_failure_on_page_3_then_resume(server: FakeLoggingServer, tmp_path: Path) -> None:
    entries = job_entries(2500)
    server.add_entries(entries)
    server.fail_after(2, status=503)
    ds = Dataset(tmp_path / "ds")
    with pytest.raises(CollectStopped, match="Stopped after 2000 entries: what was read is stored") as stopped:
        collect(server, ds, pages_per_append=1, retry=GIVE_UP)
    assert stopped.value.result.total("steps") == 2000
    assert ds.read("steps").height == 2000
    doc = StateStore(ds.state_dir).load(watermark_name(PROJECT, job_filter([JOB])))
    assert doc is not None and doc["complete"] is False
    assert "Cloud Logging kept failing" in doc["error"]
    # The watermark is the 2000th entry in (timestamp, insertId) order, with the ids stored at that time:
    # entries share a timestamp 7 at a time, so positions 1995..2001 (0-based) share it and 1995..1999 are stored.
    order = sorted_ts(entries)
    saved = load_watermark(ds.state_dir, PROJECT, job_filter([JOB]))
    mark = saved.watermark if saved is not None else None
    assert mark is not None and mark.timestamp == order[1999][0]
    assert sorted(mark.insert_ids) == sorted(i for _, i in order[1995:2000])

    server.heal()
    before = len(server.requests)
    result = collect(server, ds)
    # Resumed at the watermark: 505 entries from position 1995, the 5 stored ones skipped: 1 request, 500 new.
    assert len(server.requests) - before == 1
    assert server.requests[-1].filter.endswith(f'timestamp>="{mark.timestamp.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}"')
    assert (result.resumed, result.skipped_seen, result.total("steps"), result.total("duplicates")) == (True, 5, 500, 0)
    steps = ds.read("steps")
    assert steps.height == 2500
    assert steps["entry_id"].n_unique() == 2500
    assert sorted(steps["step"].to_list()) == list(range(1, 2501))


def test_payload_kinds_error_copy_and_events_live(server: FakeLoggingServer, tmp_path: Path) -> None:
    entries = job_entries(30)  # 10 text, 10 structured, 10 message, steps 1..30
    copies = [error_copy(e) for e in entries[:6]]  # ERROR copies of 2 of each kind
    event = dict(
        entries[0],
        insertId="ev1",
        jsonPayload={"tierscope": "event", "event": "finished", "detail": {"wall_s": 12.5}},
    )
    event.pop("textPayload", None)
    crash = dict(entries[0], insertId="cr1", textPayload="ERROR: gcloud crashed (BadStatusCodeError):")
    bad = dict(entries[1], insertId="bad1", jsonPayload={"tierscope": "step", "role": "janitor", "step": 1})
    noise = dict(entries[2], insertId="n1", jsonPayload={"message": "Saving checkpoint"})
    server.add_entries(entries + copies + [event, crash, bad, noise])
    ds = Dataset(tmp_path / "ds")
    result = collect(server, ds)
    counts = result.sources[0]
    # 30 + 6 copies + 4 = 40 entries; 30 steps stored, the 6 copies are duplicates, 2 events, 1 reject, 1 skipped.
    assert (counts.lines, counts.steps, counts.duplicates, counts.events, counts.rejects, counts.skipped) == (
        40,
        30,
        6,
        2,
        1,
        1,
    )
    steps = ds.read("steps")
    assert sorted(steps["step"].to_list()) == list(range(1, 31))
    # The copy is not stored: every stored entry id is an original one.
    assert set(steps["entry_id"]) == {e["insertId"] for e in entries}
    assert steps["tier"].unique().to_list() == ["STANDARD_1"]
    events = ds.read("events").sort("event")
    assert events.select("event", "reason", "role", "task_index").rows() == [
        ("failed", "gcloud crashed (BadStatusCodeError)", "master", 0),
        ("finished", None, "master", 0),
    ]
    # ERROR severity made no failed event of its own: the only 'failed' is the gcloud crash line.
    [reject] = ds.read("rejects").iter_rows(named=True)
    assert reject["reason"].startswith("unknown role 'janitor'")
    assert "Cloud Logging entry bad1" in reject["reason"]


def test_json_export_gives_the_same_records(server: FakeLoggingServer, tmp_path: Path) -> None:
    entries = job_entries(2100)
    entries += [error_copy(e) for e in entries[::100]]  # 21 ERROR copies
    server.add_entries(entries)
    live = Dataset(tmp_path / "live")
    live_result = collect(server, live)
    export = write_export(entries, tmp_path / "export.json")
    runner = CliRunner()
    out = runner.invoke(
        app, ["collect", "files", str(export), "--tier", "STANDARD_1", "--dataset", str(tmp_path / "off"), "-q"]
    )
    assert out.exit_code == 0, out.output
    offline = Dataset(tmp_path / "off")
    a = live.read("steps").sort("entry_id")
    b = offline.read("steps").sort("entry_id")
    assert a.height == b.height == 2100
    assert a.equals(b)
    assert live_result.total("duplicates") == 21
    # Importing the export into the live dataset adds nothing.
    out = runner.invoke(app, ["collect", "files", str(export), "--tier", "STANDARD_1", "--dataset", str(live.root)])
    assert out.exit_code == 0, out.output
    assert live.read("steps").height == 2100
    assert "stored 0 step records" in " ".join(out.output.split())


def test_incremental_run_rereads_the_overlap_for_late_entries(server: FakeLoggingServer, tmp_path: Path) -> None:
    now = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
    start = now - timedelta(seconds=60)
    server.add_entries(job_entries(100, start=start, same_time=1))  # 10 ms apart: the last at start + 0.99 s
    ds = Dataset(tmp_path / "ds")
    collect(server, ds, since=None, now=lambda: now)
    assert ds.read("steps").height == 100
    # An entry stamped before the watermark reaches Cloud Logging late.
    late = job_entries(1, start=start + timedelta(seconds=0.5), first_step=1000, replicas=["worker-replica-9"])
    server.add_entries(late)
    later = now + timedelta(minutes=10)
    result = collect(server, ds, since=None, now=lambda: later)
    # Started at read time - 5 min overlap = 11:55, before every entry: 101 read; the one at the watermark's
    # time is skipped by insertId, the other 99 old ones are deduped, the late one is stored.
    assert result.start == now - timedelta(minutes=5)
    assert (result.total("lines"), result.skipped_seen) == (100, 1)
    assert (result.total("steps"), result.total("duplicates")) == (1, 99)
    # That collect re-read everything up to the watermark at 12:10, so the next one starts at the watermark.
    result = collect(server, ds, since=None, now=lambda: later + timedelta(minutes=10))
    assert result.start == start + timedelta(seconds=0.99)
    assert (result.total("steps"), result.total("duplicates"), result.skipped_seen) == (0, 0, 1)


def test_since_later_than_the_watermark_wins(server: FakeLoggingServer, tmp_path: Path) -> None:
    server.add_entries(job_entries(50))
    ds = Dataset(tmp_path / "ds")
    collect(server, ds)
    result = collect(server, ds, since=START + timedelta(days=1))
    assert not result.resumed
    assert result.start == START + timedelta(days=1)
    result = collect(server, ds, ignore_watermark=True)
    assert (result.resumed, result.total("duplicates")) == (False, 50)


def test_permission_denied_names_the_role(tmp_path: Path) -> None:
    with FakeLoggingServer(project=PROJECT, denied_projects=["locked"]) as srv:
        with pytest.raises(CloudLoggingError, match=r"permission denied .*'locked'.*roles/logging\.viewer"):
            collect_cloud(
                Dataset(tmp_path / "ds"), [JOB], CloudOptions(project="locked", endpoint=srv.url, since=SINCE)
            )
        with pytest.raises(CloudLoggingError, match=r"unknown project 'nope'.*check --project"):
            collect_cloud(Dataset(tmp_path / "ds"), [JOB], CloudOptions(project="nope", endpoint=srv.url, since=SINCE))


def test_bad_filter_and_exhausted_retries(server: FakeLoggingServer, tmp_path: Path) -> None:
    server.add_entries(job_entries(10))
    server.burst(400, count=1)
    with pytest.raises(CloudLoggingError, match=r"rejected the request .*the filter was: \(resource\.type="):
        collect(server, Dataset(tmp_path / "ds"))
    server.burst(429, count=10_000)
    with pytest.raises(CloudLoggingError, match=r"kept failing \(.*injected fault.*\) after \d+ retries"):
        collect(server, Dataset(tmp_path / "ds"), retry=GIVE_UP)


def test_no_credentials_and_no_project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def no_adc(*args: object, **kwargs: object) -> None:
        raise DefaultCredentialsError("nothing here")

    monkeypatch.setattr(google.auth, "default", no_adc)
    monkeypatch.delenv("TIERSCOPE_LOGGING_ENDPOINT", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GCLOUD_PROJECT", raising=False)
    with pytest.raises(CloudLoggingError, match="run `gcloud auth application-default login` or set GOOGLE_APPLI"):
        collect_cloud(Dataset(tmp_path / "ds"), [JOB], CloudOptions(project="p"))
    with pytest.raises(CloudLoggingError, match="no Google Cloud project: pass --project"):
        collect_cloud(Dataset(tmp_path / "ds"), [JOB], CloudOptions(endpoint="http://127.0.0.1:9"))


def test_cli(server: FakeLoggingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server.add_entries(job_entries(1200))
    monkeypatch.setenv("TIERSCOPE_LOGGING_ENDPOINT", server.url)
    runner = CliRunner()
    ds = str(tmp_path / "ds")
    base = ["collect", "cloud", "--job-id", JOB, "--project", PROJECT, "--dataset", ds, "--tier", "STANDARD_1"]
    out = runner.invoke(app, [*base, "--since", "2026-01-05T08:00:00Z", "--quiet"])
    assert out.exit_code == 0, out.output
    assert out.output == ""
    assert Dataset(ds).read("steps").height == 1200
    out = runner.invoke(app, base)
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    # Cloud Logging gives log entries, not lines: said so (it read "read 0 lines")
    assert "read 0 log entries: stored 0 step records" in text and " lines" not in text
    assert "1 requests to Cloud Logging (0 retries" in text
    out = runner.invoke(app, [*base, "--project", "other"])
    assert out.exit_code == 1
    assert "unknown project 'other'" in out.output
    out = runner.invoke(app, [*base, "--last", "bogus"])
    assert out.exit_code == 2


def test_state_document_is_readable_json(server: FakeLoggingServer, tmp_path: Path) -> None:
    server.add_entries(job_entries(10, same_time=1))
    ds = Dataset(tmp_path / "ds")
    collect(server, ds, now=lambda: datetime(2026, 11, 29, tzinfo=UTC))
    [path] = list(ds.state_dir.glob("cloud-logging-*.json"))
    doc = json.loads(path.read_text())
    assert doc["project"] == PROJECT
    assert doc["job_filter"] == (
        '(resource.type="ml_job" OR resource.type="cloudml_job") AND (resource.labels.job_id="tierscope_job_1")'
    )
    # 10 entries 10 ms apart from 09:00:00: the last at 09:00:00.09.
    assert doc["watermark"]["timestamp"] == "2026-01-05T09:00:00.090000Z"
    assert doc["watermark"]["read_at"] == "2026-11-29T00:00:00.000000Z"
    assert doc["complete"] is True
    assert pl.read_parquet(ds.files("runs")[0])["tier"].to_list() == ["STANDARD_1"]


def test_fake_server_quota_counts_a_sliding_minute() -> None:
    now = [1000.0]
    srv = FakeLoggingServer(job_entries(10), project=PROJECT, quota_per_minute=2, clock=lambda: now[0])
    body = json.dumps({"resourceNames": [f"projects/{PROJECT}"], "pageSize": 5}).encode()
    # Two requests at t=1000 and t=1030 pass; a third at t=1059 is over quota; at t=1061 the first has left the
    # window (1000 <= 1061 - 60), so one more passes.
    statuses = []
    for t in (1000.0, 1030.0, 1059.0, 1061.0):
        now[0] = t
        statuses.append(srv.handle("/v2/entries:list", body)[0])
    assert statuses == [200, 200, 429, 200]
    assert srv.quota_rejections == 1
