"""One Cloud Logging LogEntry per line, in JSON: the files a Cloud Logging sink writes to a
Cloud Storage bucket, or ``gcloud logging read --format=json`` through ``jq -c '.[]'``.

A sink writes each log's entries to hourly files named ``LOG_ID/YYYY/MM/DD/08:00:00_08:59:59_S0.json``
(shards ``S0``, ``S1``... or ``A0``...; at most 3.5 GiB each; the same entry may be written twice),
one LogEntry per line in its REST JSON form::

    {"insertId": "1x2y3z", "logName": "projects/p/logs/master-replica-0",
     "resource": {"type": "ml_job", "labels": {"job_id": "census_1", "task_name": "master-replica-0"}},
     "textPayload": "Train [master/0], step 100: ...", "timestamp": "2016-11-10T21:04:03.123Z", ...}

Such a file is read like any text log (in batches, from where the last collect stopped), and
each entry like an entry of a whole-file export
(:func:`tierscope.collector.sources.logentries.records_from_lines`): its message through the
format chain, role and task from the task name, run from the job id; rows keep the line's
number, so a reject reads ``file:line``. As in a whole-file export, the messages are read with
a context of their own (kept in :attr:`ParseContext.state` across batches) and no year: a glog
header inside a message, which prints none, leaves the record the entry's own timestamp.

Telling it from tierscope's own structured log, also one JSON object per line: a LogEntry
line has a top-level ``"logName"`` (every LogEntry has one; the structured record never does)
and no top-level ``"tierscope"`` key (a structured record embedded in an entry sits under
``jsonPayload``). Lines are picked by the literal ``"logName"`` (a quote inside a JSON string
is escaped, so only a key matches) and confirmed once decoded; a decoded object without
``logName`` is handed on to the next format. It runs right after
:class:`~tierscope.collector.formats.structured.StructuredJSON` (which hands on an object whose
kind key is nested, and does not count such lines when sniffing) and ahead of every text format,
so it wins the sniff of a file of entries whose messages those formats would also match.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import ParseContext, Parsed, empty_parsed

_KEY = '"logName"'


def _candidate() -> pl.Expr:
    return pl.col("line").str.contains(_KEY, literal=True) & pl.col("line").str.strip_chars_start().str.starts_with("{")


class LogEntryLines:
    name: ClassVar[str] = "logentry-lines"
    example: ClassVar[str] = (
        '{"insertId":"1x2y3z","logName":"projects/p/logs/master-replica-0","resource":{"type":"ml_job",'
        '"labels":{"job_id":"census_1","task_name":"master-replica-0"}},"textPayload":"Train [master/0], step 100: '
        '...","timestamp":"2016-11-10T21:04:03.123Z"}'
    )
    meaning: ClassVar[str] = (
        "one LogEntry per line (a sink's files in Cloud Storage, jq -c over an export): each message is read "
        "like a log line, the task name gives role and index, the job id the run, severity is ignored"
    )

    def sniff(self, lines: pl.Series) -> int:
        frame = lines.to_frame("line")
        return int(frame.select(_candidate().sum()).item())

    def undecided_from(self, lines: pl.DataFrame) -> int | None:
        return None

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        # A literal scan first: text logs (most of the volume) never name a logName and leave here.
        if not lines.select(pl.col("line").str.contains(_KEY, literal=True).any()).item():
            return empty_parsed(lines)
        # Imported here: most files hold no LogEntry (and the entries' reader is a large module).
        from tierscope.collector.sources.logentries import records_from_lines

        candidates = lines.filter(_candidate())
        if context.end is not None:
            # Look-ahead lines come again with the next batch: read them then, so the messages'
            # own context (kept across batches) sees each entry once.
            candidates = candidates.filter(pl.col("source_offset") < context.end)
        if candidates.height == 0:
            return empty_parsed(lines)
        inner = context.state.setdefault(self.name, ParseContext(formats=context.formats, chain=context.chain))
        inner.chain = inner.chain or context.chain  # one recalled from a saved memory before the chain was known
        parsed, handed_on = records_from_lines(candidates.select("source_offset", "line").rows(), inner)
        taken = candidates.filter(~pl.col("source_offset").is_in(handed_on)).get_column("source_offset")
        parsed.rest = lines.filter(~pl.col("source_offset").is_in(taken.implode()))
        return parsed
