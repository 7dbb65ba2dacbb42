"""The reference TensorFlow trainer (installed by ``tierscope[trainer]``).

:func:`train_local` runs a job on this machine as ``tierscope train local`` does, :func:`launch_local`
the same from a :class:`TrainConfig` and a topology; :func:`run_task` is one task of a job. The
names are imported on first use: every TensorFlow task imports this package, and pays for nothing
it does not run.
"""

from __future__ import annotations

from tierscope.reexport import TYPE_CHECKING, reexport_lazily

if TYPE_CHECKING:
    from tierscope.trainer.errors import TrainerError
    from tierscope.trainer.launch import LocalRun, launch_local, train_local
    from tierscope.trainer.train import TrainConfig, TrainResult, run_task

_ORIGINS = {
    "train_local": "tierscope.trainer.launch",
    "launch_local": "tierscope.trainer.launch",
    "LocalRun": "tierscope.trainer.launch",
    "TrainConfig": "tierscope.trainer.train",
    "TrainResult": "tierscope.trainer.train",
    "run_task": "tierscope.trainer.train",
    "TrainerError": "tierscope.trainer.errors",
}

__all__ = [
    "LocalRun",
    "TrainConfig",
    "TrainResult",
    "TrainerError",
    "launch_local",
    "run_task",
    "train_local",
]

__getattr__, __dir__ = reexport_lazily(__name__, _ORIGINS)
