"""``formats --try`` on a tf_cnn_benchmarks log (case07's shape): what the ``global step N`` line and
the process id became must be visible, since they decide the record's step and its segment."""

from __future__ import annotations

from pathlib import Path

from tierscope.collector.explain import explain_file

# Two runs back to back (pids 35 and 31), as in ../shared/cases/inputs/case07.log.
CASE07 = (
    "2017-12-07 19:24:42,741 INFO 35 global step 94840\n"
    "2017-12-07 19:24:44,858 INFO 35 step 94840\tbatch 128\ttrain_time 0.197075128555\t"
    "images/sec: 546.0 +/- 0.3 (jitter = 66.0)\t3.512\t0.422\t0.648\n"
    "2017-12-07 19:34:21,283 INFO 31 global step 381280\n"
    "2017-12-07 19:34:21,942 INFO 31 47650\timages/sec: 198.1 +/- 0.1 (jitter = 18.9)\t2.359\t0.617\t0.781\n"
)


def test_the_record_shows_its_process_id(tmp_path: Path) -> None:
    log = tmp_path / "case07.log"
    log.write_text(CASE07, encoding="utf-8")
    by_line = {r.line: r for r in explain_file(log).readings}
    # The number after INFO is the pid: 35 for run A (line 2), 31 for run B (line 4); a change of it
    # is a new segment, so --try must show it.
    assert by_line[2].records[0]["pid"] == 35
    assert by_line[4].records[0]["pid"] == 31


def test_a_joined_global_step_line_is_folded_not_unrecognised(tmp_path: Path) -> None:
    log = tmp_path / "case07.log"
    log.write_text(CASE07, encoding="utf-8")
    shown = explain_file(log)
    by_line = {r.line: r for r in shown.readings}
    # Line 3's "global step 381280" is line 4's step (its local step is 47650): it was read,
    # with its neighbour, so it is not "no format recognises it".
    assert by_line[4].records[0]["step"] == 381280
    assert [by_line[n].why for n in (1, 3)] == ["read with a neighbouring line (folded into its record)"] * 2
    # The counts stay: 2 records, 2 lines without a record of their own.
    assert (shown.verdict.records, shown.verdict.skipped) == (2, 2)


def test_a_global_step_line_of_another_process_stays_unread(tmp_path: Path) -> None:
    log = tmp_path / "mixed.log"
    # pid 35's global step line before pid 31's throughput line: not its step, not folded.
    log.write_text(CASE07.splitlines(keepends=True)[0] + CASE07.splitlines(keepends=True)[3], encoding="utf-8")
    by_line = {r.line: r for r in explain_file(log).readings}
    # the grammar says why it is no record first (a position with no measure), then what it found
    assert by_line[1].why == "no measure: not a record; the grammar found: position 'global step N' = 94840"
    assert "step" not in by_line[2].records[0]
