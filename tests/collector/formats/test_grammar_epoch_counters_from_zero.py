"""A step counter that starts again each epoch and counts from 0, with no total beside it, and a speed keyed with its
examples unit in parentheses. Lines quoted from a public run (cited); the steps are worked out by hand below."""

from __future__ import annotations

from tests.support.formats_support import read_lines

# DGL's GraphSAGE multi-GPU example as run in the SijingYu/GraphSAGE_MultiGPU repository (loss.md, its first run)
_RUN = [
    "Epoch 00000 | Step 00000 | Loss 6.1411 | Train Acc 0.0160 | Speed (samples/sec) nan | GPU 296.2 MB",
    "Epoch 00000 | Step 00020 | Loss 2.6650 | Train Acc 0.3400 | Speed (samples/sec) 43672.9658 | GPU 401.2 MB",
    "Epoch Time(s): 8.7072",
    "Epoch 00001 | Step 00000 | Loss 2.0791 | Train Acc 0.4730 | Speed (samples/sec) 41543.9028 | GPU 401.5 MB",
    "Epoch 00001 | Step 00020 | Loss 1.6148 | Train Acc 0.6040 | Speed (samples/sec) 42982.0896 | GPU 401.5 MB",
    "Epoch Time(s): 7.2513",
    "Epoch 00002 | Step 00000 | Loss 1.2396 | Train Acc 0.7040 | Speed (samples/sec) 42134.0261 | GPU 401.5 MB",
]


def test_a_step_counted_from_zero_in_each_epoch_gives_each_report_its_own_step() -> None:
    parsed = read_lines(*_RUN)
    got = parsed.steps.sort("source_offset")
    # the counter shows 0, so an epoch holds at least 20 + 1 = 21 steps: epoch e's step s is e x 21 + s, and epoch
    # 1's step 0 (21) is no copy of epoch 0's step 20 (20), as the largest shown alone (20) would make it
    assert got.get_column("step").to_list() == [20, 21, 41, 42]
    # each report's speed as logged (samples/s; no batch size stated, so no steps/s)
    assert got.get_column("examples_per_s").to_list() == [43672.9658, 41543.9028, 42982.0896, 42134.0261]
    # near-misses: the first report's speed is 'nan' (a reject naming it, no record), and 'Epoch Time(s)' lines
    # state an epoch's seconds beside step records, no record of their own; 'GPU 401.2 MB' is a size, no rate
    assert parsed.rejects.get_column("source_offset").to_list() == [1]
    assert 3 not in got.get_column("source_offset").to_list()
