"""``python -m tierscope.trainer.task``: one task of a run, its place in the cluster read from the environment.

The launcher (``tierscope train local``) and the cloud (AI Platform, Vertex AI) start every
task with the same arguments; ``TF_CONFIG`` or ``CLUSTER_SPEC`` says which task it is (see
:mod:`tierscope.trainer.roles`). The step log goes to stdout, and only the step log: everything
else written to stdout (Keras' "Downloading data from ..." line, a library's print, a C++
library's output) goes to stderr instead. Exit status: 0 done, 1 failed, 2 bad arguments or
cluster config, 130 Ctrl-C, 143 SIGTERM.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from tierscope.trainer.data import DATASETS
from tierscope.trainer.roles import STRATEGIES, ClusterConfigError, task_from_env
from tierscope.trainer.steplog import LOG_FORMATS
from tierscope.trainer.train import TrainConfig, main_exit, run_task


def parser() -> argparse.ArgumentParser:
    d = TrainConfig()
    p = argparse.ArgumentParser(prog="python -m tierscope.trainer.task", description=__doc__.splitlines()[0])
    p.add_argument("--run-id", default=d.run_id)
    p.add_argument("--tier", default=d.tier, help="scale tier label written into every record")
    p.add_argument("--steps", type=int, default=d.steps, help="training steps this task runs")
    p.add_argument("--batch-size", type=int, default=d.batch_size, help="examples per step per worker")
    p.add_argument("--learning-rate", type=float, default=d.learning_rate)
    p.add_argument("--dataset", choices=DATASETS, default=d.dataset)
    p.add_argument("--data-file", type=Path, default=None, help=".npz with x_train, y_train (overrides --dataset)")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--log-every-steps", type=int, default=d.log_every_steps, help="0: off")
    p.add_argument("--log-interval-secs", type=float, default=d.log_interval_secs, help="0: off")
    p.add_argument("--log-format", choices=LOG_FORMATS, default=d.log_format)
    p.add_argument("--strategy", choices=STRATEGIES, default=None, help="default: what the cluster calls for")
    p.add_argument("--model-dir", type=Path, default=None, help="checkpoints: saved there, restored from it")
    p.add_argument("--checkpoint-every", type=int, default=d.checkpoint_every, help="global steps (0: at the end)")
    p.add_argument("--eval-every", type=int, default=d.eval_every, help="global steps (0: off)")
    p.add_argument("--tensorboard", dest="tensorboard_dir", type=Path, default=None, help="event files under it")
    return p


def config_from_args(argv: list[str] | None = None) -> TrainConfig:
    """The :class:`TrainConfig` of a task's command line; exits 2 (argparse) on a bad one."""
    p = parser()
    args = p.parse_args(argv)
    try:
        return TrainConfig(**{k: v for k, v in vars(args).items()})
    except ValueError as exc:
        p.error(str(exc))
        raise  # unreachable: p.error exits


def task_args(config: TrainConfig) -> list[str]:
    """The command-line arguments that make :func:`config_from_args` return ``config``."""
    args = [
        *("--run-id", config.run_id, "--tier", config.tier, "--steps", str(config.steps)),
        *("--batch-size", str(config.batch_size), "--learning-rate", repr(config.learning_rate)),
        *("--dataset", config.dataset, "--seed", str(config.seed)),
        *("--log-every-steps", str(config.log_every_steps), "--log-interval-secs", repr(config.log_interval_secs)),
        *("--log-format", config.log_format),
    ]
    if config.data_file is not None:
        args += ["--data-file", str(Path(config.data_file).resolve())]
    if config.strategy is not None:
        args += ["--strategy", config.strategy]
    if config.model_dir is not None:
        args += ["--model-dir", str(Path(config.model_dir).resolve())]
    defaults = TrainConfig()
    if config.checkpoint_every != defaults.checkpoint_every:
        args += ["--checkpoint-every", str(config.checkpoint_every)]
    if config.eval_every != defaults.eval_every:
        args += ["--eval-every", str(config.eval_every)]
    if config.tensorboard_dir is not None:
        args += ["--tensorboard", str(Path(config.tensorboard_dir).resolve())]
    return args


def step_log_stream() -> TextIO:
    """Keep the process's stdout for the step log alone: returns a stream on the original stdout and
    points file descriptor 1 (so ``print``, ``sys.stdout`` and C++ libraries alike) at stderr."""
    sys.stdout.flush()
    log = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    return log


def main(argv: list[str] | None = None) -> None:
    config = config_from_args(argv)
    try:
        task = task_from_env()
    except ClusterConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        main_exit(2)
        return
    log = step_log_stream()
    code, _ = run_task(config, task, stream=log)
    log.flush()
    main_exit(code)


if __name__ == "__main__":
    main()
