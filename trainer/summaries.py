"""TensorBoard event files from the reference trainer: the scalars Keras' ``TensorBoard`` callback writes.

With ``update_freq=N`` and ``write_steps_per_second=True`` the callback writes, every N global
batches, ``batch_steps_per_second``, then ``batch_<metric>`` for each metric (``batch_loss``,
``batch_accuracy``), at the global batch count, into ``<log_dir>/train/``. The trainer writes the
same tags at each step record it logs, with ``tf.summary``, one directory per task:
``DIR/<role>_<index>/train/`` (``DIR/chief_0/train/events.out.tfevents.*``), the layout
:mod:`tierscope.collector.sources.tfevents` reads a task from. One difference: Keras' rate is one
batch's (1 / its seconds); here it is the global steps/s over the logging interval, the step log's
own figure, so both sources give one steady rate. It has no epochs, so no ``epoch_*`` tags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def task_dir(root: Path, role: str, index: int) -> Path:
    """Where task ``role``/``index`` writes: ``root/<role>_<index>/train``."""
    return root / f"{role}_{index}" / "train"


class SummaryLog:
    """One task's event file under ``root`` (see the module doc). Imports TensorFlow."""

    def __init__(self, root: Path, role: str, index: int) -> None:
        import tensorflow as tf

        self._tf: Any = tf
        self._writer = tf.summary.create_file_writer(str(task_dir(root, role, index)))
        # The first summary call sets TensorFlow's machinery up (most of a second); done here,
        # writing nothing, it no longer delays the first record's wall time behind the step log's.
        with self._writer.as_default(), tf.summary.record_if(False):
            tf.summary.scalar("batch_loss", 0.0, step=0)

    def step(self, step: int, loss: float, accuracy: float, global_steps_per_s: float) -> None:
        """Write one logged step's scalars (steps/s; loss and accuracy on the step's batch)."""
        summary = self._tf.summary
        with self._writer.as_default():
            summary.scalar("batch_steps_per_second", global_steps_per_s, step=step)
            summary.scalar("batch_loss", loss, step=step)
            summary.scalar("batch_accuracy", accuracy, step=step)
        # Each record on disk at once (TensorFlow would wait up to two minutes): a killed task
        # loses at most the record being written, and a collect meanwhile sees the file grow.
        self._writer.flush()

    def close(self) -> None:
        """Flush and close the file (TensorFlow otherwise flushes every two minutes)."""
        self._writer.flush()
        self._writer.close()
