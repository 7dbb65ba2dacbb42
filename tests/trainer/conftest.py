"""A finished run of a real TensorFlow cluster that several trainer tests read (never write to).

Starting the tasks' processes (TensorFlow's import, the cluster's handshake) is most of a local run's cost;
its steps take a few ms each. So tests that only check different things about the same kind of run read one
run, made once for the session; a test that kills, resumes or otherwise changes a run makes its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tierscope.trainer.launch import LocalRun


@dataclass(frozen=True)
class MirroredRun:
    """``run``: how the launcher ended it; ``tensorboard``: its event files (outside ``run.out``)."""

    run: LocalRun
    tensorboard: Path


@pytest.fixture(scope="session")
def mirrored_text_run(tmp_path_factory: pytest.TempPathFactory) -> MirroredRun:
    """``train local --workers 1``: a chief and a worker (MultiWorkerMirroredStrategy), 200 global steps, a text
    step log record every 20 (10 per task: steps 20, 40, ..., 200), event files beside it for TensorBoard, and
    neither checkpoints nor evaluations in the run (only the final save): the step log would record those as
    pauses that the event files cannot show. Run id ``mw-run``, directory ``.../mw-run``.

    A step of this cluster takes about 18 ms (both tasks busy): 200 steps cost a few CPU-s, half of what 400 did,
    and 10 records a task are what the tests count."""
    from tierscope.trainer.launch import train_local

    root = tmp_path_factory.mktemp("mirrored")
    out, tb = root / "runs" / "mw-run", root / "tb" / "mw-run"
    run = train_local(
        workers=1, steps=200, log_every_steps=20, log_format="text", out=out, run_id="mw-run", timeout=300,
        tensorboard=tb, checkpoint_every=0, eval_every=0,
    )  # fmt: skip
    return MirroredRun(run, tb)
