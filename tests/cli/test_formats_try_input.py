"""``tierscope formats --try`` takes what ``collect`` takes: a log piped on standard input (``-``: a user pipes
``kubectl logs`` into it), and a line over 1 MiB is the reject collect makes of it, with the same reason."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from tierscope.cli import app
from tierscope.collector.explain import explain_file
from tierscope.collector.sources.files import MAX_LINE_BYTES
from tierscope.dataset.store import Dataset

runner = CliRunner()

# The 2016 BASIC tier's first two lines (src/tierscope/data/cloudml-tiers-2016/basic.log, as its author logged
# them): step 100 at 4.644 global steps/s, step 200 at 4.734.
BASIC = (
    "Train [master/0], step 100:loss:2.314, accuracy:0.183 (21.535 sec) 4.644 global_steps/s, 4.644 local_steps/s\n"
    "Train [master/0], step 200:loss:2.129, accuracy:0.230 (42.658 sec) 4.734 global_steps/s, 4.734 local_steps/s\n"
)


def _verdict(output: str, name: str) -> str:
    """The verdict line of ``name`` in ``output``, its wrapped lines joined."""
    joined = " ".join(output.split())
    at = joined.index(f"{name}: format ")
    return joined[at : joined.index(" lines", at) + len(" lines")]


def test_a_dash_reads_the_log_from_standard_input() -> None:
    result = runner.invoke(app, ["formats", "--try", "-"], input=BASIC)
    assert result.exit_code == 0, result.output
    # the verdict names standard input, not the private file it was spooled to; two lines, each one record
    assert _verdict(result.output, "stdin") == (
        "stdin: format cloudml, 2 records, 0 events, roles master/0, status unknown; 0 rejected, 0 with no metric, "
        "of 2 lines"
    )
    assert "tierscope-try-" not in result.output


def test_standard_input_reads_as_the_same_file_would(tmp_path: Path) -> None:
    # near-miss: the same lines as a file give the same verdict but for its name
    log = tmp_path / "b.log"
    log.write_text(BASIC)
    piped = runner.invoke(app, ["formats", "--try", "-"], input=BASIC).output
    filed = runner.invoke(app, ["formats", "--try", str(log)]).output
    assert _verdict(piped, "stdin").removeprefix("stdin") == _verdict(filed, "b.log").removeprefix("b.log")


def test_try_without_a_file_names_the_dash() -> None:
    result = runner.invoke(app, ["formats", "--try"])
    assert result.exit_code == 2
    assert "or - for standard input" in " ".join(result.output.split())


def test_a_line_over_1_mib_is_the_reject_collect_makes(tmp_path: Path) -> None:
    # a record line, a line of 1,048,576 + 10 bytes of "x", a record line
    path = tmp_path / "long.log"
    path.write_bytes(
        BASIC.splitlines(keepends=True)[0].encode() + b"x" * (MAX_LINE_BYTES + 10) + b"\n" + BASIC.encode()
    )
    shown = explain_file(path)
    line2 = next(r for r in shown.readings if r.line == 2)
    assert line2.outcome == "reject"
    assert line2.why is not None and line2.why.startswith(
        "line of 1,048,586 bytes is longer than the limit of 1,048,576 bytes (1 MiB)"
    )
    # lines 1, 3 and 4 are records (steps 100, 100 again, 200): 2 distinct records and 1 duplicate, 1 reject
    assert (shown.verdict.records, shown.verdict.duplicates, shown.verdict.rejects) == (2, 1, 1)
    # collect stores the same reject with the same reason
    result = runner.invoke(app, ["collect", "files", str(path), "-d", str(tmp_path / "ds"), "--settle", "0", "-q"])
    assert result.exit_code == 0, result.output
    rejects = Dataset(tmp_path / "ds").read("rejects")
    assert rejects["source_offset"].to_list() == [2]
    assert rejects["reason"][0] == line2.why


def test_a_path_that_is_no_log_says_what_it_is_as_collect_does(tmp_path: Path) -> None:
    # formats --try said "no such file or directory" of each: a link to itself, a pipe and a device exist (or
    # name a link), and the user is sent looking for a file that is there
    loop, fifo = tmp_path / "loop.log", tmp_path / "pipe.log"
    loop.symlink_to(loop)
    os.mkfifo(fifo)
    for path, why in (
        (loop, "a symbolic link loop (the link leads back to itself); fix the link"),
        (fifo, "not a regular file; give one log file"),
        (Path("/dev/null"), "not a regular file; give one log file"),
        (tmp_path / "absent.log", "no such file or directory; check the path"),
        (tmp_path, "a directory; give one log file"),
    ):
        result = runner.invoke(app, ["formats", "--try", str(path)])
        assert result.exit_code == 1
        assert " ".join(result.output.split()) == f"error: cannot read {path}: {why}"
