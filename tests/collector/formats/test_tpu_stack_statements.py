"""Statements of TPU and TensorFlow 2 / Keras 3 logs: the order TPUEstimator prints its reports in, the bar of
another work after ``model.fit`` returned, and IPython's traceback with TensorFlow's graph-error report after it.
Every line is quoted from a public log (the source in each test's comment)."""

from __future__ import annotations

import polars as pl
import pytest

from tests.support.formats_support import endings, parse

# mesh-tensorflow T5 (PTT5) pretraining on a Cloud TPU, a notebook's output in the public code index: TPUEstimator
# prints each report after the record it reports (iterations_per_loop = 100).
TPU_ORDER = [
    "INFO:tensorflow:Outfeed finished for iteration (0, 0)",
    "INFO:tensorflow:loss = 0.3671875, step = 1000000",
    "INFO:tensorflow:Enqueue next (100) batch(es) of data to infeed.",
    "INFO:tensorflow:Dequeue next (100) batch(es) of data from outfeed.",
    "INFO:tensorflow:Outfeed finished for iteration (1, 37)",
    "INFO:tensorflow:loss = 0.31445312, step = 1000100 (45.773 sec)",
    "INFO:tensorflow:global_step/sec: 2.18469",
    "INFO:tensorflow:examples/sec: 279.641",
    "INFO:tensorflow:Enqueue next (100) batch(es) of data to infeed.",
    "INFO:tensorflow:Dequeue next (100) batch(es) of data from outfeed.",
    "INFO:tensorflow:Outfeed finished for iteration (2, 84)",
    "INFO:tensorflow:loss = 0.26171875, step = 1000200 (41.178 sec)",
    "INFO:tensorflow:global_step/sec: 2.42847",
    "INFO:tensorflow:examples/sec: 310.844",
]


def test_tpuestimator_reports_after_their_records_are_those_records_rates() -> None:
    got = parse(TPU_ORDER).steps.select("source_offset", "step", "interval_s", "global_steps_per_s", "examples_per_s")
    # 2.18469 steps/s x 45.773 s = 100.0 steps = 1000100 - 1000000: the report after line 6 is line 6's; the next
    # record's seconds would make it 2.18469 x 41.178 = 89.96 steps. Likewise 2.42847 x 41.178 = 100.0 for line 12.
    # No report is left without its record, so no step-less record: 3 records for 3 loss lines.
    assert got.rows() == [
        (2, 1000000, None, None, None),
        (6, 1000100, 45.773, 2.18469, 279.641),
        (12, 1000200, 41.178, 2.42847, 310.844),
    ]


def test_reports_before_their_records_keep_the_estimators_order() -> None:
    # OpenNMT-tf v1 under Estimator (OpenNMT/OpenNMT-tf issue 50, getao, 2018-01-18), its first 15 lines: the
    # report after the record of step 1101 states another period than that record's (2.08646 x 47.340 s = 98.77
    # steps, not the 100 between steps 1001 and 1101: 1.2 % off), so the Estimator's order stands: each record
    # takes the last report before it, the reports after the last one stand alone, and the first record takes its
    # task's period over its seconds (2.13073 x 47.340 = 100.87 and 2.14416 x 47.280 = 101.38 steps: 101 / 46.707
    # s = 2.1624 steps/s).
    lines = [
        "INFO:tensorflow:loss = 48.18139, step = 1001 (46.707 sec)",
        "INFO:tensorflow:global_step/sec: 2.09447",
        "INFO:tensorflow:words_per_sec/features:0: 3275.1",
        "INFO:tensorflow:words_per_sec/labels:0: 3610.39",
        "INFO:tensorflow:global_step/sec: 2.13073",
        "INFO:tensorflow:words_per_sec/features:0: 2945.64",
        "INFO:tensorflow:words_per_sec/labels:0: 3282.78",
        "INFO:tensorflow:loss = 61.09418, step = 1101 (47.340 sec)",
        "INFO:tensorflow:global_step/sec: 2.08646",
        "INFO:tensorflow:words_per_sec/features:0: 3127.07",
        "INFO:tensorflow:words_per_sec/labels:0: 3464.33",
        "INFO:tensorflow:global_step/sec: 2.14416",
        "INFO:tensorflow:words_per_sec/features:0: 3226.2",
        "INFO:tensorflow:words_per_sec/labels:0: 3564.5",
        "INFO:tensorflow:loss = 110.21961, step = 1201 (47.280 sec)",
    ]
    got = parse(lines).steps.select("source_offset", "step", "global_steps_per_s")
    assert got.rows() == [
        (1, 1001, pytest.approx(101 / 46.707)),
        (2, None, 2.09447),
        (8, 1101, 2.13073),
        (9, None, 2.08646),
        (15, 1201, 2.14416),
    ]


# Keras 3 (JAX backend) on a Cloud TPU v6e-1, keras-team/keras-io examples/keras_rs/md/distributed_embedding_jax.md
# (2380eb4): the last epoch of fit, then model.evaluate()'s bar.
KERAS3_FIT_THEN_EVALUATE = [
    "Epoch 5/5",
    "",
    "312/312 ━━━━━━━━━━━━━━━━━━━━ 0s 8us/step - loss: 0.0928 - root_mean_squared_error: 0.3047",
    "",
    "<keras.src.callbacks.history.History at 0x76e69775bc10>",
    "```",
    "</div>",
    "",
    "Same for `model.evaluate()`.",
    "",
    '<div class="k-default-codeblock">',
    "```",
    "78/78 ━━━━━━━━━━━━━━━━━━━━ 2s 21ms/step - loss: 0.0999 - root_mean_squared_error: 0.3161",
]


def test_a_bar_of_another_total_after_the_epochs_training_bar_is_no_record() -> None:
    got = parse(KERAS3_FIT_THEN_EVALUATE).steps.select("source_offset", "step", "global_steps_per_s", "loss")
    # epoch 5's bar: step (5 - 1) x 312 + 312 = 1560, 1 / 8e-6 s = 125000 steps/s; the 78/78 bar (evaluate, no
    # Epoch line before it, another total) is no training record.
    assert got.rows() == [(3, 1560, 125000.0, 0.0928)]


def test_an_evaluation_bar_counting_samples_is_no_record_either() -> None:
    # tf.keras 1.13 fit then evaluate on numpy arrays (a TF 1.13.1 Keras MNIST exercise in the public code index):
    # the epoch's bar counts 60000 samples (1e6 / 390 us = 2564.1 examples/s), evaluate's 10000.
    got = parse(
        [
            "    Epoch 5/5",
            "    60000/60000 [==============================] - 23s 390us/sample - loss: 0.0271",
            "    10000/10000 [==============================] - 1s 112us/sample - loss: 0.0598",
        ]
    ).steps.select("source_offset", "examples_per_s")
    assert got.rows() == [(2, pytest.approx(1e6 / 390))]


def test_every_epochs_own_bar_stays_a_record() -> None:
    # near miss: a new Epoch line starts a new epoch, whose bar is its training bar whatever its total (a last
    # epoch cut short by steps_per_epoch); tf.keras' bars (yolov3-tf2 issue 187's epoch line) kept as printed
    got = parse(
        [
            "Epoch 1/2",
            "11/11 [==============================] - 13s 1s/step - loss: 10.1",
            "Epoch 2/2",
            "7/7 [==============================] - 7s 1s/step - loss: 9.9",
        ]
    ).steps.select("step")
    # (1 - 1) x 11 + 11 = 11; (2 - 1) x 7 + 7 = 14
    assert got.get_column("step").to_list() == [11, 14]


# A Colab TPU run of Keras (TensorFlow 2.18), googlecolab/colabtools issue 5124 (revanthpobala, 2025-02-21).
IPYTHON = [
    "Epoch 1/60",
    "---------------------------------------------------------------------------",
    "NotFoundError                             Traceback (most recent call last)",
    "[<ipython-input-41-e0fb761c012f>](https://localhost:8080/#) in <cell line: 0>()",
    "     25 ",
    "---> 27 experiment = train_model(",
    "     28     'baseline', model, train_features, train_labels, settings",
    "     29 )",
    "",
    "2 frames",
    "[/usr/local/lib/python3.11/dist-packages/tensorflow/python/eager/execute.py](https://localhost:8080/#) in "
    "quick_execute(op_name, num_outputs, inputs, attrs, ctx, name)",
    "---> 59   except TypeError as e:",
    "",
    "NotFoundError: Graph execution error:",
    "",
    "Detected at node StatefulPartitionedCall defined at (most recent call last):",
]


def test_an_ipython_traceback_ends_at_the_line_of_the_class_it_names() -> None:
    # its frames are not indented ('2 frames', the Markdown-linked paths): the exception line is the first that
    # starts with 'NotFoundError:', the class its first line names; TensorFlow's 'Detected at node ... (most recent
    # call last):' after it is the same error's report, not the log going on
    assert endings(*IPYTHON) == [("failed", "NotFoundError: Graph execution error:")]


def test_an_ipython_traceback_cut_before_its_exception_line_still_fails_the_run() -> None:
    # keras-team/keras issue 19448 (innat, 2024-04-05), Keras 3.0.5 on a TPU VM, the quote cut in its first frame
    assert endings(
        "Epoch 1/3",
        "---------------------------------------------------------------------------",
        "NotFoundError                             Traceback (most recent call last)",
        "Cell In[6], line 11",
        "      9 x = np.random.random((1000, 32))",
        "     10 y = np.random.random((1000, 1))",
        "---> 11 model.fit(x, y, epochs=3)",
    ) == [("failed", "NotFoundError (its traceback ends the log, its last line missing)")]


def test_a_sentence_naming_a_traceback_opens_none() -> None:
    # near miss: prose about a traceback (words after it) is no IPython traceback's first line
    got = parse(["NotFoundError Traceback (most recent call last) shows the TPU was not found", "Epoch 1/3"])
    assert got.events.filter(pl.col("event") == "failed").height == 0


def test_the_oom_line_after_a_graph_execution_error_is_the_cause() -> None:
    # a Keras fit ended by TensorFlow's ResourceExhaustedError (a Celery worker's log, the dev set's real log 37):
    # the exception's line says only "Graph execution error:", the OOM line after it says what failed
    lines = [
        "Epoch 1/20",
        "Traceback (most recent call last):",
        '  File "/app/train.py", line 40, in fit',
        "    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,",
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:",
        "",
        "OOM when allocating tensor with shape[16,64,64,64] and type float on "
        "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
    ]
    events = parse(lines).events
    failed = events.filter(pl.col("event") == "failed")["reason"].to_list()
    assert failed == [lines[-1]]
