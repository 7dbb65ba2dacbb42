"""The grammar's units written before their number, trailing elapsed seconds, ``N/M;`` counters, and
evaluations stated right after their position. Lines are written for the test in the shapes real tools
print (PyTorch's word-language-model example, MLX-LM, CycleGAN, OpenNMT-py, torchtitan); the figures are
made up and each expected value is worked out by hand in a comment."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read

COLUMNS = ("step", "global_steps_per_s", "elapsed_s", "examples_per_s")


def rows(*lines: str) -> list[tuple]:
    return read(*lines).select(COLUMNS).rows()


@pytest.mark.parametrize(
    ("line", "step", "rate"),
    [
        # a time unit before its number: 1000 / 250 ms = 4 steps/s
        ("| epoch   3 |   200/ 1000 batches | lr 5.00 | ms/batch 250.00 | loss  4.10", 200, 4.0),
        # ... in seconds with a colon: 1 / 0.5 s = 2
        ("step 40 | s/iter: 0.50 | loss 1.0", 40, 2.0),
        # a rate unit before its number, any case: 0.25 it/s as printed
        ("Iter 30: Train loss 1.2, It/sec 0.25, Tokens/sec 100.0", 30, 0.25),
        ("Iter 30: Train loss 1.2, IT/SEC 0.25", 30, 0.25),
        ("Iter 30: Train loss 1.2, it/s 4", 30, 4.0),
        # 'iters: N' inside a parenthesised group is the position; the unit-less time its seconds: 1 / 0.25 = 4
        ("(epoch: 2, iters: 300, time: 0.250, data: 0.010) G: 0.5", 300, 4.0),
    ],
)
def test_units_before_their_number_and_iters(line: str, step: int, rate: float) -> None:
    # a unit before its number says examples too: ``Tokens/sec 100.0`` is 100 tokens/s
    examples = 100.0 if "Tokens/sec" in line else None
    assert rows(line) == [(step, rate, None, examples)]


def test_elapsed_seconds_at_the_end_of_a_line_and_semicolon_counters() -> None:
    # the seconds since the start as the last statement, in three spellings; the rate comes from them later
    assert rows(
        "Epoch 2, 100/500; acc: 50.00; ppl: 9.0; 1000 tok/s; 1200 s elapsed",
        "Epoch 2, 150/500; acc: 50.00; ppl: 9.0; 1000 tok/s; 1220 s elapsed",
    ) == [(100, None, 1200.0, None), (150, None, 1220.0, None)]
    assert rows(
        "Step 100/5000; acc: 50.0; lr: 0.001; 900/1000 tok/s; 500 sec",
        "Step 150/5000; acc: 50.0; lr: 0.001; 900/1000 tok/s; 600 sec",
    ) == [(100, None, 500.0, None), (150, None, 600.0, None)]
    assert rows("step 10 loss 2.0 elapsed: 100.0") == [(10, None, 100.0, None)]


def test_tokens_per_second_as_tps() -> None:
    # torchtitan's 'tps' (tokens/s), thousands grouped: 1,500 -> 1500 examples/s as logged
    assert rows("step: 10  loss: 3.0  tps: 1,500") == [(10, None, None, 1500.0)]


@pytest.mark.parametrize(
    "line",
    [
        # an evaluation stated right after its position, or by its bar's description
        "Iter 1: Val loss 2.5, Val took 100.0s",
        "step 300 | eval loss 2.0 | time 5.0 s",
        "Validating: 100%|##########| 50/50 [00:05<00:00, 10.0it/s]",
        "val: 100%|##########| 50/50 [00:05<00:00, 10.0it/s]",
        "Valid 3: 100%|##########| 50/50 [00:05<00:00, 10.0it/s]",
        "Calculating loss...: 100%|##########| 50/50 [00:05<00:00, 10.0it/s]",
        # near-misses of the new units: no position, or a unit with no number after it
        "Batch size: 64 ms/step",
        "wrote 1000 files; 300 sec",
        "global batch 64, it/s",
        "max_iters: 5000, s/iter: 0.5",
    ],
)
def test_evaluations_and_near_misses_are_no_records(line: str) -> None:
    assert rows(line) == []


def test_a_number_before_its_unit_is_never_the_unit_of_the_next_number() -> None:
    # tqdm's '3.33it/s' is its own rate; the ']' after it holds no number to take
    assert rows(" 42%|####      | 840/2000 [04:12<05:48,  3.33it/s]") == [(840, 3.33, 252.0, None)]
    # '2.0 it/s 7' keeps the number before the unit: 2.0 steps/s
    assert rows("step 5, 2.0 it/s 7 tokens") == [(5, 2.0, None, None)]


def test_opennmt_3x_seconds_closed_by_a_separator_are_the_time_since_the_start() -> None:
    # OpenNMT-py 3.x ends its report with ``%6.0f sec;`` (LibreTranslate/Locomotive issue 35, 2025-03-06): the seconds
    # since training began, with two reports as with four: 50 steps in 3017 - 2684 = 333 s is 0.15 steps/s, not
    # one step in 3017 s
    got = read(
        "[2025-03-06 13:49:38,771 INFO] Step 400/12000; acc: 17.9; ppl: 1441.5; xent: 7.3; lr: 0.00002; sents:  530183;"
        " bsz: 1241/1532/166; 11915/14711 tok/s;   2684 sec;",
        "[2025-03-06 13:55:11,374 INFO] Step 450/12000; acc: 19.0; ppl: 1230.8; xent: 7.1; lr: 0.00002; sents:  529361;"
        " bsz: 1242/1531/165; 11953/14732 tok/s;   3017 sec;",
    )
    assert got.select("step", "elapsed_s", "global_steps_per_s").rows() == [(400, 2684.0, None), (450, 3017.0, None)]


def test_seconds_between_separators_mid_line_stay_the_statements_time() -> None:
    # near-miss: Darknet's ``, 838.66 seconds, 256 images`` (AlexeyAB/darknet's detector loop) is its iteration's
    # time, a statement with more after it: 1 / 838.66 steps/s, no clock
    got = read("4: 285.33, 289.84 avg, 0.0001 rate, 838.66 seconds, 256 images")
    assert got.select("step", "elapsed_s").rows() == [(4, None)]
    assert got.get_column("global_steps_per_s").to_list() == [pytest.approx(1 / 838.66)]
