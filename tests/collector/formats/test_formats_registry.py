"""One registry for line formats and whole-file formats: listed, named by --format, sniffed the
same way, extensible at run time; whole-file messages read through the envelope/format path."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import ClassVar

import polars as pl
import pytest

from tierscope.collector.collect import collect_file
from tierscope.collector.formats import (
    ParseContext,
    Parsed,
    UnknownFormatError,
    describe_formats,
    format_names,
    sniff_file,
    sniff_format,
)
from tierscope.collector.formats.base import SingleLineFormat, number, split_by
from tierscope.collector.manifest import RunSpec
from tierscope.collector.reading import ReadOptions
from tierscope.dataset.store import Dataset


class StepTime(SingleLineFormat):
    """A format the tests declare: ``Step N per-step time Xs``, one second per step -> 1/X steps/s."""

    name: ClassVar[str] = "test-step-time"
    example: ClassVar[str] = "Step 20900 per-step time 11.124s loss=1.705"
    meaning: ClassVar[str] = "a test format"
    mark: ClassVar[str] = r"^Step \d+ per-step time"

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        ours, rest = split_by(lines, self.marked())
        got = ours.with_columns(pl.col("line").str.extract_groups(r"^Step (?P<s>\d+) per-step time (?P<t>[\d.]+)s"))
        steps = got.unnest("line").select(
            "source_offset",
            number("s", pl.Int64()).alias("step"),
            (1 / number("t")).alias("global_steps_per_s"),
            pl.lit(self.name).alias("format"),
        )
        return Parsed(steps=steps, events=pl.DataFrame(), rejects=pl.DataFrame(), rest=rest)


def test_every_format_is_listed_and_named_by_format() -> None:
    listed = {info.name: info.kind for info in describe_formats()}
    assert [n for n in format_names() if listed.get(n) not in ("format", "file")] == []
    assert {"logentries", "logging-csv"} <= set(format_names())
    assert {"status", "traceback"} <= {n for n, k in listed.items() if k == "always"}
    assert {"console", "stream-logs", "compose", "glog"} <= {n for n, k in listed.items() if k == "envelope"}


CASE02 = [
    {
        "jsonPayload": {"message": "Step 20900 per-step time 11.124s loss=1.705"},
        "logName": "projects/p/logs/master-replica-0",
        "severity": "INFO",
        "timestamp": "2021-03-23T10:34:36.455145835Z",
    },
    {
        "insertId": "1m02xqjg250xpg0",
        "jsonPayload": {
            "levelname": "ERROR",
            "message": "I0323 10:34:36.455145 140138105964352 model_lib_v2.py:651] "
            "Step 20900 per-step time 11.124s loss=1.705",
        },
        "logName": "projects/p/logs/master-replica-0",
        "severity": "ERROR",
        "timestamp": "2021-03-23T10:34:36.455868005Z",
    },
]


def _row(insert_id: str, when: str, severity: str, message: str) -> list[str]:
    """A row of a headerless console CSV download (21 columns, as in tensorflow/models#9832)."""
    return [
        "", insert_id, "ml_job", "master-replica-0", "p", "job_1", when, severity, "", "", "us-central1-c", "root",
        "0", "cmle-training-0", "projects/p/logs/master-replica-0", when, "328", "1616383021.5", "/runcloudml.py",
        message, severity,
    ]  # fmt: skip


def _csv(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


HEADERLESS = _csv(
    [  # newest first, the ERROR copy carries a glog header the INFO entry lacks
        _row("e3", "2021-03-22T03:17:01.596560478Z", "ERROR",
             "I0322 03:17:01.545832 1402 model_lib_v2.py:652] Step 800 per-step time 21.946s loss=0.337"),
        _row("e2", "2021-03-22T03:17:01.545832633Z", "INFO", "Step 800 per-step time 21.946s loss=0.337"),
        _row("e1", "2021-03-22T02:42:07.387903212Z", "ERROR",
             "I0322 02:42:07.385901 1402 model_lib_v2.py:652] Step 700 per-step time 20.000s loss=0.4"),
    ]
)  # fmt: skip


@pytest.mark.parametrize(
    ("name", "text", "fmt", "lines"),
    [("case02.json", json.dumps(CASE02), "logentries", 2), ("case03.csv", HEADERLESS, "logging-csv", 3)],
)
@pytest.mark.parametrize("given", [False, True])
def test_whole_file_formats_read_messages_through_envelopes_and_formats(
    tmp_path: Path, name: str, text: str, fmt: str, lines: int, given: bool
) -> None:
    path = tmp_path / name
    path.write_text(text)
    assert sniff_file(text).name == fmt  # type: ignore[union-attr]
    dataset = Dataset(tmp_path / "ds")
    counts = collect_file(
        dataset, path, RunSpec(run_id="r", tier=None, files=[path]), ReadOptions(fmt=fmt if given else None)
    )
    steps = dataset.read("steps").sort("step")
    # The ERROR-severity copies (glog header stripped) are the same record, and no failure.
    assert (counts.format, counts.lines, counts.events) == (fmt, lines, 0)
    assert dataset.read("events").height == 0
    rows = steps.select("role", "task_index", "step", "global_steps_per_s").rows()
    if fmt == "logentries":
        assert rows == [("master", 0, 20900, pytest.approx(1 / 11.124))]
    else:
        assert rows == [("master", 0, 700, pytest.approx(1 / 20.0)), ("master", 0, 800, pytest.approx(1 / 21.946))]


def test_unknown_format_lists_every_name(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    path.write_text("x\n")
    with pytest.raises(UnknownFormatError, match="logentries, logging-csv"):
        collect_file(
            Dataset(tmp_path / "ds"), path, RunSpec(run_id="r", tier=None, files=[path]), ReadOptions(fmt="nope")
        )


def test_a_declared_format_is_listed_sniffed_and_named() -> None:
    # Formats added at run time are the declared ones, passed as ``extra`` (ParseContext.formats).
    extra = (StepTime(),)
    assert "test-step-time" in format_names(extra)
    assert ("test-step-time", "declared") in {(i.name, i.kind) for i in describe_formats(extra)}
    assert sniff_format(["Step 1 per-step time 2s"], extra) == "test-step-time"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ('[\n  {"insertId": "a"}', "logentries"),
        ("timestamp,severity,insertId,textPayload\n", "logging-csv"),
        (HEADERLESS, "logging-csv"),
        ("[worker-2] Train [worker/2], step 1", None),
        ("INFO:root:Train [master/0], step 1 (0.1 sec) 1.0 global steps/s, 1.0 local steps/s\n", None),
    ],
)
def test_sniff_file(head: str, expected: str | None) -> None:
    found = sniff_file(head)
    assert (found.name if found else None) == expected
