"""A figure keyed in a column of a ``|``-separated row, its value after a space (fairseq's ``_str_pipes``: its epoch
summaries ``train | epoch 050 | ... | ups 3.38 | ... | num_updates 18950 | ... | wall 5706``), reads as the same key
with ``=`` (``ups=3.38``, ``num_updates=18950``, ``wall=5706``): only in a column, never a key and a number in prose."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

# Quoted from shlomota/amnlp ex2/transformer_exercise/summary.md @ 4ffff30a (the baseline_train.log tail of a run of
# 2021-05-10): fairseq_cli.train's end-of-epoch summary under Python logging's fields.
SUMMARY = (
    "2021-05-10 14:26:15 | INFO | train | epoch 050 | loss 3.943 | nll_loss 2.514 | ppl 5.71 | wps 35189.2 | ups 3.38"
    " | wpb 10419.8 | bsz 422.8 | num_updates 18950 | lr 0.000229718 | gnorm 0.625 | train_wall 65 | gb_free 8.9"
    " | wall 5706"
)
# The validation summary of a fairseq run of 2023-06-13 (a non-autoregressive translation log stored in a public
# repository; search corpus id 21068969228): the same columns, an evaluation's.
VALID = (
    "2023-06-13 17:32:41 | INFO | valid | epoch 143 | valid on 'valid' subset | loss 12.677 | nll_loss 11.546"
    " | word_ins 12.459 | length 4.375 | ppl 6550.94 | bleu 29.52 | wps 88225 | wpb 21176.3 | bsz 666.3"
    " | num_updates 40297 | best_bleu 30.53"
)
# fairseq 0.x's summary with no logger before it (a RACE fine-tuning README quoted in the search corpus, id
# 19050382483): ``ups 0`` is a rate rounded to two decimals, no figure; its ``wall`` still times the record.
LEGACY = (
    "| epoch 005 | loss 0.158 | nll_loss 0.000 | ppl 1 | wps 770 | ups 0 | wpb 5574.176 | bsz 15.999"
    " | num_updates 27301 | lr 1e-05 | gnorm 25.694 | clip 0.000 | oom 0.000 | loss_scale 128.000"
    " | wall 248855 | train_wall 110662"
)


def test_an_epoch_summary_in_columns_is_its_update_s_record() -> None:
    steps = parse([SUMMARY]).steps
    assert steps.get_column("step").to_list() == [18950]
    # ups 3.38 is updates per second, an update the global step
    assert steps.get_column("global_steps_per_s").to_list() == pytest.approx([3.38])
    assert steps.get_column("elapsed_s").to_list() == pytest.approx([5706.0])
    assert steps.get_column("loss").to_list() == pytest.approx([3.943])


def test_a_rate_rounded_to_zero_leaves_the_clock() -> None:
    parsed = parse([LEGACY])
    assert parsed.steps.get_column("step").to_list() == [27301]
    assert parsed.steps.get_column("global_steps_per_s").is_null().all()
    assert parsed.steps.get_column("elapsed_s").to_list() == pytest.approx([248855.0])
    assert parsed.rejects.height == 0


@pytest.mark.parametrize(
    "line",
    [
        VALID,
        # keys and numbers in prose, no column: no position, no rate
        "2021-05-10 14:26:15 | INFO | notes | the wall 5706 was hit after num_updates 18950 and ups 3.38",
        # a parts list in a Markdown table (capitals, a unit): no rate
        "| VCC | UPS 3.3 V |",
    ],
)
def test_columns_that_time_no_training_step(line: str) -> None:
    assert parse([line]).steps.height == 0
