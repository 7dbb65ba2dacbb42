"""The training state on disk: restore it when a run starts again, save it every N steps.

A checkpoint holds the model's weights, Adam's slots and the global step
(``tf.train.Checkpoint`` of the :mod:`tierscope.trainer.model` module), so a task started again
on the same ``model_dir`` resumes at the step saved. Every save and restore is a run event
(:mod:`tierscope.contract`): ``checkpoint_begin`` / ``checkpoint_end`` around a save (``step``: the
global step saved, ``detail``: its path and seconds), ``restored`` with the step restored; goodput
(:mod:`tierscope.analysis.goodput`) classifies stalls and values wasted progress by them.

Who writes: one process, or the parameter-server coordinator, writes ``model_dir``. Under
``MultiWorkerMirroredStrategy`` every task must save (a save may run collective ops), so a task
other than the chief writes to a temporary folder it deletes at once, as TensorFlow's
multi-worker guide does; every task restores from ``model_dir``.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tierscope.contract import CHECKPOINT_BEGIN, CHECKPOINT_END, RESTORED
from tierscope.trainer.steplog import StepLog

#: Checkpoints kept in ``model_dir`` (older ones are deleted as new ones are written).
KEEP = 2


class Checkpointer:
    """Saves and restores ``net`` (a ``tf.Module`` with a ``global_step`` variable) in ``model_dir``.

    ``writes``: whether this task's saves go to ``model_dir`` (False: a mirrored worker's go to a
    temporary folder). ``before_save`` runs first (the coordinator waits for the steps it scheduled).
    """

    def __init__(
        self,
        net: Any,
        model_dir: Path,
        log: StepLog,
        writes: bool = True,
        before_save: Callable[[], None] | None = None,
    ) -> None:
        import tensorflow as tf

        self.net, self.model_dir, self.log, self.writes = net, Path(model_dir), log, writes
        self.before_save = before_save
        self.checkpoint = tf.train.Checkpoint(model=net)
        self.manager = tf.train.CheckpointManager(self.checkpoint, str(self.model_dir), max_to_keep=KEEP)

    def restore(self) -> int:
        """Restore the latest checkpoint of ``model_dir`` if there is one (a ``restored`` event with its
        step); return the global step the task starts from (0 without a checkpoint)."""
        latest = self.manager.latest_checkpoint
        if latest is None:
            return 0
        self.checkpoint.restore(latest).assert_existing_objects_matched()
        step = int(self.net.global_step.numpy())
        self.log.event(RESTORED, step=step, detail={"checkpoint": latest})
        return step

    def save(self) -> int:
        """Save the training state now, between a ``checkpoint_begin`` and a ``checkpoint_end`` event;
        returns the global step saved."""
        if self.before_save is not None:
            self.before_save()
        step = int(self.net.global_step.numpy())
        self.log.event(CHECKPOINT_BEGIN, step=step)
        start = time.perf_counter()
        if self.writes:
            path = self.manager.save(checkpoint_number=step)
        else:
            scratch = tempfile.mkdtemp(prefix="tierscope-ckpt-")
            try:
                path = self.checkpoint.write(str(Path(scratch) / "ckpt"))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        seconds = time.perf_counter() - start
        self.log.event(CHECKPOINT_END, step=step, detail={"path": path, "seconds": round(seconds, 6)})
        return step
