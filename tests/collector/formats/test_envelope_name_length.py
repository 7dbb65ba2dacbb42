"""The learnt name column (pdsh's ``host: ``, a process manager's ``name | ``) is at most 63 characters long:
read with an unbounded pattern and a length check, it finds exactly the names the bounded pattern
``^([A-Za-z0-9][\\w.@/-]{0,62})(?::| +\\|) `` finds."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.formats_support import frame
from tierscope.collector.formats.envelopes import learn_names

#: The pattern as it was written bounded: the reference the learnt names are checked against.
_BOUNDED = r"^([A-Za-z0-9][\w.@/-]{0,62})(?::| +\|) "


def _names_by_bounded_pattern(lines: list[str]) -> tuple[pl.Series, pl.Series]:
    from tierscope.collector.formats.envelopes import _GATE, _NAME_COLUMN, _NAME_MAX_CHARS

    line = pl.col("line")
    bounded = frame(lines).select(pl.when(~line.str.contains(_GATE)).then(line.str.extract(_BOUNDED, 1)))
    name = line.str.extract(_NAME_COLUMN, 1)
    ours = frame(lines).select(
        pl.when(~line.str.contains(_GATE) & (name.str.len_chars() <= _NAME_MAX_CHARS)).then(name)
    )
    return bounded.to_series(), ours.to_series()


# Characters around the bound: name characters (ASCII, Unicode word characters), the separators and others.
_CHARS = st.sampled_from(list("aZ09_.@/-:| é中٣\t,"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 70), _CHARS, st.text(_CHARS, max_size=6)), min_size=1, max_size=8))
def test_unbounded_pattern_and_length_check_find_the_bounded_names(parts: list[tuple[int, str, str]]) -> None:
    # A line: a run of n name characters (long runs near the 63-character bound), one more character, a tail.
    lines = [f"h{'é' * (n // 2)}{'1' * (n - n // 2)}{after}{tail} step 3" for n, after, tail in parts]
    bounded, ours = _names_by_bounded_pattern(lines)
    assert bounded.to_list() == ours.to_list()


def test_a_name_of_63_characters_is_learnt_and_one_of_64_is_not() -> None:
    # 63 = "n" + 61 "x" + "1"; each name opens 200 lines, as pdsh's host column does.
    at_bound, past = "n" + "x" * 61 + "1", "n" + "x" * 62 + "1"
    assert learn_names(frame([f"{at_bound}: step {i} loss 0.5" for i in range(200)])) == (at_bound,)
    assert learn_names(frame([f"{past}: step {i} loss 0.5" for i in range(200)])) == ()
