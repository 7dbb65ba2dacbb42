"""LogEntry -> records: every payload kind, role/task from the task name, the export reader."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tierscope.collector.errors import InputError
from tierscope.collector.formats import ParseContext, parse_lines
from tierscope.collector.formats.logentries_export import looks_like_export, read_export
from tierscope.collector.sources.logentries import Entry, records_from_entries, task_from_name
from tierscope.dataset.schema import EVENT_SCHEMA, REJECT_SCHEMA, STEP_SCHEMA


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("master-replica-0", ("master", 0)),
        ("worker-replica-3", ("worker", 3)),
        ("ps-replica-1", ("ps", 1)),
        ("evaluator-replica-0", ("evaluator", 0)),
        ("workerpool0-0", ("chief", 0)),
        ("workerpool1-4", ("worker", 4)),
        ("workerpool2-2", ("ps", 2)),
        ("workerpool3-0", ("evaluator", 0)),
        ("mnist-worker-1", ("worker", 1)),  # a TFJob pod
        ("dist-mnist-for-e2e-test-chief-0", ("chief", 0)),
        ("service", (None, None)),
        ("workerpool7-0", (None, None)),
        (None, (None, None)),
    ],
)
def test_task_from_name(name: str | None, expected: tuple[str | None, int | None]) -> None:
    assert task_from_name(name) == expected


T0 = "2026-01-05T09:00:00.123456789Z"
T0_US = datetime(2026, 1, 5, 9, 0, 0, 123456, tzinfo=UTC)


def api_entry(insert_id: str, task: str | None = "worker-replica-1", *, label_task: bool = False, **payload: object):
    resource_labels = {"job_id": "job_7"}
    labels = {}
    if task and label_task:
        labels["ml.googleapis.com/task_name"] = task
    elif task:
        resource_labels["task_name"] = task
    return {
        "insertId": insert_id,
        "logName": f"projects/p/logs/{task or 'service'}",
        "resource": {"type": "ml_job", "labels": resource_labels},
        "labels": labels,
        "severity": "INFO",
        "timestamp": T0,
        **payload,
    }


LINE = (
    "Train [worker/1], step 300: loss: 1.250, accuracy: 0.500 (12.000 sec) 40.000 global steps/s, 10.000 local steps/s"
)


def test_every_payload_kind() -> None:
    structured_step = {
        "tierscope": "step",
        "run_id": "run_x",
        "role": "chief",
        "task_index": 0,
        "step": 100,
        "loss": 0.5,
        "elapsed_s": 2.0,
        "timestamp": "2026-01-05T08:59:59Z",
        "logging.googleapis.com/labels": {"tier": "BASIC_GPU"},
    }
    structured_event = {"tierscope": "event", "event": "started", "detail": {"workers": 4}}
    entries = [
        Entry.from_api_repr(api_entry("a", "workerpool0-0", jsonPayload=structured_step)),
        Entry.from_api_repr(api_entry("b", "ps-replica-2", jsonPayload=structured_event)),
        Entry.from_api_repr(api_entry("c", jsonPayload={"message": LINE, "python_logger": "root"})),
        Entry.from_api_repr(
            api_entry("d", "master-replica-0", label_task=True, textPayload=LINE.replace("300", "301"))
        ),
        Entry.from_api_repr(api_entry("e", textPayload="ERROR: gcloud crashed (BadStatusCodeError):")),
        Entry.from_api_repr(api_entry("f", jsonPayload={"unrelated": True})),
        Entry.from_api_repr(api_entry("g", textPayload="INFO:root:Saving checkpoint")),
        Entry.from_api_repr(api_entry("h", "worker-replica-2", jsonPayload={"tierscope": "step", "step": -1})),
        Entry.from_api_repr(api_entry("i", protoPayload={"@type": "audit"})),
    ]
    got = records_from_entries(entries, ParseContext(chain=parse_lines), tier="STANDARD_1")
    assert got.steps.schema == STEP_SCHEMA
    assert got.events.schema == EVENT_SCHEMA
    assert got.rejects.schema == REJECT_SCHEMA

    steps = {row["entry_id"]: row for row in got.steps.iter_rows(named=True)}
    assert sorted(steps) == ["a", "c", "d"]
    # a: the record names run, role, task, time and tier itself; they win over the entry's.
    a = steps["a"]
    assert (a["run_id"], a["role"], a["task_index"], a["step"], a["tier"]) == ("run_x", "chief", 0, 100, "BASIC_GPU")
    assert a["timestamp"] == datetime(2026, 1, 5, 8, 59, 59, tzinfo=UTC)
    assert (a["source"], a["source_offset"], a["format"]) == ("projects/p/logs/workerpool0-0", None, "structured")
    # c: jsonPayload.message holds a cloudml line; run from the job id, tier from the caller, time from the entry.
    c = steps["c"]
    assert (c["run_id"], c["tier"], c["role"], c["task_index"], c["step"]) == ("job_7", "STANDARD_1", "worker", 1, 300)
    assert (c["loss"], c["accuracy"], c["elapsed_s"], c["local_steps_per_s"]) == (1.25, 0.5, 12.0, 10.0)
    assert c["timestamp"] == T0_US  # nanoseconds truncated to microseconds
    assert c["format"] == "cloudml"
    # d: textPayload; the line's own role (worker/1) wins over the task label (master-replica-0).
    assert (steps["d"]["role"], steps["d"]["task_index"], steps["d"]["step"]) == ("worker", 1, 301)

    events = {row["entry_id"]: row for row in got.events.iter_rows(named=True)}
    assert sorted(events) == ["b", "e"]
    # b: a structured event without role: role and index from the task name ps-replica-2.
    assert (events["b"]["event"], events["b"]["role"], events["b"]["task_index"]) == ("started", "ps", 2)
    assert events["b"]["detail"] == '{"workers": 4}'
    assert (events["e"]["event"], events["e"]["reason"]) == ("failed", "gcloud crashed (BadStatusCodeError)")
    assert (events["e"]["role"], events["e"]["task_index"]) == ("worker", 1)

    # h: a broken structured record is kept aside, naming the entry.
    [reject] = got.rejects.iter_rows(named=True)
    assert reject["reason"] == ("field 'step' is -1, negative (Cloud Logging entry h at 2026-01-05T09:00:00.123456Z)")
    assert (reject["run_id"], reject["source"], reject["source_offset"]) == (
        "job_7",
        "projects/p/logs/worker-replica-2",
        None,
    )
    # f (not ours), g (a line no format reads) and i (protoPayload) are skipped: 3.
    assert got.skipped == 3


def test_role_and_index_from_the_older_label_and_vertex_pools() -> None:
    line = "Train [master/0], step 5 (1.000 sec) 5.000 global steps/s, 5.000 local steps/s"
    structured = {"tierscope": "step", "step": 9, "elapsed_s": 1.0}
    entries = [
        Entry.from_api_repr(api_entry("a", "worker-replica-3", label_task=True, jsonPayload=structured)),
        Entry.from_api_repr(api_entry("b", "workerpool2-1", jsonPayload=dict(structured, step=10))),
        Entry.from_api_repr(api_entry("c", "workerpool1-0", jsonPayload=dict(structured, step=11, role="worker"))),
        Entry.from_api_repr(api_entry("d", "workerpool0-0", textPayload=line)),
    ]
    got = records_from_entries(entries, ParseContext(chain=parse_lines))
    rows = {r["entry_id"]: (r["role"], r["task_index"]) for r in got.steps.iter_rows(named=True)}
    assert rows == {"a": ("worker", 3), "b": ("ps", 1), "c": ("worker", 0), "d": ("master", 0)}


def test_error_severity_copy_is_the_same_record_and_not_a_failure() -> None:
    first = api_entry("x1", textPayload=LINE)
    copy = dict(api_entry("x2", textPayload=LINE), severity="ERROR", timestamp="2026-01-05T09:00:00.200Z")
    got = records_from_entries([Entry.from_api_repr(first), Entry.from_api_repr(copy)], ParseContext(chain=parse_lines))
    # Two rows with equal key columns: the dataset stores one (see the collect tests); no failed event.
    assert got.steps.height == 2
    assert got.steps.unique(subset=["run_id", "role", "task_index", "step", "local_step", "elapsed_s"]).height == 1
    assert got.events.height == 0


def test_multi_line_text_payload_gives_one_record_per_line() -> None:
    text = LINE + "\n" + LINE.replace("step 300", "step 310").replace("12.000", "13.000")
    got = records_from_entries([Entry.from_api_repr(api_entry("m", textPayload=text))], ParseContext(chain=parse_lines))
    assert got.steps["step"].to_list() == [300, 310]
    assert got.steps["entry_id"].to_list() == ["m", "m"]


def test_export_sniff(tmp_path: Path) -> None:
    export = tmp_path / "e.json"
    export.write_text('\n  [\n  {"insertId": "a"}]')
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    launcher = tmp_path / "launcher.log"
    launcher.write_text("[worker-2] Train [worker/2], step 1 (1.0 sec) 1.0 global steps/s, 1.0 local steps/s\n")
    jsonl = tmp_path / "s.jsonl"
    jsonl.write_text('{"tierscope": "step"}\n')
    gz = tmp_path / "e.json.gz"
    gz.write_bytes(gzip.compress(b'[{"insertId": "a"}]'))
    assert [looks_like_export(p) for p in (export, empty, launcher, jsonl, gz)] == [True, True, False, False, True]


def test_read_export_sorts_oldest_first_and_rejects_non_objects(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    items = [
        api_entry("b", textPayload=LINE),
        "not an entry",
        dict(api_entry("a", textPayload=LINE), timestamp="2026-01-05T08:00:00Z"),
        dict(api_entry("c", textPayload=LINE), timestamp="yesterday"),
    ]
    path.write_text(json.dumps(items))
    export = read_export(path, "fallback")
    assert export.items == 4
    assert [e.insert_id for e in export.entries] == ["a", "b"]
    assert export.rejects.select("source_offset", "format").rows() == [(2, "logentries"), (4, "logentries")]
    assert export.rejects["reason"].to_list() == [
        "item 2 of the array is a JSON str, not a LogEntry object",
        "timestamp 'yesterday' is not an RFC 3339 time",
    ]


def test_read_export_bad_json_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text('[{"insertId": "a",\n  oops}]')
    with pytest.raises(InputError, match=r"e\.json looks like a `gcloud logging read --format=json` export .* line 2"):
        read_export(path, "r")
