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


@pytest.mark.parametrize(
    ("line", "key", "slots"),
    [
        # a key's value that is none (JSON's null, Python's None) is a slot with no number, so a trainer's JSON line
        # with no loss to report keeps the template of its lines with one
        ('{"loss": null, "epoch": 1.0}', '{"loss": #, "epoch": #}', ["\N{EMPTY SET}", "1.0"]),
        ("{'loss': None, 'step': 3}", "{'loss': #, 'step': #}", ["\N{EMPTY SET}", "3"]),
        ("lr=None step=3", "lr=# step=#", ["\N{EMPTY SET}", "3"]),
        # ... but a None or a null in a sentence is a word (no key's ':' or '=' before it), and so is one glued on
        ("None of 3 ranks, null device", "None of # ranks, null device", ["3"]),
        ('{"mode": nullable, "n": 2}', '{"mode": nullable, "n": #}', ["2"]),
    ],
)
def test_a_value_that_is_none_is_a_slot_without_a_number(line: str, key: str, slots: list[str]) -> None:
    got = pl.DataFrame({"l": [line]}).select(t=template(pl.col("l")), n=numbers(pl.col("l"))).row(0)
    assert got == (key, slots)
    assert numbers_in(line) == slots
    # a none's value is null, not NaN: no figure at all
    values = pl.DataFrame({"r": slots}).select(value(pl.col("r"))).to_series().to_list()
    assert [v is None for v in values] == [s == "\N{EMPTY SET}" for s in slots]


# LLaMA-Factory's trainer_log.jsonl, the last five lines of a run quoted in github.com/hiyouga/LlamaFactory/issues/774
# (2023-09-04): its last line, at current_steps = total_steps, has no loss and no learning rate to report (null)
_LLAMA_FACTORY = [
    '{"current_steps": 3200, "total_steps": 3235, "loss": 4.4671, "eval_loss": null, "predict_loss": null, '
    '"reward": null, "learning_rate": 1.4439610072863874e-08, "epoch": 0.99, "percentage": 98.92, '
    '"elapsed_time": "5:13:22", "remaining_time": "0:03:25"}',
    '{"current_steps": 3210, "total_steps": 3235, "loss": 4.4577, "eval_loss": null, "predict_loss": null, '
    '"reward": null, "learning_rate": 7.367495402210711e-09, "epoch": 0.99, "percentage": 99.23, '
    '"elapsed_time": "5:14:24", "remaining_time": "0:02:26"}',
    '{"current_steps": 3220, "total_steps": 3235, "loss": 4.4458, "eval_loss": null, "predict_loss": null, '
    '"reward": null, "learning_rate": 2.6523817248214068e-09, "epoch": 1.0, "percentage": 99.54, '
    '"elapsed_time": "5:15:22", "remaining_time": "0:01:28"}',
    '{"current_steps": 3230, "total_steps": 3235, "loss": 4.4598, "eval_loss": null, "predict_loss": null, '
    '"reward": null, "learning_rate": 2.9471371284783834e-10, "epoch": 1.0, "percentage": 99.85, '
    '"elapsed_time": "5:16:20", "remaining_time": "0:00:29"}',
    '{"current_steps": 3235, "total_steps": 3235, "loss": null, "eval_loss": null, "predict_loss": null, '
    '"reward": null, "learning_rate": null, "epoch": 1.0, "percentage": 100.0, '
    '"elapsed_time": "5:16:48", "remaining_time": "0:00:00"}',
]


def test_a_json_logs_last_line_with_no_loss_is_still_its_last_step() -> None:
    got = read(_LLAMA_FACTORY)
    # five records: the last, at step 3235, read though its loss is null (it was skipped: the run's end was lost)
    assert got.get_column("step").to_list() == [3200, 3210, 3220, 3230, 3235]
    # elapsed_time 5:16:48 = 5 x 3600 + 16 x 60 + 48 = 19008 s; 5:13:22 = 18802 s
    assert got.get_column("elapsed_s").to_list() == [18802, 18864, 18922, 18980, 19008]
    assert got.get_column("loss").to_list()[-1] is None
    assert got.get_column("loss").to_list()[0] == pytest.approx(4.4671)
