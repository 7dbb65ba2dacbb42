"""Numbers a line holds that no record can: a whole number beyond its type (a pid above 2**63 - 1),
an infinite loss, a time beyond year 9999. Each makes its line a reject with a reason, the same
reason whichever format read it; none is stored as a null or an infinity."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.collector.formats.test_cloudml_fast_path import both_paths
from tests.support.formats_support import parse
from tierscope.collector.formats import LineFormat
from tierscope.collector.formats.declared import load_formats

#: 2**63 - 1, the largest pid an Int64 holds, and 2**63, one more.
PID_MAX, PID_OVER = 9_223_372_036_854_775_807, 9_223_372_036_854_775_808


def _tfcnn(pid: int, global_step: int | str = 381280) -> list[str]:
    return [
        f"2017-12-07 19:34:21,283 INFO {pid} global step {global_step}",
        f"2017-12-07 19:34:21,942 INFO {pid} 47650\timages/sec: 198.1 +/- 0.1 (jitter = 18.9)\t2.359\t0.617\t0.781",
    ]


def test_a_tf_cnn_benchmarks_pid_beyond_int64_is_a_reject() -> None:
    # 2**63 - 1 is stored as the record's pid; 2**63 was stored as a record whose pid was null (a
    # change of process the analysis could not see), with no reject
    kept = parse(_tfcnn(PID_MAX), only="tf-cnn-benchmarks")
    assert kept.steps.select("step", "local_step", "pid").rows() == [(381280, 47650, PID_MAX)]
    over = parse(_tfcnn(PID_OVER), only="tf-cnn-benchmarks")
    assert over.steps.height == 0
    assert over.rejects.select("source_offset", "reason").rows() == [
        (2, f"pid '{PID_OVER}' is not a whole number >= 0")
    ]


def test_a_declared_format_says_the_same_of_the_same_pid(tmp_path: Path) -> None:
    toml = tmp_path / "f.toml"
    toml.write_text(
        "[[format]]\nname = 'bench'\n"
        "regex = '^(?P<pid>\\d+) it=(?P<step>\\d+) (?P<sec_per_step>\\S+) s/it'\n"
        "example = '31 it=1 0.5 s/it'\n"
    )
    (declared,) = load_formats(toml)
    got = parse([f"{PID_OVER} it=100 0.25 s/it"], only="bench", formats=[declared])
    tfcnn = parse(_tfcnn(PID_OVER), only="tf-cnn-benchmarks")
    assert got.rejects["reason"].to_list() == tfcnn.rejects["reason"].to_list()


def test_a_global_step_beyond_int64_is_a_reject_not_a_step_less_record() -> None:
    # the throughput line took the step of the `global step` line before it: 2**63 became null, and
    # the record a step-less one
    got = parse(_tfcnn(31, PID_OVER), only="tf-cnn-benchmarks")
    assert got.steps.height == 0
    assert got.rejects["reason"].to_list() == [f"step '{PID_OVER}' is not a whole number >= 0"]


def _cloudml(loss: str, step: int = 100) -> tuple[str, str]:
    """The 2016 variant (fast path) and the original sample's (full pattern) with ``loss``."""
    return (
        f"Train [master/0], step {step}:loss:{loss}, accuracy:0.133 (6.247 sec) 16.009 global_steps/s, "
        "16.009 local_steps/s",
        f"Train [master/0], step {step}: loss: {loss}, accuracy: 0.133 (6.247 sec) 16.009 global steps/s, "
        "16.009 local steps/s",
    )


@pytest.mark.parametrize("loss", ["inf", "-inf", "1e309", "Infinity"])
def test_an_infinite_loss_is_a_reject_on_both_cloudml_paths(loss: str) -> None:
    # 1e309 is beyond a float (1.8e308): it reads as inf. Both were stored, loss inf (a -inf loss
    # "reaches" any --target-loss); the structured log rejects Infinity and 1e400 as out of range.
    fast, full = _cloudml(loss)
    got = parse([fast, full], only="cloudml")
    assert got.steps.height == 0
    assert got.rejects["reason"].to_list() == [f"loss '{loss}' is infinite"] * 2
    paths = both_paths([fast, full])
    assert paths[0] == paths[1]


def test_a_nan_loss_is_still_a_record_on_both_paths() -> None:
    # a diverged model steps as fast: the record is stored with its loss NaN (and a note)
    got = parse(list(_cloudml("nan")), only="cloudml")
    assert got.rejects.height == 0
    assert got.steps["step"].to_list() == [100, 100] and got.steps["loss"].is_nan().all()


def test_training_begins_at_a_time_no_timestamp_holds_is_a_reject() -> None:
    # 253,402,300,800 s is 10000-01-01T00:00:00Z: the first time past year 9999. Those lines were a
    # started event without a time (20 digits overflow the microseconds) or at year 10000, with no reject.
    lines = [
        "Training begins @ 99999999999999999999",
        "Training begins @ 253402300800.0",
        "Training begins @ 1514344761.687888",
    ]
    got = parse(lines)
    assert got.rejects.select("source_offset", "reason").rows() == [
        (1, "started time '99999999999999999999' is not a time between 1970 and 9999 (Unix seconds)"),
        (2, "started time '253402300800.0' is not a time between 1970 and 9999 (Unix seconds)"),
    ]
    assert got.events.select("source_offset", "event").rows() == [(3, "started")]
    # 1514344761.687888 s = 2017-12-27 03:19:21.687888 UTC
    assert str(got.events["timestamp"][0]) == "2017-12-27 03:19:21.687888+00:00"


def test_a_dist_mnist_time_past_year_9999_is_a_reject() -> None:
    # 999,999,999,999.5 s is in year 33658: it was stored as that time, and rated against the others
    lines = [
        "1514344770.659784: Worker 2: training step 1 done (global step: 0)",
        "999999999999.5: Worker 2: training step 2 done (global step: 2)",
        "1514344770.693580: Worker 2: training step 3 done (global step: 8)",
    ]
    got = parse(lines, only="dist-mnist")
    assert got.rejects["reason"].to_list() == [
        "timestamp '999999999999.5' is not a time between 1970 and 9999 (Unix seconds)"
    ]
    # 8 global steps over 1514344770.693580 - 1514344770.659784 = 0.033796 s = 236.714 steps/s
    assert got.steps.select("step", "global_steps_per_s").rows()[1][1] == pytest.approx(8 / 0.033796)


@pytest.mark.parametrize(
    ("fmt", "line"),
    [
        ("tf-estimator", "INFO:tensorflow:loss = inf, step = 1500 (2.688 sec)"),
        ("keras", "1875/1875 [==============================] - 4s 2ms/step - loss: inf - accuracy: 0.9781"),
        ("slim", "INFO:tensorflow:global step 819: loss = inf (19.898 sec/step)"),
    ],
)
def test_other_formats_say_the_same_of_an_infinite_loss(fmt: str, line: str) -> None:
    got = parse([line], only=fmt)
    assert got.steps.height == 0
    assert got.rejects["reason"].to_list() == ["loss 'inf' is infinite"]


def _mine(tmp_path: Path, tail: str, example: str) -> LineFormat:
    """A declared format 'mine': ``it=N X s/it`` and ``tail`` (a regex, TOML-escaped)."""
    toml = tmp_path / "f.toml"
    toml.write_text(
        f"[[format]]\nname = 'mine'\nregex = '^it=(?P<step>\\d+) (?P<sec_per_step>\\S+) s/it {tail}'\n"
        f"example = 'it=1 0.5 s/it {example}'\n"
    )
    (declared,) = load_formats(toml)
    return declared


def test_a_declared_format_rejects_an_infinite_loss_too(tmp_path: Path) -> None:
    declared = _mine(tmp_path, "loss (?P<loss>\\S+)", "loss 2.0")
    got = parse(["it=1 0.5 s/it loss 1e309", "it=2 0.5 s/it loss nan"], only="mine", formats=[declared])
    assert got.rejects.select("source_offset", "reason").rows() == [(1, "loss '1e309' is infinite")]
    assert got.steps["step"].to_list() == [2]  # NaN: a diverged model's record, kept


@pytest.mark.parametrize(
    ("time", "reason"),
    [
        # time:inf sec was a record at iterations / inf = 0 global steps/s; nan a NaN rate; -5 an
        # interval of -5 s (its rate left null)
        ("inf", "interval_s 'inf' is not a finite number >= 0"),
        ("1e309", "interval_s '1e309' is not a finite number >= 0"),
        ("nan", "interval_s 'nan' is not a finite number >= 0"),
        ("-5", "interval_s '-5' is not a finite number >= 0"),
    ],
)
def test_a_tensorpack_epoch_time_no_record_holds_is_a_reject(time: str, reason: str) -> None:
    bar = "100%|##########|5000/5000[51:14<00:00, 1.63it/s]"
    epoch = "[0807 11:46:26 @base.py:210] Epoch 96 (global_step 955000) finished, time:{} sec."
    got = parse([bar, epoch.format(time), bar, epoch.format("2500")], only="tensorpack")
    assert got.rejects.select("source_offset", "reason").rows() == [(2, reason)]
    # the good epoch: 5000 iterations / 2500 s = 2.0 global steps/s
    assert got.steps.select("source_offset", "global_steps_per_s").rows() == [(4, 2.0)]


@pytest.mark.parametrize("pct", ["175.5", "inf", "nan", "-0.5"])
def test_a_dlrm_accuracy_outside_0_100_percent_is_a_reject(pct: str) -> None:
    # 175.5 % was stored as accuracy 1.755 (inf as inf): cloudml, Keras and the structured log
    # reject an accuracy outside 0..1
    line = f"Finished training it 16/150 of epoch 0, 439.65 ms/it, loss 0.552633, accuracy {pct} %"
    got = parse([line, line.replace(pct, "100")], only="dlrm")
    assert got.rejects.select("source_offset", "reason").rows() == [
        (1, f"accuracy_pct '{pct}' is not a number between 0 and 100")
    ]
    assert got.steps.select("source_offset", "accuracy").rows() == [(2, 1.0)]  # 100 % / 100


def test_a_declared_accuracy_outside_0_1_is_a_reject(tmp_path: Path) -> None:
    declared = _mine(tmp_path, "acc (?P<accuracy>\\S+)", "acc 0.5")
    got = parse(
        ["it=1 0.5 s/it acc 1.5", "it=2 0.5 s/it acc nan", "it=3 0.5 s/it acc 1"], only="mine", formats=[declared]
    )
    assert got.rejects.select("source_offset", "reason").rows() == [
        (1, "accuracy '1.5' is not a number between 0 and 1"),
        (2, "accuracy 'nan' is not a number between 0 and 1"),
    ]
    assert got.steps["step"].to_list() == [3]
