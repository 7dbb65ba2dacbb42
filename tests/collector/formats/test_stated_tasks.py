"""Tasks a job status states: the replicas a failure names, a TFJob's replica counts."""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.stated_tasks import stated_tasks


def test_each_replica_a_job_error_names_is_a_task() -> None:
    # One run-on errorMessage naming two replicas: worker 0 and worker 4 (not workers 0..4: only two are named).
    msg = (
        "The replica worker 0 exited with a non-zero status of 1. Termination reason: Error. "
        "The replica worker 4 ran out-of-memory and exited with a non-zero status of 9."
    )
    assert stated_tasks(pl.Series([msg])) == {"worker/0", "worker/4"}


def test_a_tfjob_replica_statuses_block_counts_each_types_tasks() -> None:
    # Worker: 6 active + 1 failed = 7 replicas, worker 0..6; PS 2 -> ps 0, 1; Chief listed without a count:
    # the role, its tasks unknown. The Conditions' lines above and the block's end are no replica types.
    lines = [
        "  Conditions:",
        "    Type:                  Failed",
        "  Replica Statuses:",
        "    Chief:",
        "    PS:",
        "      Active:  2",
        "    Worker:",
        "      Active:  6",
        "      Failed:  1",
        "Events:  <none>",
        "    Worker:",
        "      Active:  3",
    ]
    workers = {f"worker/{i}" for i in range(7)}
    assert stated_tasks(pl.Series(lines)) == {"chief", "ps/0", "ps/1"} | workers
