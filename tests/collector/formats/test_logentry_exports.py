"""Cloud Logging exports of every real shape give the records of the plain log.

The shapes: a Cloud Logging sink's files in a Cloud Storage bucket (one LogEntry per line,
``LOG_ID/YYYY/MM/DD/HH:00:00_HH:59:59_Sn.json``, one file per log and hour, duplicates
allowed), the same lines through ``jq -c``, and an ``entries.list`` response
``{"entries": [...], "nextPageToken": ...}``. The entries are generated from the 2016 STANDARD_1
demo log (``../shared/data/cloudml-tiers-2016``), shaped as AI Platform wrote them: resource
``ml_job`` with ``job_id`` and ``task_name`` labels (or the older entry label
``ml.googleapis.com/task_name``), the line in ``textPayload`` or ``jsonPayload.message``.
"""

from __future__ import annotations

import gzip
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.support import SHARED
from tierscope.collector import jsonvalues
from tierscope.collector.collect import collect_file, collect_runs
from tierscope.collector.formats import sniff_file, sniff_format
from tierscope.collector.formats.logentries_export import read_export
from tierscope.collector.manifest import RunSpec
from tierscope.collector.sources.logentries import LINES_FORMAT
from tierscope.dataset.store import Dataset

DEMO = SHARED / "data" / "cloudml-tiers-2016" / "standard_1.log"
JOB = "mnist_standard_1_20161110"
START = datetime(2016, 11, 10, 21, 58, 0, tzinfo=UTC)
#: The columns a record has whatever it was read from (times, sources and entry ids differ:
#: a plain line carries none of them).
SAME = ["run_id", "tier", "role", "task_index", "step", "local_step", "loss", "accuracy", "elapsed_s"]
SAME += ["global_steps_per_s", "local_steps_per_s"]


def _demo_lines() -> list[str]:
    if not DEMO.is_file():
        pytest.skip(f"no real data at {DEMO.resolve()}")
    return DEMO.read_text().splitlines()


def _entry(n: int, line: str, when: datetime) -> dict[str, Any]:
    """The LogEntry AI Platform wrote for ``line`` (the ``n``-th): the task from its ``[role/index]``."""
    role, index = re.search(r"\[(\w+)/(\d+)\]", line).groups()  # type: ignore[union-attr]
    task = f"{role}-replica-{index}"
    entry: dict[str, Any] = {
        "insertId": f"1a{n:04d}x",
        "logName": f"projects/demo-2016/logs/{task}",
        "receiveTimestamp": (when + timedelta(seconds=2)).isoformat().replace("+00:00", "Z"),
        "resource": {"type": "ml_job", "labels": {"job_id": JOB, "project_id": "demo-2016"}},
        "severity": "INFO",
        "timestamp": when.isoformat().replace("+00:00", "Z"),
    }
    if n % 2:  # the older shape: the task in the entry's labels, the line as a structured message
        entry["labels"] = {"ml.googleapis.com/task_name": task, "ml.googleapis.com/trial_id": ""}
        entry["jsonPayload"] = {"message": line, "levelname": "INFO"}
    else:
        entry["resource"]["labels"]["task_name"] = task
        entry["textPayload"] = line
    return entry


def _sink_files(bucket: Path, entries: list[dict[str, Any]]) -> list[Path]:
    """``entries`` written as a sink writes them: per log and UTC hour, one JSON object per line."""
    files: dict[Path, list[str]] = {}
    for entry in entries:
        when = datetime.fromisoformat(entry["timestamp"])
        log_id = entry["logName"].rsplit("/logs/", 1)[1]
        name = f"{when:%H}:00:00_{when:%H}:59:59_S0.json"
        files.setdefault(bucket / log_id / f"{when:%Y/%m/%d}" / name, []).append(json.dumps(entry))
    for path, lines in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
    return sorted(files)


def _records(ds: Path) -> pl.DataFrame:
    return Dataset(ds).read("steps").select(SAME).sort("role", "task_index", "step")


def test_a_sink_export_gives_the_records_of_the_plain_log(tmp_path: Path) -> None:
    lines = _demo_lines()
    # 20 s apart from 21:58: lines 7-9 fall in the 22:00 hour, so some logs have two files.
    entries = [_entry(n, line, START + timedelta(seconds=20 * n)) for n, line in enumerate(lines)]
    entries.append(entries[3])  # a sink does not deduplicate: an entry written twice is one record
    entries.append(
        {  # the service's own entry, no message: skipped
            "insertId": "svc1",
            "logName": f"projects/demo-2016/logs/ml.googleapis.com%2F{JOB}",
            "resource": {"type": "ml_job", "labels": {"job_id": JOB}},
            "jsonPayload": {"@type": "type.googleapis.com/google.cloud.ml.api.v1.JobStatus", "state": "RUNNING"},
            "timestamp": "2016-11-10T21:57:59Z",
        }
    )
    files = _sink_files(tmp_path / "bucket", entries)
    assert any(p.name == "22:00:00_22:59:59_S0.json" for p in files)
    plain = tmp_path / "plain"
    collect_runs(Dataset(plain), [RunSpec(run_id=JOB, tier="STANDARD_1", files=[DEMO])])
    sink = tmp_path / "sink"
    result = collect_runs(Dataset(sink), [RunSpec(run_id="from-the-bucket", tier="STANDARD_1", files=files)])
    assert not result.errors
    assert {s.format for s in result.sources} == {LINES_FORMAT}
    # 9 demo lines + the copy + the service entry = 11 lines read; 9 records, 1 duplicate, 1 skipped.
    assert (result.total("lines"), result.total("steps"), result.total("duplicates")) == (11, 9, 1)
    assert result.total("skipped") == 1
    assert result.total("rejects") == 0
    assert _records(sink).equals(_records(plain))
    assert _records(sink).height == len(lines) == 9
    stored = Dataset(sink).read("steps")
    # Each record keeps its file and line, its entry's id and time (the plain line has none).
    first = stored.filter(pl.col("entry_id") == "1a0000x").row(0, named=True)
    assert first["timestamp"] == START
    assert first["source_offset"] == 1
    assert first["source"].endswith("worker-replica-0/2016/11/10/21:00:00_21:59:59_S0.json")


def test_jq_lines_and_an_entries_list_response_give_the_same_records(tmp_path: Path) -> None:
    lines = _demo_lines()
    entries = [_entry(n, line, START + timedelta(seconds=20 * n)) for n, line in enumerate(lines)]
    newest_first = entries[::-1]  # what gcloud logging read prints
    jq = tmp_path / "jq.ndjson"
    jq.write_text("".join(json.dumps(e, separators=(",", ":")) + "\n" for e in newest_first))
    response = tmp_path / "entries-list.json"
    response.write_text(json.dumps({"entries": newest_first, "nextPageToken": "EAA4AUqeAQ"}, indent=2))
    array = tmp_path / "gcloud.json"
    array.write_text(json.dumps(newest_first, indent=2))
    got = {}
    for path in (jq, response, array):
        ds = tmp_path / f"ds-{path.stem}"
        counts = collect_file(Dataset(ds), path, RunSpec(run_id="x", tier="STANDARD_1", files=[path]))
        got[path.name] = (counts.format, counts.lines, counts.steps, counts.notes, _records(ds))
    assert got["jq.ndjson"][:4] == (LINES_FORMAT, 9, 9, [])
    assert got["entries-list.json"][:3] == ("logentries", 9, 9)
    assert "nextPageToken" in got["entries-list.json"][3][0]  # the later pages are missing: said
    assert got["gcloud.json"][:4] == ("logentries", 9, 9, [])
    assert got["jq.ndjson"][4].equals(got["gcloud.json"][4])
    assert got["entries-list.json"][4].equals(got["gcloud.json"][4])
    assert set(got["jq.ndjson"][4]["run_id"]) == {JOB}


def test_a_sink_file_is_read_incrementally_and_a_bad_line_is_a_reject_with_its_line(tmp_path: Path) -> None:
    lines = _demo_lines()
    entries = [json.dumps(_entry(n, line, START + timedelta(seconds=n))) for n, line in enumerate(lines)]
    path = tmp_path / "master-replica-0" / "2016" / "11" / "10" / "21:00:00_21:59:59_S0.json"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(entries[:4]) + "\n")
    ds = Dataset(tmp_path / "ds")
    run = RunSpec(run_id="r", tier="STANDARD_1", files=[path])
    first = collect_runs(ds, [run], settle_s=0)
    assert (first.total("lines"), first.total("steps")) == (4, 4)
    cut = entries[4][:57]  # a line cut mid-object, then a value no float holds, then good lines
    huge = entries[5].replace('"severity": "INFO"', '"severity": "INFO", "latency": 1e400')
    with path.open("a") as fh:
        fh.write("\n".join([cut, huge, *entries[6:]]) + "\n")
    second = collect_runs(ds, [run], settle_s=0)
    # Only lines 5-9 are read again: 3 records, 2 rejects, nothing skipped (5 = 3 + 2 + 0).
    assert (second.total("lines"), second.total("steps"), second.total("rejects")) == (5, 3, 2)
    assert second.total("skipped") == 0
    rejects = ds.read("rejects").sort("source_offset")
    assert rejects.select("source", "source_offset", "format").rows() == [
        (str(path), 5, LINES_FORMAT),
        (str(path), 6, LINES_FORMAT),
    ]
    assert rejects["reason"][0].startswith("not valid JSON (Unterminated string")
    assert rejects["reason"][1] == "number 1e400 is out of the range of a 64-bit float"
    assert rejects["raw"][0] == cut
    assert ds.read("steps").height == 7
    third = collect_runs(ds, [run], settle_s=0)
    assert (third.total("lines"), third.total("steps"), third.total("rejects")) == (0, 0, 0)


def test_a_structured_log_is_not_a_logentry_stream_and_an_entry_of_one_is_read(tmp_path: Path) -> None:
    record = {"tierscope": "step", "run_id": "r1", "role": "chief", "task_index": 0, "step": 100, "loss": 0.5}
    # A structured record whose detail mentions a logName is still the structured format's.
    event = {"tierscope": "event", "run_id": "r1", "event": "started", "detail": {"logName": "projects/p/logs/x"}}
    structured = [json.dumps(record), json.dumps(event)]
    assert sniff_format(structured) == "structured"
    entry = {
        "insertId": "s1",
        "logName": "projects/p/logs/tierscope",
        "resource": {"type": "ml_job", "labels": {"job_id": "j1", "task_name": "master-replica-0"}},
        "jsonPayload": record | {"step": 200},
        "timestamp": "2026-11-29T23:00:00Z",
    }
    assert sniff_format([json.dumps(entry)]) == LINES_FORMAT
    assert sniff_file(json.dumps(entry) + "\n") is None  # one entry per line is not a whole-file export
    path = tmp_path / "mixed.json"
    path.write_text("\n".join([*structured, json.dumps(entry)]) + "\n")
    ds = Dataset(tmp_path / "ds")
    counts = collect_file(ds, path, RunSpec(run_id="r1", tier=None, files=[path]))
    assert (counts.lines, counts.steps, counts.events, counts.rejects) == (3, 2, 1, 0)
    steps = ds.read("steps").sort("source_offset")
    assert steps.select("source_offset", "format").rows() == [(1, "structured"), (3, "structured")]
    assert steps["entry_id"].to_list() == [None, "s1"]


def test_entries_list_response_shapes(tmp_path: Path) -> None:
    empty_page = tmp_path / "empty.json"
    empty_page.write_text('{"nextPageToken": "abc"}')
    assert sniff_file(empty_page.read_text()) is not None
    export = read_export(empty_page, "r")
    assert (export.items, export.entries) == (0, [])
    bad = tmp_path / "bad.json"
    bad.write_text('{"entries": {"insertId": "a"}}')
    with pytest.raises(Exception, match="'entries' is a JSON dict, expected an array"):
        read_export(bad, "r")
    lines = tmp_path / "lines.json"
    lines.write_text('{"insertId": "a", "logName": "l"}\n{"insertId": "b", "logName": "l"}\n')
    with pytest.raises(Exception, match=f"one LogEntry per line: .* --format {LINES_FORMAT}"):
        read_export(lines, "r")
    gz = tmp_path / "resp.json.gz"
    gz.write_bytes(gzip.compress(b'{"entries": [{"insertId": "a", "logName": "l", "resource": "x"}]}'))
    export = read_export(gz, "r")
    assert export.rejects["reason"].to_list() == ["field 'resource' is a JSON str, not an object"]


def test_an_export_is_decoded_one_entry_at_a_time_whatever_its_items_hold() -> None:
    deep = '{"insertId": "d", "logName": "l", "jsonPayload": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    text = '[{"insertId": "a", "logName": "l", "textPayload": "[{]} \\" ,"}, ' + deep + ', {"n": 1e400}]'
    items = jsonvalues.iter_document_items(text, "entries")
    got = list(items)
    assert got[0]["textPayload"] == '[{]} " ,'  # brackets and quotes inside a string are text
    assert jsonvalues.problem_in(got[1]).startswith("value nested more than 512 levels deep at jsonPayload.x")
    assert jsonvalues.problem_in(got[2]) == "number 1e400 is out of the range of a 64-bit float at n"
    # The response's other members, in any order, come back when the items are done.
    response = '{"nextPageToken": "t", "entries": [{"insertId": "a"}], "extra": {"k": [1]}}'
    gen = jsonvalues.iter_document_items(response, "entries")
    assert next(gen) == {"insertId": "a"}
    with pytest.raises(StopIteration) as done:
        next(gen)
    assert done.value.value == (True, {"nextPageToken": "t", "extra": {"k": [1]}})
    with pytest.raises(json.JSONDecodeError, match="Extra data"):
        list(jsonvalues.iter_document_items('[{"a": 1}]\n[{"b": 2}]', "entries"))
    with pytest.raises(json.JSONDecodeError, match="Expecting ','"):
        list(jsonvalues.iter_document_items('[{"a": 1} {"b": 2}]', "entries"))


def test_a_field_of_the_wrong_json_type_is_a_reject_with_its_line(tmp_path: Path) -> None:
    # A dict insertId once broke the sort of the batch's entries and an int task name the
    # task's regex: tracebacks that stopped the collect. Each is a reject naming the field.
    good = {
        "logName": "projects/p/logs/master-replica-0",
        "timestamp": "2016-11-10T10:00:00Z",
        "textPayload": "global_step/sec: 2.5",
    }
    wrong = [
        ("insertId", {"a": 1}, "field 'insertId' is a JSON dict, not a string"),
        ("timestamp", 20161110, "field 'timestamp' is a JSON int, not a string"),
        (
            "labels",
            {"ml.googleapis.com/task_name": 5},
            "field 'labels.ml.googleapis.com/task_name' is a JSON int, not a string",
        ),
        ("resource", {"type": ["ml_job"]}, "field 'resource.type' is a JSON list, not a string"),
        ("severity", ["INFO"], "field 'severity' is a JSON list, not a string"),
        ("textPayload", 5, "field 'textPayload' is a JSON int, not a string"),
        ("logName", 7, "field 'logName' is a JSON int, not a string"),
    ]
    lines = [json.dumps({**good, "insertId": "a"})]
    lines += [json.dumps({**good, key: value}) for key, value, _ in wrong]
    lines.append(json.dumps({**good, "insertId": "b", "timestamp": "2016-11-10T10:00:01Z"}))
    path = tmp_path / "master-replica-0" / "2016" / "11" / "10" / "10:00:00_10:59:59_S0.json"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(lines) + "\n")
    ds = Dataset(tmp_path / "ds")
    done = collect_runs(ds, [RunSpec(run_id="r", tier="BASIC", files=[path])], settle_s=0)
    # 9 lines: the first and last are step records, the 7 between them rejects (9 = 2 + 7).
    assert (done.total("lines"), done.total("steps"), done.total("rejects")) == (9, 2, 7)
    rejects = ds.read("rejects").sort("source_offset")
    assert rejects.select("source_offset", "reason").rows() == [(n + 2, why) for n, (_, _, why) in enumerate(wrong)]
