"""Ranks a message names itself (:mod:`tierscope.collector.formats.named_ranks`): several processes print their
step lines into one file with no launcher tag, each saying its rank or device in its own words. Each test quotes
short real lines of the kind (the source beside them), works the expected values out by hand in its comments, and
refuses a near-miss."""

from __future__ import annotations

from tests.support.formats_support import parse

#: torch_xla's test_train_mp_mnist on eight devices, pytorch/xla PR 4112 (2022-10-20): each device reports every step
_XLA = [
    "| Training Device=xla:0/2 Epoch=1 Step=0 Loss=2.30627 Rate=2269.54 GlobalRate=2269.16 Time=21:35:07",
    "| Training Device=xla:0/5 Epoch=1 Step=0 Loss=2.30627 Rate=55.19 GlobalRate=55.19 Time=21:35:07",
    "| Training Device=xla:1/0 Epoch=1 Step=0 Loss=2.30627 Rate=26.35 GlobalRate=26.35 Time=21:35:07",
    "| Training Device=xla:0/2 Epoch=1 Step=20 Loss=0.01571 Rate=798.11 GlobalRate=981.24 Time=21:35:09",
]
#: VISSL's log_hooks, facebookresearch/vissl issue 480 (2021-12-02): rank 0 prints alone, naming itself
_VISSL = [
    "INFO 2021-12-02 18:52:20,806 log_hooks.py: 277: Rank: 0; [ep: 0] iter: 57; lr: 0.71785; loss: 2.94718; "
    "btime(ms): 192; eta: 0:00:08; peak_mem(M): 4176;",
    "INFO 2021-12-02 18:52:20,935 log_hooks.py: 277: Rank: 0; [ep: 0] iter: 58; lr: 0.77805; loss: 2.93593; "
    "btime(ms): 191; eta: 0:00:08; peak_mem(M): 4176;",
]


def _tasks(lines: list[str]) -> list[tuple[str | None, int | None, int]]:
    steps = parse(lines).steps.sort("source_offset")
    return list(zip(steps["role"].to_list(), steps["task_index"].to_list(), steps["step"].to_list(), strict=True))


def test_devices_named_in_the_message_are_tasks_by_their_ordinal() -> None:
    # xla:0/2 is ordinal 2, xla:0/5 ordinal 5, xla:1/0 ordinal 0 (the number after the slash): three tasks at step 0,
    # not one record and two copies of it; device 2 reports step 20 too
    assert _tasks(_XLA) == [("worker", 2, 0), ("worker", 5, 0), ("worker", 0, 0), ("worker", 2, 20)]


def test_each_named_rank_keeps_its_own_clock() -> None:
    # device 2's two readings, 21:35:07 and 21:35:09, are 2 s apart: its step 20's interval; the other devices'
    # lines at 21:35:07 between them do not cut that interval short
    steps = parse(_XLA).steps.filter(step=20)
    assert steps.get_column("interval_s").to_list() == [2.0]


def test_a_rank_keyed_with_a_bare_number_and_its_world_size() -> None:
    # a hand-written loop naming its rank before the world size (rank 1 of 2): ranks 0 and 1
    lines = ["rank 0/2 step 10 loss 0.5 time 0.25s", "rank 1/2 step 10 loss 0.5 time 0.26s"]
    assert _tasks(lines) == [("worker", 0, 10), ("worker", 1, 10)]


def test_one_rank_naming_itself_is_one_task_read_as_written() -> None:
    # every report names rank 0: one process printing alone, no task given (as its file was read before)
    assert _tasks(_VISSL) == [(None, None, 57), (None, None, 58)]


def test_near_misses_name_no_rank() -> None:
    # a world size, a GPU count and a device type without its index name no reporting process: the two step lines
    # stay one task's (step 10 and 11), whatever the numbers beside the keys
    lines = [
        "world_size: 8 step 10 loss 0.5 time 0.25s",
        "num_gpus: 4 step 11 loss 0.5 time 0.25s",
        "Device: cuda step 12 loss 0.5 time 0.25s",
    ]
    assert _tasks(lines) == [(None, None, 10), (None, None, 11), (None, None, 12)]


def test_a_gpu_listing_in_the_header_names_no_rank() -> None:
    # nvidia-smi -L's listing before training names GPUs 0 and 1 with no measure: the step lines after it are one task's
    lines = ["GPU 0: Tesla V100-SXM2-16GB", "GPU 1: Tesla V100-SXM2-16GB", "step 10 loss 0.5 time 0.25s"]
    assert _tasks(lines) == [(None, None, 10)]
