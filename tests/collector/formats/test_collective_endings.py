"""A process group's ending (collectives.py) fails the run with its most telling line as the cause: NCCL's watchdog
on a collective past its timeout, what ProcessGroupNCCL says before it takes the process down, its heartbeat
monitor, Gloo's timeout; also glued after the bar the process was drawing, the bar staying a record. Near-misses:
NCCL's INFO and WARN lines about timeouts and retries, and an ending that more steps follow (an elastic restart)."""

from __future__ import annotations

import pytest

from tests.support.formats_support import endings, parse

#: A step record before an ending, in a shape every build reads (TensorFlow's hook).
STEP = "INFO:tensorflow:loss = 0.5, step = 100 (2.0 sec)"

#: pytorch/pytorch issue 118369 (comment of 2024-02-17): NeMo's Lightning bar with the watchdog's line glued to it.
_GLUED = (
    "Epoch 0:   6%|██      | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6, v_num=95nc, "
    "reduced_train_loss=2.590, global_step=3.2e+4, consumed_samples=2.56e+7][E ProcessGroupNCCL.cpp:458] [Rank 0] "
    "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, Timeout(ms)=1800000) "
    "ran for 25624887 milliseconds before timing out."
)


def test_a_watchdog_glued_to_the_bar_fails_the_run_and_the_bar_stays_a_record() -> None:
    got = parse([_GLUED])
    # the bar's counter: step 32040 at 1.37 it/s
    assert got.steps.select("step", "global_steps_per_s").rows() == [(32040, 1.37)]
    assert got.events.select("event", "reason").rows() == [
        (
            "failed",
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96120, OpType=ALLREDUCE, "
            "Timeout(ms)=1800000) ran for 25624887 milliseconds before timing out.",
        )
    ]


def test_a_bar_with_no_failure_glued_to_it_hands_nothing_on() -> None:
    # near-miss: NCCL's INFO line glued to the bar (a socket closing, UniWorld's multi-node run) is no failure
    line = (
        "Steps:   0%|          | 1/500000 [12:44<14459:40:43, 104.11s/it, loss=0.36, lr=5e-6]"
        "n124-137-109:312247:326969 [0] NCCL INFO misc/socket.cc:829 -> 3"
    )
    got = parse([line])
    assert got.steps.get_column("step").to_list() == [1]
    assert got.events.height == 0


@pytest.mark.parametrize(
    ("lines", "reason"),
    [
        # the watchdog, then what the process group says before it aborts (XPixelGroup/BasicSR issue 737,
        # 2025-06-26; the tear-down lines as torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp logs them): the
        # watchdog's line names the collective, the most telling
        (
            [
                "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, "
                "Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
                "[rank1]:[E626 06:24:44.906457629 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] "
                "Exception (either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: "
                "811, last completed NCCL work: 807.",
                "[rank1]:[E626 06:24:44.906 ProcessGroupNCCL.cpp:630] [Rank 1] To avoid data inconsistency, we are "
                "taking the entire process down.",
            ],
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
            "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.",
        ),
        # only the tear-down in view (an excerpt that starts after the watchdog's line; PyTorch 1.x's header without
        # a time, a run of 2024-07-25 on NCCL 2.19.3 quoted in a public talk's slides): going down says more than
        # "failed or timed out"
        (
            [
                "[E ProcessGroupNCCL.cpp:481] Some NCCL operations have failed or timed out. Due to the asynchronous "
                "nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
                "[E ProcessGroupNCCL.cpp:487] To avoid data inconsistency, we are taking the entire process down.",
            ],
            "To avoid data inconsistency, we are taking the entire process down.",
        ),
        # the heartbeat monitor on a stuck watchdog (hiyouga/LlamaFactory issue 6953, 2025-02-16)
        (
            [
                "[rank144]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 144] Heartbeat monitor timed out! Process will "
                "be terminated after dumping debug info. workMetaList_.size()=1",
            ],
            "Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
        ),
        # Gloo's receive past its timeout (pytorch/gloo gloo/transport/tcp/unbound_buffer.cc's message)
        (
            [
                "RuntimeError: [/opt/conda/conda-bld/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc"
                ":84] Timed out waiting 1800000ms for recv operation to complete",
            ],
            "RuntimeError: [/opt/conda/conda-bld/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc"
            ":84] Timed out waiting 1800000ms for recv operation to complete",
        ),
    ],
)
def test_a_process_group_ending_fails_the_run_with_its_most_telling_line(lines: list[str], reason: str) -> None:
    assert endings(STEP, *lines) == [("failed", reason)]


@pytest.mark.parametrize(
    "line",
    [
        # NCCL stating its timeout settings and retrying: no ending
        "node-1:178:828 [0] NCCL INFO NCCL_IB_TIMEOUT set by environment to 22.",
        "NCCL WARN Call to connect returned Connection refused, retrying",
        "[W ProcessGroupNCCL.cpp:1856] Warning: TORCH_NCCL_BLOCKING_WAIT is set, the timeout is 1800000 ms",
        # a tip or a FAQ at a log's end that names the errors in passing
        "Tip: an NCCL error usually means a network fault; see docs.",
        "# FAQ: if you see 'NCCL error' or 'we are taking the entire process down', raise the timeout",
    ],
)
def test_a_line_about_timeout_settings_is_no_ending(line: str) -> None:
    assert endings(STEP, line) == []


def test_an_ending_that_steps_follow_is_recovered_from() -> None:
    # an elastic restart: the watchdog took the process down, the relaunched workers step on
    lines = [
        STEP,
        "[rank0]:[E606 09:09:08.1 ProcessGroupNCCL.cpp:698] [Rank 0] To avoid data inconsistency, we are taking "
        "the entire process down.",
        "INFO:tensorflow:loss = 0.4, step = 200 (2.0 sec)",
    ]
    assert parse(lines).events.height == 0


@pytest.mark.parametrize(
    "line",
    [
        # PyTorch 1.x's c10d error as torch.distributed raises it (facebookresearch/fairseq issue 3412, 2021):
        # "RuntimeError: NCCL error in: <file>:<line>, unhandled system error, NCCL version 2.7.8"
        "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1614378083779/work/torch/lib/c10d/"
        "ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8",
        # NCCL 1.x/2.0's own wording, "NCCL Error 2: unhandled system error" (its error string table)
        "NCCL Error 2: unhandled system error",
    ],
)
def test_an_nccl_error_as_the_backends_print_it_fails_the_run(line: str) -> None:
    assert len(endings(STEP, line)) == 1
