"""The cloudml parser's fast path (split on the 2016 variant's separators) must give exactly
what the full pattern gives, line for line: same records, same rejects, same reasons."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tierscope.collector.formats import parse_lines
from tierscope.collector.formats.base import ParseContext
from tierscope.collector.formats.cloudml import _MARK, CloudMLSamples, _split_canonical
from tierscope.collector.formats.examples import _BATCH_GATE
from tierscope.collector.formats.status import STOPPED_ON_PURPOSE, WORK

CANONICAL = (
    "Train [worker/3], step 200:loss:2.319, accuracy:0.290 (3.093 sec) 64.662 global_steps/s, 3.556 local_steps/s"
)


def frame(texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame(
        {"source_offset": list(range(1, len(texts) + 1)), "line": texts},
        schema={"source_offset": pl.Int64, "line": pl.String},
    )


def both_paths(texts: list[str]) -> tuple[tuple[list, list], tuple[list, list]]:
    """(records, rejects) from ``parse`` (fast path first) and from the full pattern on every line."""
    fmt = CloudMLSamples()
    lines = frame(texts)
    marked = lines.filter(pl.col("line").str.contains(_MARK, literal=True))
    got, full = fmt.parse(lines, ParseContext()), fmt._parse_full(marked)

    def rows(df: pl.DataFrame) -> list:
        # as text: a nan loss is kept, and nan != nan would fail equal rows
        return sorted(map(repr, df.rows())) if df.height else []

    return (rows(got.steps), rows(got.rejects)), (rows(full.steps), rows(full.rejects))


def test_the_2016_line_takes_the_fast_path_and_its_variants_do_not() -> None:
    texts = [
        CANONICAL,
        "INFO:root:" + CANONICAL,  # a prefix: still the fast path
        "Train [worker/3], step 200: loss: 2.319, accuracy: 0.290 (3.093 sec) 64.662 global steps/s, "
        "3.556 local steps/s",
        "Train [master/0], step 118 (4.041 sec) 29.6 global steps/s, 29.6 local steps/s",
        # an upper-case role: the fast path takes roles as written (no lower-casing pass over
        # every line), so it leaves this one to the full pattern, which lower-cases it
        "Train [Master/0], step 1:loss:2.3, accuracy:0.1 (1.0 sec) 1.0 global_steps/s, 1.0 local_steps/s",
        CANONICAL + " ",  # trailing space: the pattern allows it, the fast path leaves it to the pattern
    ]
    fast = _split_canonical(frame(texts).with_columns(_at=pl.col("line").str.find(_MARK, literal=True)))
    assert fast["_ok"].to_list() == [True, True, False, False, False, False]
    # ...and all six are read, the same way as by the full pattern: six records, no rejects.
    (steps, rejects), expected = both_paths(texts)
    assert (steps, rejects) == expected
    assert len(steps) == 6 and rejects == []
    # worker/3, step 200, loss 2.319, accuracy 0.29, 3.093 s, 64.662 and 3.556 steps/s, as written
    assert steps[0] == "(1, 'worker', 3, 200, 2.319, 0.29, 3.093, 64.662, 3.556, 'cloudml')"


# Pieces a line is cut into, and strings each piece may be replaced with: separators dropped
# or doubled, signs, exponents, non-numbers, other roles, tabs, cut-off ends.
PIECES = ["Train [", "worker", "/", "3", "], ", "step ", "200", ":loss:", "2.319", ", accuracy:", "0.290",
          " (", "3.093", " sec) ", "64.662", " global_steps/s, ", "3.556", " local_steps/s"]  # fmt: skip
SWAPS = st.sampled_from(["", " ", "  ", "\t", "-1", "+5", "1e2", "nan", "inf", "-0", "1.5", "x", ":", ",", "(",
                         ")", "]", "/", "master", "MASTER", "ps", "janitor", "Train [", "07", "2.", ".5",
                         "1,5",
                         # numbers no record holds (2**63, 2**31, infinities) and their neighbours
                         "9223372036854775807", "9223372036854775808", "2147483647", "2147483648", "-inf",
                         "+inf", "Infinity", "-Infinity", "1e308", "1e309", "-1e309", "NaN", "+nan", "٣"])  # fmt: skip


@st.composite
def mutated_lines(draw: st.DrawFn) -> str:
    pieces = list(PIECES)
    for _ in range(draw(st.integers(0, 3))):
        pieces[draw(st.integers(0, len(pieces) - 1))] = draw(SWAPS)
    line = "".join(pieces)
    return line[: draw(st.integers(0, len(line)))] if draw(st.booleans()) and draw(st.booleans()) else line


@settings(max_examples=300, deadline=None)
@given(st.lists(mutated_lines(), min_size=1, max_size=20))
def test_fast_path_and_full_pattern_agree_on_every_line(texts: list[str]) -> None:
    got, expected = both_paths(texts)
    assert got == expected


def test_of_two_lines_with_one_key_the_first_is_stored_whichever_path_reads_it(tmp_path) -> None:
    """Line 1 needs the full pattern (two spaces before its elapsed time), line 2 is the fast path's
    2016 variant; both are worker 0 at step 100 after 3.996 s (one key), with losses 2.5 and 2.3.
    The store keeps the first row of a key: line 1 (loss 2.5), as when a batch ends between
    them; line 2, whose loss differs, is no copy of it but a conflict kept aside. Before, the fast
    path's rows came first in a batch, so one batch stored line 2's 2.3."""
    from tierscope.collector.collect import collect_runs
    from tierscope.collector.manifest import RunSpec
    from tierscope.dataset.store import Dataset

    tail = "22.107 global_steps/s, 5.390 local_steps/s"
    log = tmp_path / "w.log"
    log.write_text(
        f"Train [worker/0], step 100:loss:2.5, accuracy:0.044  (3.996 sec) {tail}\n"
        f"Train [worker/0], step 100:loss:2.3, accuracy:0.044 (3.996 sec) {tail}\n"
    )
    for batch_bytes in (1 << 20, 100):  # one batch; a batch a line
        ds = Dataset(tmp_path / f"ds{batch_bytes}")
        run = RunSpec(run_id="r", tier="BASIC", files=[log])
        [counts] = collect_runs(ds, [run], batch_bytes=batch_bytes, settle_s=0).sources
        assert (counts.steps, counts.duplicates, counts.conflicts) == (1, 0, 1)
        assert Dataset(ds.root).read("steps").select("source_offset", "loss").rows() == [(1, 2.5)]
        assert Dataset(ds.root).read("rejects").get_column("source_offset").to_list() == [2]


# What a batch is searched for after the chain: why a run stopped, and a batch size or device count.
SEARCHES = (STOPPED_ON_PURPOSE, _BATCH_GATE)
# ...with those statements' own words among the swaps: in a value's or a fixed word's place
SAID_SWAPS = st.one_of(SWAPS, st.sampled_from(["reached", "max_steps", "batch_size", "-np", "GPU(s)", "early"]))


@st.composite
def said_lines(draw: st.DrawFn) -> str:
    pieces = list(PIECES)
    for _ in range(draw(st.integers(0, 2))):
        pieces[draw(st.integers(0, len(pieces) - 1))] = draw(SAID_SWAPS)
    prefix = draw(st.sampled_from(["", "INFO:root:", "batch_size=32", "max_steps=reached;"]))
    return prefix + "".join(pieces)


def plain_and_found(texts: list[str]) -> list[tuple[bool, bool]]:
    """(read on the fast path with nothing before ``Train [``, found by any search) of each line."""
    plain = _split_canonical(frame(texts)).get_column("_plain").to_list()
    line = pl.col("line")
    found = frame(texts).select(pl.any_horizontal(*(line.str.contains(s) for s in SEARCHES))).to_series().to_list()
    return list(zip(plain, found, strict=True))


def test_a_plain_2016_line_holds_nothing_a_batch_is_searched_for() -> None:
    texts = [
        CANONICAL,
        CANONICAL.replace("2.319", "NaN").replace("64.662", "1e2"),  # a diverged loss, an exponent: still plain
        "batch_size=32" + CANONICAL,  # a prefix: read on the fast path, yet searched (it states a batch size)
        "max_steps=reached;" + CANONICAL,  # ...and one that says why the run stopped
        "INFO:root:" + CANONICAL,  # searched too, though it says neither
    ]
    assert plain_and_found(texts) == [(True, False), (True, False), (False, True), (False, True), (False, False)]


@settings(max_examples=300, deadline=None)
@given(st.lists(said_lines(), min_size=1, max_size=20))
def test_no_plain_line_is_found_by_a_search(texts: list[str]) -> None:
    """A plain line is ``Train [`` + a role + fixed words + numbers that cast: none of the searches' words."""
    assert not any(plain and found for plain, found in plain_and_found(texts))


def test_the_batch_is_searched_as_when_every_line_is() -> None:
    """``said`` (the lines of the first format's reading less the plain ones) leaves the searches' findings as
    a reading with no first format, where every line is searched: the batch size of line 2 (``batch_size=32``,
    per device) and the reason of line 3 (``max_steps=reached``); plain lines between them."""
    texts = [CANONICAL, "batch_size=32" + CANONICAL, "max_steps=reached;" + CANONICAL, CANONICAL]
    found = {}
    for first in ("cloudml", None):
        context = ParseContext(year=2016)
        got = parse_lines(frame(texts), first=first, context=context)
        found[first] = (got.steps.height, context.state.get("grammar-batch"), context.state.get(WORK))
        # with the cloudml reading first, lines 2 and 3 alone are searched
        assert first is None or got.said.get_column("source_offset").to_list() == [2, 3]
    assert found["cloudml"] == found[None] == (4, {"device_batch": 32}, {"short": False, "why": True})
