"""The polars-free read of a small 2016-format append (:mod:`tierscope.collector.small_append`) against the
format chain: wherever it accepts an append, the same records, skipped lines and carried status.

Appends are drawn from real 2016 step lines (the bundled 2016 logs, the ingest benchmark's generator),
checkpoint lines, and mutations of them (malformed numbers, over-long lines, duplicates, status words in a
checkpoint path, tracebacks, Eval blocks, other variants, blank lines); the chain reads each as a collect
reads an append (one final batch of a file read before, its format sniffed).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchmarks.generate import write_cloudml_log
from tierscope.collector import small_append
from tierscope.collector.formats import SNIFF_LINES, ParseContext, parse_lines, sniff_format
from tierscope.collector.formats.status import carried_work, resume_work
from tierscope.collector.small_append import carry_after, parse_append
from tierscope.dataset.schema import ROLES

_BUNDLED = Path(__file__).parents[2] / "src" / "tierscope" / "data" / "cloudml-tiers-2016"
_CASES = Path("/work/shared/cases")


def _chain(
    lines: list[str], first_line: int, carried: dict | None = None
) -> tuple[pl.DataFrame, int, object, int, int, list[str]]:
    """What a collect's polars path makes of ``lines`` as one final batch read on from a position that carried
    ``carried``: records, skipped lines, the carried status, events, rejects, notes."""
    frame = pl.DataFrame(
        {"source_offset": list(range(first_line, first_line + len(lines))), "line": lines},
        schema={"source_offset": pl.Int64, "line": pl.String},
    )
    context = ParseContext()
    resume_work(context, carried)
    fmt = sniff_format(frame.get_column("line"), ())
    parsed = parse_lines(frame, context=context, first=fmt, final=True)
    assert parsed.pending is None
    return (
        parsed.steps,
        parsed.skipped,
        carried_work(context),
        parsed.events.height,
        parsed.rejects.height,
        parsed.notes,
    )


#: Statuses a position may carry into an append: none, a record's, a run's that stopped on purpose.
_CARRIED = [None, {"short": False, "why": False, "steps": True, "step": 900}, {"steps": True},
            {"short": True, "why": False, "steps": True, "step": 5}, {"short": False, "why": True}]  # fmt: skip


def _assert_same(lines: list[str], first_line: int = 1, carried: dict | None = None) -> bool:
    """Whether the small path accepts ``lines`` (read on from a position carrying ``carried``); if it does,
    that the chain agrees on every value and on the status carried on."""
    fast = parse_append(lines, first_line)
    if fast is None:
        return False
    steps, skipped, carry, events, rejects, notes = _chain(lines, first_line, carried)
    assert (events, rejects, notes) == (0, 0, [])
    mine = carry_after(carried, fast)
    if fast.records and mine is not None:
        assert mine == carry
        assert list(mine) == list(carry)  # type: ignore[call-overload]  # the saved document's key order too
    elif fast.records:
        assert carried and (carried.get("short") or carried.get("why"))  # declined: a status the append may change
    assert fast.skipped == skipped
    if not steps.height:  # nothing to store: an empty frame's columns are whatever the chain left
        assert fast.records == 0
        return True
    assert tuple(steps.columns) == small_append.STEP_COLUMNS
    chain_rows = steps.rows()
    fast_rows = list(zip(*(fast.columns[c] for c in small_append.STEP_COLUMNS), strict=True))
    assert len(fast_rows) == len(chain_rows)
    for mine, theirs in zip(fast_rows, chain_rows, strict=True):
        # floats compared by their bits: the same cast of the same text
        assert [math.copysign(1, v) if isinstance(v, float) and v == 0 else v for v in mine] == [
            math.copysign(1, v) if isinstance(v, float) and v == 0 else v for v in theirs
        ]
        assert [type(v) for v in mine] == [type(v) for v in theirs]
    return True


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """20,000 lines of the ingest benchmark's 2016 log (step lines, checkpoint lines, one cut-off line)."""
    path = tmp_path_factory.mktemp("gen") / "train.log"
    write_cloudml_log(path, 20_000)
    return path.read_text().splitlines()


def _real_step_lines() -> list[str]:
    """2016 step lines of the bundled logs (their ``INFO:root:`` prefix cut off where present), and of a
    2016-format case of /work/shared/cases when there is one."""
    found = []
    for log in sorted(_BUNDLED.glob("*.log")):
        for line in log.read_text().splitlines():
            at = line.find("Train [")
            if at >= 0 and "global_steps/s" in line:
                found.append(line[at:])
    if _CASES.is_dir():
        for case in sorted(_CASES.glob("*.txt")):
            found += [line for line in case.read_text(errors="replace").splitlines() if "global_steps/s," in line]
    return found


def test_roles_agree_with_the_schema() -> None:
    assert frozenset(ROLES) == small_append.ROLES
    assert small_append.SNIFF_LINES == SNIFF_LINES


def test_a_step_line_after_a_run_of_checkpoint_lines_is_sniffed_as_the_full_collect_sniffs_it(
    generated: list[str],
) -> None:
    step = next(line for line in generated if line.startswith("Train ["))
    for checkpoints in (1, 50, SNIFF_LINES - 1, SNIFF_LINES, 300):
        lines = [f"INFO:root:Saving checkpoint to gs://bucket/job/model.ckpt-{i}" for i in range(checkpoints)] + [step]
        # the step line among the first SNIFF_LINES lines: accepted, and the chain sniffs cloudml; else declined
        assert _assert_same(lines, 1) == (checkpoints < SNIFF_LINES)


def test_the_benchmarks_append_reads_as_the_chain_reads_it(generated: list[str]) -> None:
    # the last 10,000 lines, as benchmarks/incremental.py appends them: 10,000 // 97 = 103 checkpoint lines
    # fall among lines 10,001-20,000 (every 97th line), the rest are step records
    tail = generated[-10_000:]
    assert _assert_same(tail, 10_001)
    fast = parse_append(tail, 10_001)
    assert fast is not None
    assert (fast.records, fast.skipped) == (9_897, 103)


def test_the_bundled_2016_lines_read_as_the_chain_reads_them() -> None:
    lines = _real_step_lines()
    assert lines
    # one line at a time (their steps need not rise across files)
    accepted = sum(_assert_same([line], 7) for line in lines)
    assert accepted >= len(lines) // 2


_SEP_WORDS = ["killed", "oom", "done", "reached", "nan", "a", "b", "ckpt", "run-1", "x.y", "stopping", "0"]


_BAD_NUMBERS = ["1e3", "-1", "nan", "inf", "1.", ".5", "1_0", "0x1", "2.5.1", "+3", "\u0661", "9" * 20]


def _mutate(line: str, how: int, draw: st.DrawFn) -> list[str]:
    if how == 0:  # a malformed number
        numbers = [
            tok for tok in line.replace(",", " ").replace(":", " ").replace("(", " ").split() if tok[:1].isdigit()
        ]
        if numbers:
            bad = draw(
                st.sampled_from(["1e3", "-1", "nan", "inf", "1.", ".5", "1_0", "0x1", "2.5.1", "+3", "١", "9" * 20])
            )
            return [line.replace(numbers[draw(st.integers(0, len(numbers) - 1))], bad, 1)]
        return [line]
    if how == 1:  # over-long
        return [line + " " + "x" * draw(st.sampled_from([400, 600, 2000]))]
    if how == 2:  # a checkpoint line with a drawn path
        words = draw(st.lists(st.sampled_from(_SEP_WORDS), min_size=1, max_size=4))
        return [f"INFO:root:Saving checkpoint to gs://{'/'.join(words)}/model.ckpt-{draw(st.integers(0, 10**6))}"]
    if how == 3:  # a traceback
        return ["Traceback (most recent call last):", '  File "task.py", line 3, in <module>', "ValueError: bad"]
    if how == 4:  # an Eval block
        return ["Eval, step 100:", "- on train set 0.41, 0.88", "-- on eval set 0.52, 0.85"]
    if how == 5:  # another variant, or a prefix
        return [draw(st.sampled_from(["INFO:root:", "[worker-2] ", "I1201 10:00:00.000000 1 task.py:1] "])) + line]
    if how == 6:
        return [""]
    if how == 7:  # cut off
        return [line[: draw(st.integers(0, max(0, len(line) - 1)))]]
    if how == 8:  # upper-case role, an unknown role, accuracy above 1
        return [draw(st.sampled_from([line.replace("[worker", "[Worker"), line.replace("[master", "[boss"),
                                      line.replace("accuracy:0.", "accuracy:1.")]))]  # fmt: skip
    return [line]


@st.composite
def _appends(draw: st.DrawFn, pool: list[str]) -> tuple[list[str], int]:
    start = draw(st.integers(0, len(pool) - 400))
    length = draw(st.integers(1, 300))
    lines = list(pool[start : start + length])
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(lines)))
        kind = draw(st.integers(0, 10))
        if kind == 9:  # a duplicate of a line stored before the append, or of one in it
            lines.insert(at, pool[draw(st.integers(0, start + len(lines) - 1))])
        elif kind == 10:
            lines.insert(at, draw(st.sampled_from(_real_step_lines())))
        else:
            source = lines[min(at, len(lines) - 1)]
            lines[at:at] = _mutate(source, kind, draw)
    return lines, start + 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_an_accepted_append_reads_as_the_chain_reads_it(generated: list[str], data: st.DataObject) -> None:
    lines, first = data.draw(_appends(generated))
    event("accepted" if _assert_same(lines, first, data.draw(st.sampled_from(_CARRIED))) else "declined")


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.text("abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12), min_size=1, max_size=4),
    step=st.integers(0, 10**12),
)
def test_a_checkpoint_line_skipped_is_skipped_by_the_chain(words: list[str], step: int) -> None:
    line = f"INFO:root:Saving checkpoint to gs://{'/'.join(words)}/model.ckpt-{step}"
    _assert_same([line], 1)


@settings(max_examples=100, deadline=None)
@given(
    numbers=st.lists(st.from_regex(r"\A[0-9]{1,15}(\.[0-9]{1,15})?\Z", fullmatch=True), min_size=5, max_size=5),
    role=st.sampled_from(sorted(ROLES)),
    task=st.integers(0, 10**9 - 1),
    step=st.integers(0, 10**15 - 1),
)
def test_any_number_casts_as_polars_casts_it(numbers: list[str], role: str, task: int, step: int) -> None:
    loss, acc, secs, g, local = numbers
    acc = acc if float(acc) <= 1 else "0." + acc.replace(".", "")[:15]
    line = (
        f"Train [{role}/{task}], step {step}:loss:{loss}, accuracy:{acc} ({secs} sec) "
        f"{g} global_steps/s, {local} local_steps/s"
    )
    assert _assert_same([line], 3)


def test_the_small_path_imports_no_polars() -> None:
    code = (
        "import sys; from tierscope.collector.small_append import carry_after, parse_append; "
        "parse_append(['Train [master/0], step 100:loss:2.3, accuracy:0.1 (6.2 sec) 16.0 global_steps/s, "
        "16.0 local_steps/s', 'INFO:root:Saving checkpoint to gs://b/model.ckpt-100'], 1); "
        "print('polars' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_the_status_patterns_are_the_status_modules_own() -> None:
    # every status line, milestone and stop-on-purpose pattern of the status module is in the small path's check (read
    # from its source, so one added there counts here): a checkpoint path that says ``max_steps/reached`` matches the
    # stop-on-purpose pattern ``max_steps ... reached`` and takes the polars path; a plain one is skipped
    from tierscope.collector.formats import status

    whole = small_append.status_pattern().pattern
    for pattern in [m.pattern for m in status.MARKERS] + [p for _, p in status.MILESTONES]:
        assert pattern.replace("(?i)", "").replace("(?P<", "(?:<").split("(?:<")[0] in whole
    line = "INFO:root:Saving checkpoint to gs://b/{}/model.ckpt-100"
    assert parse_append([line.format("max_steps/reached")], 1) is None
    assert parse_append([line.format("bucket/job")], 1) == small_append.SmallParse(
        columns={**{c: [] for c in small_append.STEP_COLUMNS}, "format": []}, skipped=1
    )


def test_the_step_file_is_the_stores_byte_for_byte(generated: list[str], tmp_path: Path) -> None:
    from tierscope.dataset.arrow_steps import STEP_FILE_COLUMNS, step_table, write_step_file
    from tierscope.dataset.schema import STEP_SCHEMA, conform
    from tierscope.dataset.store import write_temp

    tail = generated[-10_000:]
    fast = parse_append(tail, 10_001)
    assert fast is not None
    constants = {"tier": "STANDARD_1", "source": "/logs/train.log"}
    steps, *_ = _chain(tail, 10_001)
    frame = steps.with_columns(run_id=pl.lit("job-1"), **{k: pl.lit(v) for k, v in constants.items()})
    frame = conform(frame, STEP_SCHEMA).drop("run_id")  # what Dataset.append writes
    assert [(f.name, str(f.type)) for f in frame.to_arrow().schema] == list(STEP_FILE_COLUMNS)
    tmp, _ = write_temp(frame, tmp_path / "polars" / "part-x.parquet")
    mine = tmp_path / "mine.parquet"
    write_step_file(step_table(fast.columns, constants), mine)
    assert mine.read_bytes() == tmp.read_bytes()
