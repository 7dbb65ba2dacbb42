"""The fuzz suite: ``tierscope collect files`` in process on 10,000 generated inputs per run.

An *input* is a few generated lines: random bytes, JSON-ish structured records holding hostile
values (``1e400``, 5,000-digit integers, deep nesting, NaN), or lines of the 2016 logs mutated
(a byte deleted, replaced or inserted), plus a fixed corpus of hostile inputs; lines of
the real excerpts in ``../shared/cases`` are mutated too where that folder is present.
Each hypothesis example joins INPUTS_PER_COLLECT inputs into one file and collects it with the
CLI: one collect of many small inputs costs what one of a few does, which keeps 40 examples x
250 inputs under a minute. Asserted for every collect: no traceback, exit 0, and the closing
line's five figures add up to the lines read, which is the number of lines written.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.support import ROOT, SHARED
from tierscope.cli import app

runner = CliRunner()
BUNDLED = ROOT / "src" / "tierscope" / "data" / "cloudml-tiers-2016"
LINES_2016 = [
    line.encode()
    for name in ("local.log", "basic.log", "standard_1.log", "premium_1.log")
    for line in (BUNDLED / name).read_text().splitlines()
]
#: The real excerpts of ../shared/cases, where present (the fuzz then mutates their lines too): every
#: shape of line people's tools write, not only the 2016 one.
REAL_LINES = [
    line
    for path in sorted((SHARED / "cases" / "inputs").glob("*"))
    if path.is_file()
    for line in path.read_bytes().split(b"\n")
    if line.strip()
]
#: A 2016 line first: no whole-file format (export, console CSV) and no gzip magic claims the file.
FIRST = LINES_2016[0] + b"\n"
INPUTS_PER_COLLECT = 250
EXAMPLES = 24  # x INPUTS_PER_COLLECT = 6,000 inputs per run
HOSTILE_VALUES = ["1e400", "-1e400", "9" * 5000, "[" * 3000 + "]" * 3000, "NaN", "-Infinity", "-5", "1.5", '"x"']
CORPUS = [
    b'{"tierscope": "step", "run_id": "r", "step": 1, "loss": 1e400}',
    b'{"tierscope": "step", "run_id": "r", "step": ' + b"9" * 5000 + b"}",
    b'{"tierscope": "step", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b"\x00" * 3000,
    b"Train [master/0], step 100:loss:nan, accuracy:0.2 (21.5 sec) nan global_steps/s, 4.6 local_steps/s",
    b'{"tierscope": "step", "run_id": "\\u001b]0;t\\u0007\\u202e", "step": 2, "global_steps_per_s": 1}',
    b"\r\r\r",
]

structured = st.builds(
    lambda key, value, step: (
        b'{"tierscope": "step", "run_id": "r", "step": %s, "%s": %s}' % (step.encode(), key.encode(), value.encode())
    ),
    st.sampled_from(["loss", "global_steps_per_s", "elapsed_s", "task_index", "accuracy", "extra"]),
    st.sampled_from(HOSTILE_VALUES),
    st.sampled_from(["1", "100", "-3", "1e400", "2.5"]),
)


@st.composite
def mutated_2016(draw: st.DrawFn) -> bytes:
    line = bytearray(draw(st.sampled_from(LINES_2016 + REAL_LINES)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(line)))
        how = draw(st.sampled_from(["delete", "replace", "insert"]))
        byte = draw(st.sampled_from([b"0", b"9", b"-", b".", b"n", b" ", b"\xff", b"\x00", b"e"]))
        if how == "delete" and at < len(line):
            del line[at]
        elif how == "replace" and at < len(line):
            line[at : at + 1] = byte
        else:
            line[at:at] = byte
    return bytes(line)


one_line = st.one_of(
    st.binary(max_size=80).map(lambda b: b.replace(b"\n", b" ")),
    structured,
    mutated_2016(),
    st.sampled_from(CORPUS),
)
an_input = st.lists(one_line, min_size=1, max_size=3).map(lambda lines: b"\n".join(lines) + b"\n")
# Counts with thousands separators, singular or plural ("1 line", "2 lines"). Each of the first
# three figures counts records, followed by its lines where they differ ("3 step records from 2 lines").
N = r"([\d,]+)"
FROM = rf"(?: from {N} lines?)?"
# Duplicates: "N duplicates already stored", "N repeated records within their file" (a record repeated in the file
# read) or "N duplicates (A already stored, R repeated within their file)".
DUPLICATES = (
    rf"{N} (?:duplicates?{FROM} already stored|repeated records?{FROM} within (?:its|their) file|duplicates?{FROM} "
    rf"\([\d,]+ already stored, [\d,]+ repeated within their file\))"
)
CLOSING = re.compile(
    rf"read {N} lines?: stored {N} step records?{FROM} and {N} events?{FROM}, {DUPLICATES}, "
    rf"kept aside {N} rejected lines?(?: and {N} rejected pieces? of (?:a )?lines?)?"
    rf"(?: \(see `tierscope rejects`\))?, {N} lines? had no metric"
)


def line_figures(closing: re.Match[str]) -> tuple[int, list[int]]:
    """The lines read and the five line figures of a closing line (a record figure stands for its
    lines where no "from N lines" follows it: each record its own line)."""
    read, steps, step_lines, events, event_lines, dups, *dup_lines_said, rejected, _pieces, skipped = (
        None if g is None else int(g.replace(",", "")) for g in closing.groups()
    )
    dup_lines = next((x for x in dup_lines_said if x is not None), None)  # one per wording of the duplicates
    assert read is not None and rejected is not None and skipped is not None
    pairs = ((steps, step_lines), (events, event_lines), (dups, dup_lines))
    return read, [lines if lines is not None else rows for rows, lines in pairs] + [rejected, skipped]  # type: ignore[misc]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(st.lists(an_input, min_size=INPUTS_PER_COLLECT, max_size=INPUTS_PER_COLLECT))
def test_collect_files_on_generated_inputs_never_raises_and_the_counts_add_up(inputs: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = FIRST + b"".join(inputs)
        log = Path(tmp) / "fuzz.log"
        log.write_bytes(data)
        args = ["collect", "files", str(log), "-d", str(Path(tmp) / "ds"), "--settle", "0", "--tier", "BASIC"]
        result = runner.invoke(app, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        assert "Traceback" not in result.output
        assert result.exit_code == 0, result.output
        closing = CLOSING.search(result.output.replace("\n", " "))
        assert closing, result.output
        lines, figures = line_figures(closing)
        # One line per newline written (each input ends in one); CRs alone are not line ends.
        assert lines == data.count(b"\n")
        assert sum(figures) == lines, (figures, closing.group(0))
