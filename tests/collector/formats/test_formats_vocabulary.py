"""The vocabulary's unit conversions (exact, by Hypothesis) and the families built on it."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from tests.support.formats_support import parse
from tierscope.collector.formats import FORMATS
from tierscope.collector.formats.vocabulary import (
    GATE,
    GROUPS,
    LOCAL,
    PHRASES,
    SHARED,
    derive_rates,
    phrase,
    record_columns,
)

# Positive, finite, as a log prints them (repr round-trips exactly through the String cast).
times = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False)


def convert(values: dict[str, str], meaning: str = LOCAL) -> dict[str, object]:
    frame = pl.DataFrame({k: [v] for k, v in values.items()}, schema={k: pl.String for k in values})
    return frame.select(**record_columns(values, meaning)).row(0, named=True)  # type: ignore[arg-type]


@given(times)
def test_ms_per_step_is_1000_over_it(ms: float) -> None:
    got = convert({"ms_per_step": repr(ms)})
    assert got["local_steps_per_s"] == 1000.0 / ms
    assert got["global_steps_per_s"] is None  # a task's step time is not the job's rate


@given(times)
def test_sec_per_step_us_and_ms_per_it(t: float) -> None:
    assert convert({"sec_per_step": repr(t)}, SHARED)["global_steps_per_s"] == 1.0 / t
    assert convert({"us_per_step": repr(t)})["local_steps_per_s"] == 1e6 / t
    assert convert({"ms_per_it": repr(t)}, SHARED)["global_steps_per_s"] == 1000.0 / t
    assert convert({"s_per_it": repr(t)})["local_steps_per_s"] == 1.0 / t


@given(times, times)
def test_stated_rates_are_kept_and_win_over_a_step_time(g: float, t: float) -> None:
    got = convert({"global_steps_per_s": repr(g), "sec_per_step": repr(t), "examples_per_s": repr(g * 8)}, SHARED)
    assert got["global_steps_per_s"] == g
    assert got["local_steps_per_s"] == 1.0 / t
    assert got["examples_per_s"] == g * 8
    assert got["rate_derived"] is False


def test_zero_and_bad_times_are_unknown_not_infinite() -> None:
    # Keras prints "0ms/step" for a step under half a millisecond.
    assert convert({"ms_per_step": "0"})["local_steps_per_s"] is None
    assert convert({"ms_per_step": "abc"})["local_steps_per_s"] is None
    assert convert({"accuracy_pct": "75.5"})["accuracy"] == 0.755


def test_every_phrase_uses_a_known_group_and_matches_its_spelling() -> None:
    samples = {
        "N/M": "16/150",
        "it N/M": "it 16/150",
        "(global step: N)": "(global step: 201)",
        "(global_step N)": "(global_step 955000)",
        "per-step time Xs": "per-step time 11.124s",
        "X ms/step": "52ms/step",
        "Xs/step": "1s/step",
        "X instances/sec": "491.5 instances/sec",
        "accuracy X %": "accuracy 75.560 %",
    }
    for spelling, (group, _) in PHRASES.items():
        assert group in GROUPS, spelling
        text = samples.get(spelling, spelling.replace("N", "12").replace("X", "3.5"))
        assert pl.Series([text]).str.contains(phrase(spelling)).item(), spelling


def test_derive_rates_per_task_in_time_order() -> None:
    # Worker 2 of dist-mnist: global 0 -> 2 in 0.020458 s = 97.76/s, 2 -> 8 in 0.013338 s = 449.84/s.
    t = [1514344770.659784, 1514344770.680242, 1514344770.693580]
    frame = pl.DataFrame(
        {
            "task": ["w2"] * 3,
            "step": [8, 0, 2],  # out of time order on purpose
            "timestamp": [datetime.fromtimestamp(x, UTC) for x in (t[2], t[0], t[1])],
        }
    )
    got = derive_rates(frame, "task")
    assert got.get_column("step").to_list() == [8, 0, 2]  # order kept
    rates = got.get_column("global_steps_per_s").to_list()
    assert rates[1] is None
    assert abs(rates[2] - 2 / 0.020458) < 1e-3 and abs(rates[0] - 6 / 0.013338) < 1e-3
    assert got.get_column("rate_derived").to_list() == [True, False, True]


def test_every_format_has_a_real_example_line_it_reads() -> None:
    for name, fmt in FORMATS.items():
        if name in ("gcloud",):
            continue
        # a layout is learned from a file's repetition: one line teaches none (test_learned_layout.py reads files)
        if name != "layout":
            assert fmt.sniff(pl.Series([fmt.example])) == 1, name
        # The one-pass gate lets every format's lines through (an unknown file costs that pass).
        assert pl.Series([fmt.example]).str.contains(GATE).item(), name


def test_slim_sec_per_step_is_local_only() -> None:
    got = parse(["INFO:tensorflow:global step 822: loss = 1.9421 (18.507 sec/step)"])
    row = got.steps.select("step", "loss", "global_steps_per_s", "local_steps_per_s", "format").row(0)
    assert row == (822, 1.9421, None, 1 / 18.507, "slim")


def test_od_api_step_time_is_the_jobs() -> None:
    got = parse(["Step 20900 per-step time 11.124s loss=1.705"])
    # 1 / 11.124 = 0.0898957
    assert got.steps.select("step", "loss", "global_steps_per_s").row(0) == (20900, 1.705, 1 / 11.124)


def test_od_api_step_alone_at_its_own_time_is_a_record_and_rates_are_derived() -> None:
    glog = "I0322 {} 140231166109440 model_lib_v2.py:652] "
    lines = [
        glog.format("02:42:07.385901") + "Step 700",  # a stored copy cut after the step (case03)
        glog.format("03:17:01.545832") + "Step 800 per-step time 21.946s loss=0.337",
        glog.format("03:52:00.000000") + "Step 900",
        "Step 1000",  # cut, and no time of its own: nothing says when
        glog.format("04:27:00.000000") + "Step 1100 per-step time 2",  # cut inside the time figure
    ]
    got = parse(lines, year=2021)
    # Newest first (a console copy) reads the same: the rates come from the times, not line order.
    columns = ["step", "global_steps_per_s", "rate_derived", "timestamp"]
    assert parse(lines[::-1], year=2021).steps.select(columns).sort("step").equals(got.steps.select(columns))
    rows = got.steps.select("step", "global_steps_per_s", "loss", "rate_derived", "timestamp", "format").rows()
    at = datetime(2021, 3, 22, 3, 17, 1, 545832, tzinfo=UTC)
    assert rows[0] == (700, None, None, False, datetime(2021, 3, 22, 2, 42, 7, 385901, tzinfo=UTC), "od-api-tf2")
    # Step 800 prints its per-step time: 1 / 21.946 s is kept, not (800-700) / 2094.159931 s.
    assert rows[1] == (800, 1 / 21.946, 0.337, False, at, "od-api-tf2")
    # Step 900 prints none: (900 - 800) / (03:52:00 - 03:17:01.545832 = 2098.454168 s) = 0.0476541.
    assert rows[2][0] == 900 and rows[2][3] is True
    assert abs(rows[2][1] - 100 / 2098.454168) < 1e-12
    assert len(rows) == 3
    cut = "a 'Step N per-step time Xs loss=Y' line cut off or with fields missing"
    assert got.rejects.select("source_offset", "reason", "raw").rows() == [
        (4, cut, "Step 1000"),
        (5, cut, "Step 1100 per-step time 2"),
    ]


def test_tf_cnn_benchmarks_joins_the_global_step_line() -> None:
    got = parse(
        [
            "2017-12-07 19:34:21,283 INFO 31 global step 381280",
            "2017-12-07 19:34:21,942 INFO 31 47650\timages/sec: 198.1 +/- 0.1 (jitter = 18.9)\t2.359\t0.617\t0.781",
        ]
    )
    assert got.steps.select("step", "local_step", "examples_per_s", "global_steps_per_s", "timestamp").rows() == [
        (381280, 47650, 198.1, None, datetime(2017, 12, 7, 19, 34, 21, 942000, tzinfo=UTC))
    ]


def test_tensorpack_epoch_rate_from_its_bar() -> None:
    got = parse(
        [
            "100%|#####|5000/5000[51:14<00:00, 0.66it/s]",
            "[0807 11:46:26 @base.py:210] Epoch 96 (global_step 955000) finished, time:3074.13 sec.",
        ],
        year=2017,
    )
    # 5000 iterations / 3074.13 s = 1.62648 steps/s, derived; not tqdm's smoothed 0.66 it/s.
    row = got.steps.select("step", "interval_s", "global_steps_per_s", "rate_derived", "timestamp").row(0)
    assert row == (955000, 3074.13, 5000 / 3074.13, True, datetime(2017, 8, 7, 11, 46, 26, tzinfo=UTC))


def test_tensorfx_local_counters_have_no_global_step() -> None:
    got = parse(
        [
            "INFO: Global steps: 1000; Duration: 1 sec; Throughput: 3643.1 instances/sec; Loss: 0.492",
            "I  Run: 0.00 sec; Steps: 19100; Duration: 194 sec; Throughput: 491.5 instances/sec ",
            "INFO: Global steps: 1172; Evaluation metric: 0.800",
        ]
    )
    assert got.steps.select("source_offset", "step", "local_step", "examples_per_s", "loss", "position").rows() == [
        (1, 1000, None, 3643.1, 0.492, None),
        (2, None, 19100, 491.5, None, 2),
    ]


def test_dlrm_iterations_and_dist_mnist_workers() -> None:
    got = parse(["Finished training it 32/150 of epoch 1, 460.74 ms/it, loss 0.515942, accuracy 75.517 %[0] "])
    # epoch 1 of 150 its: global step 1*150 + 32 = 182; 1000 / 460.74 ms = 2.17042 steps/s
    assert got.steps.select("step", "global_steps_per_s", "accuracy").row(0) == (182, 1000 / 460.74, 0.75517)
    got = parse(
        [
            "1514344770.680242: Worker 2: training step 2 done (global step: 2)",
            "1514344770.693580: Worker 2: training step 3 done (global step: 8)",
        ]
    )
    rows = got.steps.select("role", "task_index", "step", "local_step", "global_steps_per_s", "rate_derived").rows()
    assert rows[0] == ("worker", 2, 2, 2, None, False)
    # (8 - 2) / (0.693580 - 0.680242 = 0.013338 s) = 449.84; the clock is read to the microsecond
    assert rows[1][:4] == ("worker", 2, 8, 3) and abs(rows[1][4] - 6 / 0.013338) < 1e-6 * 449.84 * 10
