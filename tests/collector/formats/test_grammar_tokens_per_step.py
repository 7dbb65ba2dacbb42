"""A rate of tokens beside the tokens one step holds (:data:`~tierscope.collector.formats.vocabulary.TOKENS_PER_STEP`):
their ratio is the steps per second. Quoted real lines of the kind (the source beside them), the expected values
worked out by hand in the comments, and near-misses that give no rate."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

#: fairseq-py 0.x's progress lines, facebookresearch/fairseq issue 301 (turn 1, 2018)
_FAIRSEQ = [
    "| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, wpb=908, bsz=32, lr=0.001, clip=100%, gnorm=2.1427",
    "| epoch 010  6000 / 8223 loss=1.56 (1.46), wps=961, wpb=905, bsz=32, lr=0.001, clip=100%, gnorm=2.1214",
]


def test_words_per_second_over_words_per_batch_are_updates_per_second() -> None:
    # 962 words/s / 908 words per update = 1.05947 updates/s; 961 / 905 = 1.06188; derived, not stated
    steps = parse(_FAIRSEQ).steps
    assert steps.get_column("global_steps_per_s").to_list() == [pytest.approx(962 / 908), pytest.approx(961 / 905)]
    assert steps.get_column("rate_derived").to_list() == [True, True]
    # the words/s stay as logged, counted in tokens (a language model's words are its tokens)
    assert steps.get_column("examples_per_s").to_list() == [962.0, 961.0]
    assert steps.get_column("examples_unit").to_list() == ["tokens", "tokens"]


def test_the_batch_in_sentences_gives_no_rate_of_words() -> None:
    # bsz=32 counts sentences: 962 words/s / 32 = 30 would be no steps/s; without wpb no rate is derived
    line = "| epoch 010  2000 / 8223 loss=1.27 (1.50), wps=962, bsz=32, lr=0.001, clip=100%, gnorm=2.1427"
    assert parse([line]).steps.get_column("global_steps_per_s").to_list() == [None]


@pytest.mark.parametrize(
    "line",
    [
        # a rate of samples (no tokens) beside a count of words per batch: units that do not divide
        "| epoch 010  2000 / 8223 loss=1.27 (1.50), samples/s=30, wpb=908, bsz=32",
        # a count of tokens per batch of zero divides nothing
        "| epoch 001  100 / 8223 loss=1.27 (1.50), wps=962, wpb=0, bsz=32",
    ],
)
def test_near_misses_derive_no_rate(line: str) -> None:
    assert parse([line]).steps.get_column("global_steps_per_s").to_list() == [None]
