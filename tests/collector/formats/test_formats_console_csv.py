"""The Cloud Logging console's CSV download."""

from __future__ import annotations

import csv
import gzip
import io
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from tierscope.collector.collect import collect_file
from tierscope.collector.errors import InputError
from tierscope.collector.formats import ParseContext, parse_lines
from tierscope.collector.formats.console_csv import looks_like_console_csv, parse_entries, read_console_csv
from tierscope.collector.manifest import RunSpec
from tierscope.dataset.schema import EVENT_SCHEMA, STEP_SCHEMA, conform
from tierscope.dataset.store import Dataset

HEADER = ["timestamp", "severity", "insertId", "resource.labels.task_name", "textPayload"]
ROWS = [  # newest first, as the console writes it
    [
        "2024-04-12T08:16:00.000000Z",
        "ERROR",
        "e6",
        "master-replica-0",
        'Traceback (most recent call last):\n  File "t.py", line 1\nRuntimeError: worker lost',
    ],
    [
        "2024-04-12T08:15:05.100000Z",
        "ERROR",
        "e5",
        "worker-replica-1",
        "INFO:tensorflow:loss = 0.5, step = 200 (2.0 sec)",
    ],
    [
        "2024-04-12T08:15:05.000000Z",
        "INFO",
        "e4",
        "worker-replica-1",
        "INFO:tensorflow:loss = 0.5, step = 200 (2.0 sec)",
    ],
    ["2024-04-12T08:15:04.000000Z", "INFO", "e3", "worker-replica-1", "INFO:tensorflow:global_step/sec: 50"],
    ["2024-04-12T08:15:02.000000Z", "INFO", "e2", "master-replica-0", "INFO:tensorflow:loss = 0.9, step = 100"],
    ["2024-04-12T08:15:01.000000Z", "INFO", "e1", "master-replica-0", "INFO:tensorflow:loss = 0.9, step = 1.5x"],
]


def write_csv(path: Path, compress: bool = False) -> Path:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(HEADER)
    writer.writerows(ROWS)
    data = buf.getvalue().encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def test_entries_in_time_order_with_error_copies_dropped(tmp_path: Path) -> None:
    entries = read_console_csv(write_csv(tmp_path / "logs.csv"))
    assert entries.get_column("entry_id").to_list() == ["e1", "e2", "e3", "e4", "e5", "e6"]
    got = parse_entries(entries, ParseContext(chain=parse_lines))
    steps = conform(got.steps, STEP_SCHEMA)
    # e5 is the ERROR copy of e4 (same task and message, 0.1 s apart): one record. e3's rate
    # folds into e4 (same task). Timestamps come from the entries.
    assert steps.select(
        "entry_id", "role", "task_index", "step", "interval_s", "global_steps_per_s", "timestamp"
    ).rows() == [
        ("e2", "master", 0, 100, None, None, datetime(2024, 4, 12, 8, 15, 2, tzinfo=UTC)),
        ("e4", "worker", 1, 200, 2.0, 50.0, datetime(2024, 4, 12, 8, 15, 5, tzinfo=UTC)),
    ]
    assert steps.get_column("source_offset").null_count() == 2
    events = conform(got.events, EVENT_SCHEMA)
    assert events.select("entry_id", "event", "reason", "role", "step").rows() == [
        ("e6", "failed", "RuntimeError: worker lost", "master", 200)
    ]
    # The reject names its entry (insertId and time), as rejects from `collect cloud` and the
    # JSON export do: CSV rows, export items and live entries all go through one path.
    assert got.rejects.select("source_offset", "reason").rows() == [
        (None, "step '1.5x' is not a whole number >= 0 (Cloud Logging entry e1 at 2024-04-12T08:15:01.000000Z)")
    ]


@pytest.mark.parametrize("compress", [False, True])
def test_collect_recognises_the_download(tmp_path: Path, compress: bool) -> None:
    path = write_csv(tmp_path / "downloaded-logs.csv", compress)
    dataset = Dataset(tmp_path / "ds")
    counts = collect_file(dataset, path, RunSpec(run_id="r", tier="STANDARD_1", files=[path]))
    assert (counts.format, counts.lines, counts.steps, counts.events, counts.rejects) == ("logging-csv", 6, 2, 1, 1)


def test_header_sniffing_and_errors(tmp_path: Path) -> None:
    assert looks_like_console_csv(",".join(HEADER))
    assert not looks_like_console_csv("Train [master/0], step 100")
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="no 'timestamp'"):
        read_console_csv(bad)


def test_glog_headers_are_dated_by_the_entries_year(tmp_path: Path) -> None:
    # A TF2 Object Detection download (case03's shape): the platform re-logs the stderr line at
    # ERROR behind a glog header (no year). Step 700's INFO entry is missing, so its ERROR copy
    # stays, cut after "Step 700": a record at the glog time, dated by the entries' year 2021.
    glog = "I0322 {} 140231166109440 model_lib_v2.py:652] "
    rows = [
        ["2021-03-22T03:17:01.596560Z", "ERROR", "c", "master-replica-0", glog.format("03:17:01.545832") + "Step 800 "
         "per-step time 21.946s loss=0.337"],
        ["2021-03-22T03:17:01.545832Z", "INFO", "b", "master-replica-0", "Step 800 per-step time 21.946s loss=0.337"],
        ["2021-03-22T02:42:07.387903Z", "ERROR", "a", "master-replica-0", glog.format("02:42:07.385901") + "Step 700"],
    ]  # fmt: skip
    buf = io.StringIO()
    csv.writer(buf).writerows([HEADER, *rows])
    path = tmp_path / "od.csv"
    path.write_text(buf.getvalue())
    steps = conform(parse_entries(read_console_csv(path), ParseContext(chain=parse_lines)).steps, STEP_SCHEMA)
    assert steps.select("entry_id", "step", "global_steps_per_s", "timestamp").rows() == [
        ("a", 700, None, datetime(2021, 3, 22, 2, 42, 7, 385901, tzinfo=UTC)),
        ("b", 800, 1 / 21.946, datetime(2021, 3, 22, 3, 17, 1, 545832, tzinfo=UTC)),
    ]


def test_a_ragged_row_is_a_reject_naming_its_line_and_the_other_rows_are_stored(tmp_path: Path) -> None:
    buf = io.StringIO()
    csv.writer(buf).writerows([HEADER, *ROWS])
    good = buf.getvalue().splitlines(keepends=True)
    # Line 1 is the header; row 1 holds a three-line quoted traceback (lines 2-4), rows 2 and 3
    # are lines 5 and 6. A pasted row with an unquoted comma goes in as row 4, line 7: 6 fields,
    # not 5; the three rows after it are lines 8-10, and a row cut short ends the file: row 8, line 11.
    ragged = "2024-04-12T08:15:04.500000Z,INFO,e9,worker-replica-1,INFO:tensorflow:loss = 0.7, step = 150\n"
    short = "2024-04-12T08:15:00.000000Z,INFO\n"
    path = tmp_path / "ragged.csv"
    path.write_text("".join([*good[:6], ragged, *good[6:], short]))
    dataset = Dataset(tmp_path / "ds")
    counts = collect_file(dataset, path, RunSpec(run_id="r", tier=None, files=[path]))
    # 6 rows read as before (2 steps, 1 event, 1 reject) plus the 2 ragged rows as rejects: 8 rows, 3 rejects.
    assert (counts.format, counts.lines, counts.steps, counts.events, counts.rejects) == ("logging-csv", 8, 2, 1, 3)
    rejects = dataset.read("rejects").filter(pl.col("format") == "logging-csv").sort("source_offset")
    assert rejects.select("source", "source_offset").rows() == [(str(path), 7), (str(path), 11)]
    assert rejects["reason"].to_list() == [
        "row 4 (line 7) has 6 fields, the header has 5: an unquoted comma or quote, or a row cut short; "
        "fix the row or download the logs again",
        "row 8 (line 11) has 2 fields, the header has 5: an unquoted comma or quote, or a row cut short; "
        "fix the row or download the logs again",
    ]
    assert rejects["raw"].to_list() == [ragged.rstrip("\n"), short.rstrip("\n")]


def test_a_headerless_row_over_the_csv_field_limit_is_a_reject(tmp_path: Path) -> None:
    # Without a header row the rows went straight to csv.reader: a field over its 128 Ki
    # character limit was a traceback (_csv.Error) that stopped the collect.
    def row(entry: str, second: int, message: str) -> str:
        return (
            f'{entry},2016-11-10T10:00:0{second}Z,INFO,projects/p/logs/master-replica-0,master-replica-0,"{message}"\n'
        )

    step = "Train [master/0], step {}:loss:2.4, accuracy:0.1 (5.6 sec) 17.8 global_steps/s, 3.9 local_steps/s"
    path = tmp_path / "pasted.csv"
    path.write_text(row("a1", 0, step.format(100)) + row("a2", 1, "x" * 200_000) + row("a3", 2, step.format(200)))
    dataset = Dataset(tmp_path / "ds")
    counts = collect_file(dataset, path, RunSpec(run_id="r", tier=None, files=[path]))
    # 3 rows: the first and last are step records, the middle one a reject (3 = 2 + 1).
    assert (counts.format, counts.lines, counts.steps, counts.rejects) == ("logging-csv", 3, 2, 1)
    [reason] = dataset.read("rejects")["reason"].to_list()
    assert reason == (
        "row 2 (line 2) cannot be read as CSV (field larger than field limit (131072)): an unquoted comma or "
        "quote, or a row cut short; fix the row or download the logs again"
    )
