"""Reading a log file in batches: every line once, numbered from 1, whatever the batch size."""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tierscope.collector.sources import files
from tierscope.collector.sources.files import iter_line_batches


def read(path: Path, batch_bytes: int, final: bool = True, start: tuple[int, int] = (0, 0)) -> list[tuple[int, str]]:
    return [
        row
        for batch in iter_line_batches(path, start[0], start[1], batch_bytes=batch_bytes, final=final)
        for row in batch.lines.iter_rows()
    ]


@pytest.mark.parametrize("batch_bytes", [1, 2, 5, 1024])
def test_lines_blank_lines_crlf_and_an_unterminated_last_line(tmp_path: Path, batch_bytes: int) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(b"one\r\n\ntwo\nthree")
    # 4 lines: the CR of CRLF goes, the blank line keeps its number, the last line has no newline
    assert read(path, batch_bytes) == [(1, "one"), (2, ""), (3, "two"), (4, "three")]
    # while a writer may still be writing the last line, it waits for the next collect
    assert read(path, batch_bytes, final=False) == [(1, "one"), (2, ""), (3, "two")]


def test_bytes_that_are_not_utf8_are_replaced_and_the_line_keeps_its_number(tmp_path: Path) -> None:
    path = tmp_path / "b.log"
    path.write_bytes(b"ok\nbad \xff byte\nok again\n")
    assert read(path, 1024) == [(1, "ok"), (2, "bad \ufffd byte"), (3, "ok again")]


def test_resuming_after_a_byte_offset_numbers_lines_from_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "c.log"
    path.write_bytes(b"first\nsecond\nthird\n")
    batches = list(iter_line_batches(path, batch_bytes=8))
    # "first\n" is 6 bytes: the first batch ends after line 1, at byte 6
    assert (batches[0].end_offset, batches[0].end_line) == (6, 1)
    assert read(path, 1024, start=(6, 1)) == [(2, "second"), (3, "third")]


def test_an_empty_file_has_no_lines(tmp_path: Path) -> None:
    path = tmp_path / "d.log"
    path.write_bytes(b"")
    assert read(path, 1024) == []


@pytest.mark.parametrize("arrow_min_bytes", [files._ARROW_MIN_BYTES, 0])
def test_batches_stay_intact_after_later_batches_are_read(tmp_path: Path, arrow_min_bytes: int) -> None:
    # The reader reuses one buffer: a batch kept by the caller must not change under it, whether
    # it was copied into polars or handed over as Arrow views into the buffer (0: every batch).
    path = tmp_path / "e.log"
    text = [f"line {n:03d} " + "x" * (n % 17) for n in range(1, 201)]
    path.write_text("\n".join(text) + "\n")
    with patch.object(files, "_ARROW_MIN_BYTES", arrow_min_bytes), patch.object(files, "_PIECE_BYTES", 20):
        batches = list(iter_line_batches(path, batch_bytes=64))
    assert len(batches) > 10
    assert [row for b in batches for row in b.lines.iter_rows()] == list(enumerate(text, start=1))


@settings(max_examples=300, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"b", b"\n", b"\r", b"\r\n", b"\xc3\xa9", b"\xff",
                                      b"0123456789abc"]), max_size=40),
       batch_bytes=st.sampled_from([1, 3, 8, 64]), arrow_min_bytes=st.sampled_from([0, 1 << 30]))  # fmt: skip
def test_same_lines_as_python_decode_and_split(data: list[bytes], batch_bytes: int, arrow_min_bytes: int) -> None:
    # Batches are cut into pieces of _PIECE_BYTES before splitting; make them tiny so the
    # piece boundaries fall everywhere. Pieces are copied or handed over as Arrow views (values
    # of up to 12 bytes held in the view, longer ones pointing into the read buffer).
    text = b"".join(data)
    with (
        tempfile.TemporaryDirectory() as tmp,
        patch.object(files, "_PIECE_BYTES", 5),
        patch.object(files, "_ARROW_MIN_BYTES", arrow_min_bytes),
    ):
        path = Path(tmp) / "f.log"
        path.write_bytes(text)
        got = read(path, batch_bytes)
    decoded = text.decode("utf-8", errors="replace").removesuffix("\n")
    expected = [(n, line.rstrip("\r")) for n, line in enumerate(decoded.split("\n"), start=1)] if text else []
    assert got == expected


def test_copied_batches_hold_the_same_lines_as_those_handed_over_through_arrow(tmp_path: Path) -> None:
    # A collect copies its first batches into polars (no pyarrow yet); the Arrow path takes
    # batches of _ARROW_MIN_BYTES and more, set to 0 here so that every batch would take it.
    path = tmp_path / "g.log"
    text = [f"line {n:03d} caf\u00e9 " + "x" * (n % 23) for n in range(1, 301)]
    path.write_text("\r\n".join(text) + "\n", encoding="utf-8")

    def lines(copied: int) -> list[tuple[int, str]]:
        with path.open("rb") as fh, patch.object(files, "_ARROW_MIN_BYTES", 0):
            return [
                row
                for b in files.iter_handle_batches(fh, path, batch_bytes=256, copied=copied)
                for row in b.lines.iter_rows()
            ]

    # 300 numbered lines, the CR of each CRLF dropped, whichever way each batch was built
    assert lines(0) == lines(3) == lines(1000) == list(enumerate(text, start=1))


def test_first_batches_of_a_ramp_are_smaller_and_hold_the_same_lines(tmp_path: Path) -> None:
    # 300 lines of 18 bytes ("line 001 ........" and its newline). Batches of 1024 bytes after a
    # first of 128 and a second of 256: the cut falls at the last newline within each fill.
    path = tmp_path / "h.log"
    text = [f"line {n:03d} " + "." * 8 for n in range(1, 301)]
    path.write_text("\n".join(text) + "\n")
    with path.open("rb") as fh:
        batches = list(files.iter_handle_batches(fh, path, batch_bytes=1024, first_sizes=(128, 256)))
    # 128 bytes hold 7 whole lines (126 bytes); then the 2 bytes of line 8 plus 256 read: 258
    # bytes, 14 whole lines (252); then 6 left plus 1024: 1030 bytes, 57 lines (1026)
    assert [b.lines.height for b in batches[:3]] == [7, 14, 57]
    assert [row for b in batches for row in b.lines.iter_rows()] == list(enumerate(text, start=1))


def test_ramp_sizes_start_a_large_batch_at_an_eighth_then_a_quarter() -> None:
    mib = 1 << 20
    # 32 MiB batches: 4 MiB, then 8 MiB; batches under 8 MiB (tests' small ones) have no ramp
    assert files.ramp_sizes(32 * mib) == (4 * mib, 8 * mib)
    assert files.ramp_sizes(8 * mib - 1) == ()


def test_a_batch_handed_over_through_arrow_imports_neither_pyarrow_compute_nor_numpy(tmp_path: Path) -> None:
    # pl.Series(pyarrow array) imports pyarrow.compute, and numpy with it (0.06-0.1 CPU-s a collect); the C data
    # interface takes the same views without them. In a process of its own: the test runner has both loaded.
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['numpy'] = None\n"  # as a collect's own process imports pyarrow (store_options)
        "import pyarrow\n"
        "del sys.modules['numpy']\n"
        "from tierscope.collector.sources import files\n"
        "buf = bytearray(b'Train [master/0], step 1\\n' * 400_000)\n"  # 10 MB: above _ARROW_MIN_BYTES
        "lines = files._split_lines(buf, 0, len(buf))\n"
        "print(lines.len(), lines.n_unique(), lines.dtype, 'pyarrow.compute' in sys.modules, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    # 400,000 lines, all the one line without its newline, as text; neither module loaded
    assert done.stdout.split() == ["400000", "1", "String", "False", "False"]
