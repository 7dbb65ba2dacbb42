"""One terminal-code pattern and one progress-bar pattern serve every format that strips or spots them: a cursor
code Keras' reader now drops as the status check did, a bar without its glyphs (a Colab copy's ``100% 42/42``)
known as a bar by the untagged-ranks rule and by the logging dicts' epoch placement as a tqdm bar with glyphs is.
Lines are written for the test in the shapes the tools print; each expected value is worked out in a comment."""

from __future__ import annotations

from tests.support.formats_support import frame, parse
from tierscope.collector.formats.envelopes import split_envelopes
from tierscope.collector.formats.ranks import rank_count


def test_a_keras_bar_behind_a_hidden_cursor_code_is_read() -> None:
    # ``\x1b[?25l`` (hide the cursor, as rich and tqdm print it) before the bar, ``\x1b[?25h`` after: stripped,
    # the bar is Keras' 1875/1875 epoch end, the step 1875 (one epoch, no epoch line); its rate is the finer of its
    # two figures: 1875 steps / 4 s = 468.75 steps/s (4 s holds more units than 2 ms/step). Unstripped: no record.
    got = parse(["\x1b[?25l1875/1875 [==============================] - 4s 2ms/step - loss: 0.0712\x1b[?25h"]).steps
    assert got.select("step", "global_steps_per_s").rows() == [(1875, 468.75)]


def _refreshed(bar: str) -> list[str]:
    # one process redrawing its bar at each position with a new loss: steps 41 and 42, two drawings each
    return [bar.format(n=n, loss=loss) for n in (41, 42) for loss in ("0.00492", "0.0195")]


def test_a_bar_without_glyphs_redrawn_at_one_position_is_no_ranks_copies() -> None:
    # the two drawings at 41 differ only in the loss's decimals (0.00492, 0.0195): a bar refreshing its postfix,
    # one process. With glyphs and without them alike, no ranks.
    glyphs = "{n:3d}%|####      | {n}/100 [00:04<00:06, 10.00it/s, loss={loss}]"
    plain = "{n:3d}% {n}/100 [00:04<00:06, 10.00it/s, loss={loss}]"
    ultralytics = "        1/3      1.2G      {loss}  {n}%  ━━━━━━╸───── {n}/100 10.0it/s 4.1s<6.0s"
    for bar in (glyphs, plain, ultralytics):
        assert rank_count(split_envelopes(frame(_refreshed(bar)), 2024)[0]) is None, bar


def test_a_logging_dict_before_a_bar_without_glyphs_lands_at_its_epoch_over_the_bars_total() -> None:
    # 2 epochs over a plain bar of 200 steps: 100 steps an epoch; epoch 2.0 is step 200, the bar's record
    got = parse(
        [
            "  Num Epochs = 2",
            "{'loss': 0.3, 'grad_norm': 0.1, 'learning_rate': 0.0, 'epoch': 2.0}",
            "100% 200/200 [03:20<00:00,  1.00it/s]",
        ]
    ).steps
    assert got.select("step", "loss").rows() == [(200, 0.3)]
