"""Units and numbers of today's large-model trainers read by the vocabulary: a number with a metric prefix
(``11.5K``), a step time keyed with ``_`` between its words or as a metric's path (``timing_s/step``), examples
per second of one device said between the examples and the time (``tokens/gpu/sec``). Each test quotes short
real lines of the kind (the source beside them) and asserts values worked out by hand in its comments."""

from __future__ import annotations

import pytest

from tests.support.formats_support import parse

#: nanotron's step line, huggingface/nanotron issue 390 (2025-10-17) and PR 23 (2024-01-17)
_NANOTRON = (
    "10/17/2025 16:31:56 [INFO|DP=0|PP=0|TP=0]: iteration: 327281 / 378950 | consumed_tokens: 85.8G | "
    "elapsed_time_per_iteration_ms: 11.5K | tokens_per_sec: 22.8K | tokens_per_sec_per_gpu: 11.4K | "
    "global_batch_size: 64 | lm_loss: 2.38 | lr: 1e-05 | grad_norm: 1.25"
)
_NANOTRON_HOST = (
    "01/17/2024 13:48:41 [INFO|DP=0|PP=0|TP=0|ip-26-0-160-225]: iteration: 991 / 1000 | consumed_tokens: 634K | "
    "elapsed_time_per_iteration_ms: 35.7 | tokens_per_sec: 17.9K | tokens_per_sec_per_gpu: 4.48K | "
    "global_batch_size: 20 | lm_loss: 10.6 | lr: 1e-05 | grad_norm: 0.516"
)


def test_a_number_with_a_metric_prefix_is_read_whole() -> None:
    # 11.5K ms = 11500 ms a step: 1000 / 11500 = 0.0869565... steps/s (the clock agrees: 34 s for 3 steps);
    # 22.8K tokens/s = 22800, never 22.8 (a reader that drops the K is 1000 times off)
    steps = parse([_NANOTRON]).steps
    assert steps.get_column("step").to_list() == [327281]
    assert steps.get_column("global_steps_per_s").to_list() == [pytest.approx(1000 / 11500)]
    assert steps.get_column("examples_per_s").to_list() == [22800.0]


def test_a_step_time_keyed_with_underscores_is_a_step_time() -> None:
    # ``elapsed_time_per_iteration_ms: 35.7``: 1000 / 35.7 = 28.011... steps/s; 17.9K tokens/s = 17900
    steps = parse([_NANOTRON_HOST]).steps
    assert steps.get_column("global_steps_per_s").to_list() == [pytest.approx(1000 / 35.7)]
    assert steps.get_column("examples_per_s").to_list() == [17900.0]


@pytest.mark.parametrize(
    "line",
    [
        # sizes: the prefix runs on into its unit (torchtitan's ``memory: 66.91GiB``, mlx_lm's ``Peak mem 9.707 GB``)
        "step: 4  loss:  7.62585  memory: 66.91GiB(37.51%)",
        "Iter 10: Train loss 2.662, Peak mem 9.707 GB",
        # a count with a prefix is no measure of a step
        "step 3 | consumed_tokens: 85.8G",
    ],
)
def test_a_size_or_a_count_with_a_prefix_is_no_measure(line: str) -> None:
    assert parse([line]).steps.height == 0


def test_a_step_time_keyed_as_a_metric_path_is_the_steps_time() -> None:
    # verl's metrics line behind Ray's actor prefix: verl-project/verl issue 1208 (``timing_s/step:96.551``) and a
    # user's Slurm log of 2026-01-08 (``timing_s/step:161.0777970990166``); 1 / 96.551 = 0.010357 steps/s. Its
    # phases (``timing_s/gen:74.020``, ``timing_s/update_actor:14.302``) are parts of the step, not its time.
    lines = [
        "(TaskRunner pid=16292) step:2 - actor/pg_loss:0.001 - critic/score/mean:0.011 - timing_s/gen:74.020 - "
        "timing_s/update_actor:14.302 - timing_s/step:96.551 - timing_per_token_ms/adv:0.001",
        "(TaskRunner pid=1271585) step:4 - critic/vf_loss:np.float64(0.316579750584412) - "
        "timing_s/update_critic:116.13478486053646 - timing_s/step:161.0777970990166 - "
        "perf/time_per_step:161.0777970990166 - perf/throughput:413.3872029493165",
    ]
    for line, seconds, step in zip(lines, (96.551, 161.0777970990166), (2, 4), strict=True):
        steps = parse([line]).steps
        assert steps.get_column("step").to_list() == [step]
        assert steps.get_column("global_steps_per_s").to_list() == [pytest.approx(1 / seconds)]
    # the phases alone time no step (Awesome-ML-SYS-Tutorial issue 106, a line cut before its step time)
    phases = "(TaskRunner pid=87031) step:83 - actor/pg_loss:0.000 - timing_s/gen:29.641 - timing_s/ref:6.307"
    assert parse([phases]).steps.height == 0


def test_examples_per_second_of_a_device_said_before_the_time() -> None:
    # modula-systems/modula PR 1 (a compiled GPT trainer): ``tokens/gpu/sec: 9378.40`` is one device's tokens/s,
    # kept as logged (no batch size in the log, so no steps/s); an OLMoE FSDP script prints ``Tokens/GPU/sec: X``
    lines = [
        "step: 10         train loss: 3.11        test loss: 3.05         tokens/gpu/sec: 9378.40         MFU: 63.91%",
        "step: 20         train loss: 2.73        test loss: 2.76         tokens/gpu/sec: 10191.80        MFU: 69.45%",
    ]
    steps = parse(lines).steps
    assert steps.get_column("step").to_list() == [10, 20]
    assert steps.get_column("examples_per_s").to_list() == [9378.40, 10191.80]
    assert steps.get_column("global_steps_per_s").to_list() == [None, None]
    assert parse(["Step 5/100 | Loss: 2.1000 (CE: 2.1000) | LR: 0.000100 | Tokens/GPU/sec: 5261.00"]).steps.get_column(
        "examples_per_s"
    ).to_list() == [5261.0]
