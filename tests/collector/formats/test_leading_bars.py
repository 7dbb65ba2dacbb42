"""A bar that opens a stream, of a smaller total than the bar that counts on after it and never drawn again, is
another loop's (a data bar before the training bar, or one nested in it that the excerpt begins inside): no
training step, and its counter and clock never join the training bar's. Each expected value is worked out by hand in
a comment."""

from __future__ import annotations

from tests.support.formats_support import parse

COLUMNS = ("step", "global_steps_per_s", "elapsed_s")

# axolotl on Hugging Face's Trainer (github.com/axolotl-ai-cloud/axolotl/issues/592, 2023-09-17): a bar with no
# description at 2/3, two of axolotl's packing estimates, then the training bar redrawn at 281 to 284 of 873 (the
# paste keeps the redraws apart with blank lines; the bars' glyphs shortened here)
_AXOLOTL = [
    " 67%|######6   | 2/3 [00:01<00:00,  1.68it/s]",
    "[2023-09-17 13:18:20,123] [INFO] [axolotl.utils.dataloader._len_est:264] [PID:11100] [RANK:0] "
    "packing_efficiency_estimate: 0.77 total_num_tokens per device: 26275",
    "",
    " 32%|###2      | 281/873 [25:36<52:46,  5.35s/it]",
    "",
    " 32%|###2      | 282/873 [25:40<49:29,  5.02s/it]",
    "",
    " 32%|###2      | 283/873 [25:44<47:06,  4.79s/it]",
    "{'loss': 0.8635, 'learning_rate': 0.0001369640787949015, 'epoch': 0.97}",
    "",
    " 33%|###2      | 284/873 [25:49<45:20,  4.62s/it]",
]


def test_a_data_bar_before_the_training_bar_is_no_training_step() -> None:
    got = parse(_AXOLOTL).steps.select(COLUMNS).rows()
    # the training bar's four drawings alone: steps 281-284 at 1/5.35, 1/5.02, 1/4.79, 1/4.62 steps/s, its clock
    # 25:36 = 1536 s, 25:40 = 1540 s, 25:44 = 1544 s, 25:49 = 1549 s (the 2/3 bar's step 2 at 1 s no more before
    # them: 279 steps over 1535 s of two clocks)
    assert [s for s, _, _ in got] == [281, 282, 283, 284]
    assert [round(r, 4) for _, r, _ in got] == [0.1869, 0.1992, 0.2088, 0.2165]
    assert [e for _, _, e in got] == [1536.0, 1540.0, 1544.0, 1549.0]


def _bar(n: int, total: int, elapsed: str) -> str:
    return f"{100 * n // total:3d}%|          | {n}/{total} [{elapsed}<00:10,  2.00it/s]"


def test_a_training_bar_paused_by_a_larger_evaluation_bar_stays_training() -> None:
    # near-miss, in Hugging Face Trainer's shapes (tests/collector/formats/test_trainer_bars.py): an excerpt that opens
    # with the training bar (total 10) at 4/10, then an evaluation's bar of more batches (0/20 to 20/20, counting on),
    # then the training bar again from 4: the 10-bar opens the stream but is drawn again, so it was paused, not
    # another loop's. Its steps 4 (twice: the redraw), 5 and 6 stay records; the evaluation's none.
    lines = [_bar(4, 10, "00:02")] + [_bar(k, 20, "00:01") for k in range(0, 21, 5)]
    lines += [_bar(4, 10, "00:02"), _bar(5, 10, "00:03"), _bar(6, 10, "00:03")]
    assert [s for s, _, _ in parse(lines).steps.select(COLUMNS).rows()] == [4, 4, 5, 6]


def test_a_bar_opening_the_stream_before_a_smaller_one_stays_training() -> None:
    # near-miss: the training bar (total 100) at 50/100, then a bar of fewer steps (0/20 to 20/20) that counts on:
    # the first bar is the larger, so no other loop's bar before the training one; 50 stays a record
    lines = [_bar(50, 100, "00:25")] + [_bar(k, 20, "00:01") for k in range(0, 21, 5)]
    assert 50 in parse(lines).steps.get_column("step").to_list()
