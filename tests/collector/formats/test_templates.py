"""A line's template and its slots, the one definition the learned layout and the stanzas share: a sign, thousands, a
clock and digits glued to a word, each as real logs print them. Lines are written for the test in those shapes."""

from __future__ import annotations

import polars as pl
import pytest

from tests.collector.formats.test_learned_layout import TIMED, clocked, frame, read
from tierscope.collector.formats import ParseContext, parse_lines
from tierscope.collector.formats.layout import TEMPLATE_VERSION, Layout
from tierscope.collector.formats.templates import numbers, numbers_in, template, value


@pytest.mark.parametrize(
    ("line", "key", "slots"),
    [
        # a sign with nothing glued before it is the number's (a loss printed negative, ``lr=-1``); a dash between two
        # numbers parts them (a range, a date): 1-3 is two slots, never 1 and -3
        ("loss -0.5 lr=-1", "loss # lr=#", ["-0.5", "-1"]),
        ("step 1-3 on 2024-05-01", "step #-# on #-#-#", ["1", "3", "2024", "05", "01"]),
        # thousands grouped by commas (groups of three) are one number; other commas part numbers
        ("tokens 1,000,000 [1,2] 0.5,0.3", "tokens # [#,#] #,#", ["1,000,000", "1", "2", "0.5", "0.3"]),
        # a clock is one slot: hours:minutes:seconds, minutes:seconds, with a fraction
        ("Elapsed [8:37:01.05] eta 00:12", "Elapsed [#] eta #", ["8:37:01.05", "00:12"]),
        # digits glued after a word's letters and a hexadecimal number are the word's; digits before a unit a number
        ("node a100 w1075 resnet50 0x1F 100ms 1.36s 3e5", "node aD wD resnetD D #ms #s #", ["100", "1.36", "3e5"]),
        # nan and inf stand where a number does; a rule is three characters long; a '#' of the line is no slot
        ("loss nan ----- iter #5", "loss # --- iter \N{NUMERO SIGN}#", ["nan", "5"]),
    ],
)
def test_a_lines_template_and_slots(line: str, key: str, slots: list[str]) -> None:
    got = pl.DataFrame({"l": [line]}).select(t=template(pl.col("l")), n=numbers(pl.col("l"))).row(0)
    assert got == (key, slots)
    assert numbers_in(line) == slots  # the stanzas' reading without a frame is the same
    assert key.count("#") == len(slots)


def test_a_slots_value() -> None:
    # 1,000 = 1000; 12:34:56 = 12 x 3600 + 34 x 60 + 56 = 45296 s; 0:05 = 5 s; 8:37:01.05 = 31021.05 s; -0.5 as printed
    raw = ["1,000", "12:34:56", "0:05", "8:37:01.05", "-0.5", "3e5"]
    got = pl.select(value(pl.Series(raw, dtype=pl.String))).to_series().to_list()
    assert got == pytest.approx([1000.0, 45296.0, 5.0, 31021.05, -0.5, 3e5])


def test_a_position_grouped_by_thousands_is_read_as_one_number() -> None:
    # "it 1,000" .. "it 5,000", 500 s apart with "0.500" a step: 1000 steps in 500 s = 2 steps/s = 1 / 0.5
    lines = clocked(
        [f"ep 0 | it {1000 * (i + 1):,} | 0.500 | loss {2.3 - i / 10:.1f}" for i in range(5)],
        [500 * i for i in range(5)],
    )
    steps = read(lines)
    assert steps.get_column("step").to_list() == [1000, 2000, 3000, 4000, 5000]
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([2.0] * 5)


def test_a_position_printed_negative_is_a_reject() -> None:
    # the template TIMED teaches ("ep # | it # | # | loss #"): a sixth line with "it -1" matches it, its sign the
    # slot's, and a global step is never negative: a reject naming the slot, not step 1
    lines = [*TIMED, "[2024-05-01 10:04:10] ep 0 | it -1 | 0.500 | loss 1.81"]
    parsed = parse_lines(frame(lines), context=ParseContext(year=2024))
    assert parsed.steps.get_column("step").to_list() == [100, 200, 300, 400, 500]
    assert parsed.rejects.get_column("reason").to_list() == ["learned layout: position slot 2 '-1' is no whole number"]


def test_a_layout_saved_with_the_old_templates_is_taught_again() -> None:
    # a layout saved before the templates were one (no "template" version) may number its slots otherwise (a clock
    # was three): it is dropped, never read with the wrong slots
    doc = {"key": "it #", "repeats": 4, "slots": [[0, "position", "grows", 1.0]], "named": "X it/s", "laps": {}}
    with pytest.raises(ValueError, match="another template"):
        Layout.from_json(doc)
    assert Layout.from_json({**doc, "template": TEMPLATE_VERSION}).key == "it #"
