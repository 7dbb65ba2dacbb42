"""Launchers' own prefixes and endings around a trainer's lines: SkyPilot's node prefix in Ray's style, a host column
naming a pod's role and index (pdsh under DeepSpeed's multi-node launcher), torchrun's elastic agent shutting its
workers down, Slurm's cancel glued to the bar it stopped. Lines quoted from public logs (cited beside each); each
kind read in two sources' words, its near-misses refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.collector.formats.test_envelopes import read
from tests.support.formats_support import endings, frame, parse
from tierscope.collector.formats.envelopes import split_envelopes

# Keras 2 fit's final bars of two epochs (SkyPilot's Cloud TPU docs page, tpu_node_mnist.yaml's output, 2025)
_EPOCHS = [
    "Epoch 9/10",
    "58/58 [==============================] - 1s 19ms/step - loss: 0.1181 - sparse_categorical_accuracy: 0.9646",
    "Epoch 10/10",
    "58/58 [==============================] - 1s 20ms/step - loss: 0.1139 - sparse_categorical_accuracy: 0.9655",
]


@pytest.mark.parametrize(
    ("line", "role", "index", "message"),
    [
        # SkyPilot's multi-node prefixes (its Cloud TPU docs page: a v6e-32 pod's four hosts, 2025)
        ("(head, rank=0, pid=17894) ***** train metrics *****", "worker", 0, "***** train metrics *****"),
        ("(worker1, rank=1, pid=15406, ip=10.164.0.57)   train_loss               =     10.1527", "worker", 1,
         "  train_loss               =     10.1527"),
        # its Go executor's order, the ip before the pid (skypilot-org/skypilot, nodePrefix)
        ("(worker2, rank=2, ip=10.100.10.12, pid=2769) Worker nodes", "worker", 2, "Worker nodes"),
        # a single node's task name, hyphenated, and the newer one with a comma: no rank, no role
        ("(mnist-tpu-node pid=28961) Epoch 10/10", None, None, "Epoch 10/10"),
        ("(task, pid=17499) ***** train metrics *****", None, None, "***** train metrics *****"),
        # Ray's own, as before (a Ray docs example's vicuna-13b run, 2025-10-15)
        ("(RayTrainWorker pid=4048, ip=10.0.130.188) Exiting prefetcher's background thread", None, None,
         "Exiting prefetcher's background thread"),
        # a host column naming a pod's role and index (T9K DeepSpeedJob guide, 2023-06-21) and a hostfile's bare name
        # (stas00/ml-engineering's guide to emulating nodes, 2022-09-08)
        ("actor-multi-node-worker-1: saving the final model ...", "worker", 1, "saving the final model ..."),
        ("worker-0: dist.get_rank()=0, local_rank=0", "worker", 0, "dist.get_rank()=0, local_rank=0"),
        ("master-0: hi", "master", 0, "hi"),
    ],
)  # fmt: skip
def test_launcher_prefixes_name_the_task_and_leave_the_message(
    line: str, role: str | None, index: int | None, message: str
) -> None:
    got = read(line)
    assert (got["line"], got.get("role"), got.get("task_index")) == (message, role, index)


@pytest.mark.parametrize(
    "line",
    [
        "(pid file written to /tmp/x.pid) step 3",  # words, then no pid=
        "(rank=0) step 3",  # a rank with no pid is no launcher's prefix
        "resnet-50: step 3",  # a name with a number that names no role
        "the-worker-is-3: x",  # the role is not followed by its index
        "worker-3 finished: x",  # no colon after the index
    ],
)
def test_near_misses_of_launcher_prefixes_keep_their_text(line: str) -> None:
    got = read(line)
    assert got["line"] == line and got.get("envelope") is None


def test_keras_epochs_read_the_same_behind_a_skypilot_task_prefix() -> None:
    wrapped = [f"(mnist-tpu-node pid=28961) {text}" for text in _EPOCHS]
    bare = parse(_EPOCHS).steps.select("step", "global_steps_per_s").rows()
    # two epochs' final bars: 1000/19 ms a step = 52.63 steps/s, 1000/20 = 50
    assert [r[1] for r in bare] == pytest.approx([1000 / 19, 50.0])
    assert parse(wrapped).steps.select("step", "global_steps_per_s").rows() == bare


def test_four_hosts_summaries_are_four_tasks() -> None:
    lines = [
        "(head, rank=0, pid=17894)   train_runtime            =  0:11:13.18",
        "(worker1, rank=1, pid=15406, ip=10.164.0.57)   train_runtime            =  0:11:15.08",
        "(worker2, rank=2, pid=16552, ip=10.164.0.58)   train_runtime            =  0:11:15.61",
        "(worker3, rank=3, pid=17469, ip=10.164.0.59)   train_runtime            =  0:11:15.10",
    ]
    body, facts = split_envelopes(frame(lines), 2025)
    assert body.get_column("tag").to_list() == ["worker/0", "worker/1", "worker/2", "worker/3"]
    assert facts is not None and set(facts.get_column("envelope").to_list()) == {"ray"}


def test_deepspeed_timer_lines_behind_a_pod_host_column_are_timed() -> None:
    # T9K DeepSpeedJob guide (k logs actor-multi-node-worker-0, run of 2023-06-21)
    head = (
        "actor-multi-node-worker-0: [2023-06-21 {t}] [INFO] [timer.py:199:stop] epoch=1/micro_step={m}/global_step={n}"
    )
    tail = ", RunningAvgSamplesPerSec=6.60, CurrSamplesPerSec=6.37, MemAllocated=7.79GB, MaxMemAllocated=10.55GB"
    lines = [
        head.format(t="03:45:55,424", m=926, n=1880) + tail,
        head.format(t="03:46:19,254", m=936, n=1890) + tail,
        head.format(t="03:46:43,214", m=946, n=1900) + tail,
    ]
    got = parse(lines, year=2023).steps
    assert got.get_column("step").to_list() == [1880, 1890, 1900]
    assert set(got.get_column("role").to_list()) == {"worker"}
    assert set(got.get_column("task_index").to_list()) == {0}
    # the logger's time under the host column: 1880 at 03:45:55.424, 1900 at 03:46:43.214 (20 steps in 47.79 s)
    assert got.get_column("timestamp").to_list()[::2] == [
        datetime(2023, 6, 21, 3, 45, 55, 424000, tzinfo=UTC),
        datetime(2023, 6, 21, 3, 46, 43, 214000, tzinfo=UTC),
    ]


STEP = "INFO:tensorflow:loss = 0.5, step = 100 (2.0 sec)"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # the agent sent a death signal (a hung-up terminal: modelscope/ms-swift issue 64, 2023-09-10)
        ("WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers",
         "Received 1 death signal, shutting down workers"),
        ("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2919043 closing signal SIGHUP",
         "Sending process 2919043 closing signal SIGHUP"),
        # the others' closing signal after a worker failed, behind PyTorch 2.4's glog header (hiyouga/LlamaFactory
        # issue 6590, 2025-01-09)
        ("W0109 19:38:21.693000 1513405 /opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/"
         "multiprocessing/api.py:897] Sending process 1513408 closing signal SIGTERM",
         "Sending process 1513408 closing signal SIGTERM"),
    ],
)  # fmt: skip
def test_torchrun_agent_shutting_its_workers_down_fails_the_run(line: str, reason: str) -> None:
    assert endings(STEP, line) == [("failed", reason)]


def test_the_closing_signal_glued_to_an_evaluation_bar_fails_the_run() -> None:
    # hiyouga/LlamaFactory issue 6590 (2025-01-09): the Trainer's evaluation, its bar, the agent's line glued to it
    lines = [
        " 66%|██████▌   | 500/760 [3:05:21<1:36:57, 22.37s/it][INFO|trainer.py:4128] 2025-01-09 19:38:13,614 >> ",
        "***** Running Evaluation *****",
        "[INFO|trainer.py:4130] 2025-01-09 19:38:13,614 >>   Num examples = 136",
        "  0%|          | 0/17 [00:00<?, ?it/s]",
        " 12%|█▏        | 2/17 [00:03<00:26,  1.79s/it]W0109 19:38:21.682000 1513405 /opt/conda/lib/python3.10/"
        "site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process 1513407 closing signal "
        "SIGTERM",
    ]
    got = parse(lines, year=2025)
    # one training record (500 at 22.37 s/it = 0.0447 steps/s); the bar, the glog header are no part of the cause
    assert got.steps.select("step", "global_steps_per_s").rows() == [(500, pytest.approx(1 / 22.37))]
    assert got.events.select("event", "reason").rows() == [("failed", "Sending process 1513407 closing signal SIGTERM")]


@pytest.mark.parametrize(
    "line",
    [
        "Sending process 3 results to the queue",  # no signal
        "closing signal handlers before exit",  # no process
        "Received SIGTERM: 15",  # a program's own handler, not the agent shutting workers down
    ],
)
def test_near_misses_of_the_agent_endings_are_no_ending(line: str) -> None:
    assert endings(STEP, line) == []


def test_an_elastic_restart_after_the_closing_signal_recovers() -> None:
    lines = [STEP, "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 77 closing signal SIGTERM"]
    assert parse([*lines, STEP.replace("100", "101")]).events.height == 0


def test_slurm_cancel_glued_to_the_bar_it_stopped_fails_the_run() -> None:
    # a PolymerGNN job's output (2022-04-14): the bar's last redraw, then Slurm's notice on the same line
    bar = " 20%|██        | 10/50 [1:44:58<7:00:04, 630.10s/it]"
    cancel = "slurmstepd: error: *** JOB 42221 ON clr1247 CANCELLED AT 2022-04-14T16:20:46 DUE TO TIME LIMIT ***"
    glued = " 22%|██▏       | 11/50 [1:55:26<6:49:05, 629.37s/it]" + cancel
    got = parse([bar, glued])
    # the bar before is a record (10 at 630.10 s/it = 0.001587 steps/s); the glued line is the failure, one outcome
    assert got.steps.select("step", "global_steps_per_s").rows() == [(10, pytest.approx(1 / 630.10))]
    assert got.events.select("event", "source_offset").rows() == [("failed", 2)]
    # a bar that ends with stars but names no cancel is still a record
    assert parse([bar, bar.replace("10/50", "11/50") + " *** note ***"]).steps.height == 2
