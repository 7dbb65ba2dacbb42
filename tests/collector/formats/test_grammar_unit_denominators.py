"""A position word after a slash is a unit's denominator, not a position: fairseq's ``words/batch 906``.

fairseq 0.x prints each epoch's summary as ``| epoch 010 | train loss 1.44 | ... | words/s 961 | words/batch 906 |
...`` (facebookresearch/fairseq issue 301, 2018): 906 is the words a batch holds, no batch number."""

from __future__ import annotations

from tests.support.formats_support import parse

SUMMARY = (
    "| epoch 010 | train loss 1.44 | train ppl 2.72 | s/checkpoint    7747 | words/s    961 | words/batch    906 "
    "| bsz    32 | lr 0.001000 | clip 100% | gnorm 2.1113"
)


def test_words_per_batch_is_no_batch_number() -> None:
    # the epoch's summary states no step: before, 'batch    906' was read as step 906 (a false restart); alone in a
    # file it is an epoch-level log's record of its epoch (its words/s), with no step
    assert parse([SUMMARY]).steps.get_column("step").to_list() == [None]


def test_a_batch_number_after_a_separator_is_still_a_position() -> None:
    # near miss: 'batch 906' after a bar, and at the line's start, are positions
    steps = parse(["| batch 906 | loss 1.2 | 0.5 s/it", "batch 907 loss 1.1 0.5 s/it"]).steps
    assert steps.get_column("step").to_list() == [906, 907]
