"""One task of a training run: the library behind ``python -m tierscope.trainer.task``.

:func:`run_task` trains (or serves) as the task's role and the cluster's shape demand:

- no cluster, or one training task: a single process (``tf.distribute``'s default strategy);
- several training tasks and no parameter servers: ``MultiWorkerMirroredStrategy``, every
  task (chief and workers) runs the same synchronous loop and writes its own records;
- parameter servers: ``ParameterServerStrategy``. The chief is the ``ClusterCoordinator``: it
  schedules every step on the workers and writes the step records (as role ``chief``, with
  the global step); workers and parameter servers run a ``tf.distribute.Server`` until
  stopped with SIGTERM.

Every task writes a ``started`` event, then ``finished`` or ``failed`` (with the reason). A training
task also writes what goodput (:mod:`tierscope.analysis.goodput`) reads: ``restored`` (the step a
checkpoint in ``model_dir`` resumed it at), ``initialized`` (set-up done), ``first_step``, and around
each checkpoint save every ``checkpoint_every`` global steps and each evaluation every
``eval_every`` (:mod:`tierscope.trainer.checkpoints`) a begin and an end event. A task started
again on the same ``model_dir`` trains on to ``steps`` global steps. Saves and evaluations happen
after the step's record is written, between steps: a step costs what it did without them.
TensorFlow is imported only here, inside the functions that need it.
"""

from __future__ import annotations

import platform
import signal
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from tierscope.contract import EVAL_BEGIN, EVAL_END, FIRST_STEP, INITIALIZED
from tierscope.exits import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, Terminated
from tierscope.trainer import data, model
from tierscope.trainer.checkpoints import Checkpointer
from tierscope.trainer.roles import SINGLE, STRATEGIES, Strategy, TaskSpec, strategy_for
from tierscope.trainer.steplog import Identity, IntervalMeter, LogFormat, StepLog
from tierscope.trainer.summaries import SummaryLog


@dataclass(frozen=True)
class TrainConfig:
    """What to train and how to log it. ``log_every_steps`` and ``log_interval_secs`` (0 = off)
    both trigger a record; the last step is always logged."""

    run_id: str = "local"
    tier: str = "local"
    steps: int = 1000
    batch_size: int = 100
    learning_rate: float = model.LEARNING_RATE
    dataset: data.DatasetName = "synthetic"
    data_file: Path | None = None
    seed: int = 0
    log_every_steps: int = 100
    log_interval_secs: float = 0.0
    log_format: LogFormat = "json"
    #: None: what the cluster calls for (:func:`tierscope.trainer.roles.strategy_for`).
    strategy: Strategy | None = None
    #: Where checkpoints go and are restored from (None: no checkpoints).
    model_dir: Path | None = None
    #: Save a checkpoint every N global steps, and after the last one (0: only after the last).
    checkpoint_every: int = 100
    #: Evaluate on held-out examples (:func:`tierscope.trainer.data.heldout`) every N global steps (0: never).
    eval_every: int = 0
    #: Also write TensorBoard event files under it (:mod:`tierscope.trainer.summaries`); None: none.
    tensorboard_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_size < 1:
            raise ValueError(f"steps ({self.steps}) and batch size ({self.batch_size}) must be at least 1")
        if self.log_every_steps < 0 or self.log_interval_secs < 0:
            raise ValueError("--log-every-steps and --log-interval-secs must be >= 0 (0 turns one off)")
        if self.checkpoint_every < 0 or self.eval_every < 0:
            raise ValueError("--checkpoint-every and --eval-every must be >= 0 (0 turns one off)")
        if self.strategy is not None and self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}")


@dataclass(frozen=True)
class TrainResult:
    """How a training task ended: ``step`` the global step reached, ``local_step`` this task's
    own count, ``loss`` / ``accuracy`` on the last batch, ``train_s`` seconds in the training
    loop (after set-up), ``records`` step records written, ``first_step_s`` the seconds of
    ``train_s`` spent on the first step: ``tf.function`` tracing and the input pipeline's
    start, which no later step pays (with parameter servers: until the first step had run);
    ``start_step`` the global step restored from a checkpoint (0: none)."""

    step: int
    local_step: int
    loss: float
    accuracy: float
    train_s: float
    records: int
    first_step_s: float
    start_step: int = 0


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"terminated by signal {signal.Signals(signum).name}")


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` so the task can log why it stopped."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Schedule:
    """When to write a record: every ``every`` local steps, every ``secs`` seconds, and at the end."""

    def __init__(self, config: TrainConfig, last_step: int) -> None:
        self.every, self.secs, self.last_step = config.log_every_steps, config.log_interval_secs, last_step
        self.next_time = time.perf_counter() + self.secs

    def due(self, local_step: int) -> bool:
        if local_step == self.last_step or (self.every and local_step % self.every == 0):
            self.next_time = time.perf_counter() + self.secs
            return True
        if self.secs and time.perf_counter() >= self.next_time:
            self.next_time = time.perf_counter() + self.secs
            return True
        return False


class _Progress:
    """The running loop's state, shared with the failure path so ``failed`` can say the step."""

    step = 0
    local_step = 0
    loss = float("nan")
    accuracy = float("nan")
    records = 0


def run_task(
    config: TrainConfig, task: TaskSpec = SINGLE, stream: TextIO | None = None, wait_forever: bool = True
) -> tuple[int, TrainResult | None]:
    """Run this task to the end; return ``(exit code, result)`` (result None for servers and failures).

    Writes ``started`` first, then ``finished`` or ``failed`` with the reason. Never raises
    for a training failure: the exception is logged as ``failed`` and turned into the exit
    code (1; 130 on Ctrl-C; 143 on SIGTERM). ``wait_forever=False`` returns a server at once
    (tests).
    """
    who = Identity(config.run_id, config.tier, task.role, task.index)
    log = StepLog(who, config.log_format, stream)
    progress = _Progress()
    strategy = config.strategy or strategy_for(task.cluster)
    try:
        with _sigterm_raises():
            import tensorflow as tf

            log.event("started", detail=_started_detail(config, task, strategy, tf.__version__))
            if task.tf_role == "evaluator":
                log.event("finished", reason="the reference trainer has no evaluation; evaluator idle")
                return EXIT_OK, None
            if strategy == "ps" and task.tf_role in ("worker", "ps"):
                _serve(task, wait_forever)
                log.event("finished", reason="server stopped")
                return EXIT_OK, None
            result = _train(config, task, strategy, log, progress)
            log.event("finished", detail=asdict(result), step=result.step)
            return EXIT_OK, result
    except Terminated as exc:
        if strategy == "ps" and task.tf_role in ("worker", "ps"):
            # A parameter-server job's servers end this way: the launcher stops them.
            log.event("finished", reason=f"server {exc}")
            return EXIT_OK, None
        log.event("failed", reason=str(exc), step=progress.step or None)
        return EXIT_TERMINATED, None
    except KeyboardInterrupt:
        log.event("failed", reason="interrupted (Ctrl-C)", step=progress.step or None)
        return EXIT_INTERRUPTED, None
    except Exception as exc:
        log.event(
            "failed",
            reason=f"{type(exc).__name__}: {str(exc)[:500]}",
            detail={"traceback": traceback.format_exc(limit=8)[-4000:]},
            step=progress.step or None,
        )
        return EXIT_ERROR, None
    finally:
        log.close()


def _started_detail(config: TrainConfig, task: TaskSpec, strategy: str, tf_version: str) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "cluster": {role: len(hosts) for role, hosts in task.cluster.items()},
        "steps": config.steps,
        "batch_size": config.batch_size,
        "learning_rate": config.learning_rate,
        "dataset": str(config.data_file) if config.data_file else config.dataset,
        "log_every_steps": config.log_every_steps,
        "log_interval_secs": config.log_interval_secs,
        "tensorflow": tf_version,
        "python": platform.python_version(),
        "host": platform.node(),
    }


def _resolver(task: TaskSpec) -> Any:
    import tensorflow as tf

    return tf.distribute.cluster_resolver.SimpleClusterResolver(
        tf.train.ClusterSpec(task.cluster), task_type=task.tf_role, task_id=task.index, rpc_layer="grpc"
    )


def _serve(task: TaskSpec, wait_forever: bool) -> None:
    """Run a ``tf.distribute.Server`` for a parameter-server job until SIGTERM."""
    import tensorflow as tf

    server = tf.distribute.Server(
        tf.train.ClusterSpec(task.cluster), job_name=task.tf_role, task_index=task.index, protocol="grpc", start=True
    )
    # Not server.join(): it blocks in C++, where Python never runs the SIGTERM handler.
    while wait_forever:
        time.sleep(3600)
    del server


def _is_lead(task: TaskSpec) -> bool:
    """The task that writes the checkpoints and evaluates: the chief, else the first task (one process)."""
    return task.tf_role == "chief" or ("chief" not in task.cluster and task.index == 0)


@dataclass
class _Milestones:
    """What a training task does between steps, besides its records: ``saver`` (None: no
    ``model_dir``), ``evaluate`` (None: no evaluation on this task), ``start_step`` restored."""

    saver: Checkpointer | None = None
    evaluate: Callable[[], None] | None = None
    start_step: int = 0


def _milestones(
    config: TrainConfig,
    task: TaskSpec,
    net: Any,
    log: StepLog,
    settle: Callable[[], None] | None = None,
) -> _Milestones:
    """Restore ``net`` from ``config.model_dir`` and set up its saves and evaluations; ``settle``
    waits for the steps scheduled so far (the parameter-server coordinator's ``join``)."""
    import tensorflow as tf

    found = _Milestones()
    if config.model_dir is not None:
        found.saver = Checkpointer(net, config.model_dir, log, writes=_is_lead(task), before_save=settle)
        found.start_step = found.saver.restore()
    held = data.heldout(config.dataset, config.data_file, config.seed) if config.eval_every else None
    if held is not None and _is_lead(task):
        x, y = data.features(held)
        evaluate_fn = tf.function(net.evaluate)

        def evaluate() -> None:
            if settle is not None:
                settle()
            step = int(net.global_step.numpy())
            log.event(EVAL_BEGIN, step=step)
            start = time.perf_counter()
            loss, accuracy = evaluate_fn(x, y)
            detail = {"eval_loss": float(loss), "eval_accuracy": float(accuracy), "examples": len(held.labels)}
            log.event(EVAL_END, step=step, detail=detail | {"seconds": round(time.perf_counter() - start, 6)})

        found.evaluate = evaluate
    return found


def _train(config: TrainConfig, task: TaskSpec, strategy_name: str, log: StepLog, progress: _Progress) -> TrainResult:
    import tensorflow as tf

    arrays = data.load(config.dataset, config.data_file, config.seed)
    if strategy_name == "ps":
        return _train_ps(config, task, arrays, log, progress)
    if strategy_name == "mirrored":
        strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=_resolver(task))
    else:
        strategy = tf.distribute.get_strategy()
    with strategy.scope():
        net = model.build(config.seed, config.learning_rate)
    global_batch = config.batch_size * strategy.num_replicas_in_sync
    marks = _milestones(config, task, net, log)

    def dataset_fn(ctx: tf.distribute.InputContext) -> tf.data.Dataset:
        return data.make_dataset(
            arrays, config.batch_size, shard=(ctx.num_input_pipelines, ctx.input_pipeline_id), seed=config.seed
        )

    iterator = iter(strategy.distribute_datasets_from_function(dataset_fn))

    @tf.function
    def step_fn(it: Any) -> tuple[tf.Tensor, tf.Tensor]:
        x, y = next(it)
        loss, acc = strategy.run(net.train_step, args=(x, y, global_batch))
        return strategy.experimental_local_results(loss)[0], strategy.experimental_local_results(acc)[0]

    return _loop(config, log, progress, lambda: step_fn(iterator), lambda: int(net.global_step.numpy()), marks)


def _train_ps(
    config: TrainConfig, task: TaskSpec, arrays: data.Arrays, log: StepLog, progress: _Progress
) -> TrainResult:
    import tensorflow as tf

    strategy = tf.distribute.ParameterServerStrategy(_resolver(task))
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    with strategy.scope():
        net = model.build(config.seed, config.learning_rate)
    marks = _milestones(config, task, net, log, settle=coordinator.join)

    def dataset_fn(ctx: tf.distribute.InputContext) -> tf.data.Dataset:
        # Every worker builds the same pipeline; no seed so each shuffles differently.
        return data.make_dataset(arrays, config.batch_size, seed=None)

    @tf.function
    def per_worker_dataset_fn() -> Any:
        return strategy.distribute_datasets_from_function(dataset_fn)

    iterator = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    @tf.function
    def step_fn(it: Any) -> tuple[tf.Tensor, tf.Tensor]:
        x, y = next(it)
        return strategy.run(net.train_step, args=(x, y, config.batch_size))

    last: list[Any] = []

    def schedule() -> None:
        last[:] = [coordinator.schedule(step_fn, args=(iterator,))]

    def fetch() -> tuple[float, float]:
        coordinator.join()
        loss, acc = last[0].fetch()
        return float(loss), float(acc)

    return _loop(config, log, progress, schedule, lambda: int(net.global_step.numpy()), marks, fetch)


def _due(every: int, step: int) -> bool:
    return every > 0 and step % every == 0


def _loop(
    config: TrainConfig,
    log: StepLog,
    progress: _Progress,
    run_step: Callable[[], Any],
    global_step: Callable[[], int],
    marks: _Milestones,
    fetch: Callable[[], tuple[float, float]] | None = None,
) -> TrainResult:
    """Run the steps from ``marks.start_step`` to ``config.steps`` and write the records, the
    checkpoints and the evaluations; ``fetch`` waits for the metrics of the latest step (default:
    they are what ``run_step`` returned). The global step after local step ``n`` is ``start_step +
    n`` (every strategy counts one global step per step run), so when to save and evaluate costs
    no read of the global step."""
    log.event(INITIALIZED, step=marks.start_step)
    remaining = config.steps - marks.start_step
    schedule = _Schedule(config, remaining)
    meter = IntervalMeter(last_global=marks.start_step)  # the first rate: steps done by this process
    outputs: Any = None
    logging_on = log.fmt != "off"
    first_step_s = 0.0
    summaries = _summaries(config, log)
    saved = marks.start_step
    progress.step = marks.start_step
    for local_step in range(1, remaining + 1):
        outputs = run_step()
        if local_step == 1:
            if fetch:  # the coordinator only scheduled it: wait until it ran
                fetch()
            log.event(FIRST_STEP, step=global_step())
            first_step_s = time.perf_counter() - meter.start
        at = marks.start_step + local_step
        if logging_on and schedule.due(local_step):
            loss, acc = fetch() if fetch else (float(outputs[0]), float(outputs[1]))
            step = global_step()
            elapsed, g_rate, l_rate = meter.mark(step, local_step)
            log.step(
                step=step,
                local_step=local_step,
                loss=loss,
                accuracy=acc,
                elapsed_s=elapsed,
                global_steps_per_s=g_rate,
                local_steps_per_s=l_rate,
                batch_size=config.batch_size,
            )
            if summaries is not None:
                summaries.step(step, loss, acc, g_rate)
            progress.step, progress.local_step, progress.loss, progress.accuracy = step, local_step, loss, acc
            progress.records += 1
        if marks.saver is not None and _due(config.checkpoint_every, at):
            saved = marks.saver.save()
        if marks.evaluate is not None and _due(config.eval_every, at):
            marks.evaluate()
    if outputs is not None and not logging_on:  # still report how the run ended
        loss, acc = fetch() if fetch else (float(outputs[0]), float(outputs[1]))
        progress.step, progress.local_step, progress.loss, progress.accuracy = global_step(), remaining, loss, acc
    if marks.saver is not None and remaining > 0 and saved < marks.start_step + remaining:
        marks.saver.save()  # the final state, so a run started again has nothing left to do
    if summaries is not None:
        summaries.close()
    return TrainResult(
        step=progress.step,
        local_step=progress.local_step,
        loss=progress.loss,
        accuracy=progress.accuracy,
        train_s=time.perf_counter() - meter.start,
        records=progress.records,
        first_step_s=first_step_s,
        start_step=marks.start_step,
    )


def _summaries(config: TrainConfig, log: StepLog) -> SummaryLog | None:
    """The task's event file when ``config`` asks for one (written with the step records)."""
    if config.tensorboard_dir is None or log.who.role is None or log.who.task_index is None:
        return None
    return SummaryLog(Path(config.tensorboard_dir), log.who.role, log.who.task_index)


def main_exit(code: int) -> None:
    """Flush and exit with ``code``. Skips interpreter teardown, where TensorFlow's cluster
    threads (the coordinator's, the collective ops') can hang a finished task."""
    sys.stdout.flush()
    sys.stderr.flush()
    import os

    os._exit(code)
