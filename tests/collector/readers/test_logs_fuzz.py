"""Fuzz the file collector end to end: any bytes in a log file are read without raising, every
line is counted once, and collecting again adds nothing.

(Per-line parser properties, every line exactly one outcome, are fuzzed in test_formats_fuzz.py;
this checks what the ingestion adds: batching, byte decoding, unterminated lines, offsets.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.ingest_helpers import step_line
from tierscope.collector.collect import collect_file
from tierscope.collector.errors import InputError
from tierscope.collector.formats import FORMATS
from tierscope.collector.lineends import SNIFF_BYTES
from tierscope.collector.manifest import RunSpec
from tierscope.collector.reading import ReadOptions
from tierscope.collector.sources.utf16 import is_utf16
from tierscope.dataset.store import Dataset

SEEDS = [step_line(1).encode(), *(f.example.encode() + b"\n" for f in FORMATS.values())]
chunk = st.one_of(
    st.binary(max_size=60),
    st.sampled_from(SEEDS),
    st.sampled_from(SEEDS).flatmap(lambda s: st.integers(0, len(s)).map(lambda n: s[:n])),
    st.sampled_from([b"\n", b"\r\n", b"\xff\xfe", b"\x00", b"Train [", b"{", b'"step": ', b"\xe3\x81"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(chunk, max_size=12).map(b"".join), st.integers(8, 200))
# a UTF-16 mark alone (no text: no line), and one before a line of UTF-16LE text and an odd last byte
@example(b"\xfe\xff", 8)
@example(b"\xff\xfeI\x00N\x00\n\x00\x00", 8)
def test_any_bytes_are_read_every_line_counted_once_and_a_second_collect_adds_nothing(
    data: bytes, batch_bytes: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "x.log"
        log.write_bytes(data)
        ds = Dataset(Path(tmp) / "ds")
        run = RunSpec(run_id="r", tier="BASIC", files=[log])
        if data.startswith(b"\x1f\x8b"):
            # gzip's magic number: the file is read as gzip, and one that is not a whole gzip
            # stream is a clear error that names the file, not lines read as garbage.
            try:
                collect_file(ds, log, run, ReadOptions(batch_bytes=batch_bytes, settle_s=0.0))
            except InputError as exc:
                assert str(log) in str(exc)
            return
        # Lines: one per newline, plus an unterminated last one (settle 0: taken at once); a file of
        # carriage returns and no newline ends its lines with them (tierscope.collector.lineends); a file starting
        # with a UTF-16 mark is read as its text (tierscope.collector.sources.utf16), its newlines the text's.
        utf16 = is_utf16(data[:4])
        if utf16:
            data = data.decode("utf-16", "replace").encode("utf-8")
        end = b"\r" if not utf16 and b"\n" not in data and b"\r" in data[:SNIFF_BYTES] else b"\n"
        n_lines = data.count(end) + (0 if data.endswith(end) or not data else 1)
        first = collect_file(ds, log, run, ReadOptions(batch_bytes=batch_bytes, settle_s=0.0))
        assert first.lines == n_lines
        rows = [ds.read(t) for t in ("steps", "events", "rejects")]
        for frame in rows:
            assert frame.get_column("source_offset").is_between(1, n_lines).all()
        assert ds.read("rejects").get_column("reason").null_count() == 0
        # Again: nothing new to read (a file nothing could be read from is not marked read: it is read again, and
        # again stores nothing); from the start: everything already stored.
        second = collect_file(ds, log, run, ReadOptions(batch_bytes=batch_bytes, settle_s=0.0))
        assert second.lines == (n_lines if first.unread else 0)
        again = collect_file(ds, log, run, ReadOptions(batch_bytes=batch_bytes, settle_s=0.0, reread=True))
        assert again.lines == n_lines and again.steps == again.events == 0
        assert [ds.read(t).height for t in ("steps", "events", "rejects")] == [f.height for f in rows]
