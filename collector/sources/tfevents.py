"""TensorBoard event files (``events.out.tfevents.*``) as step records.

Every Estimator, Keras and TF2 job writes them into its job directory; for many past runs they
are the only record left. An event holds a global step, a wall time (Unix seconds) and summary
values by tag; a scalar is a ``simple_value`` (TF1, Estimator) or a one-value tensor (TF2
``tf.summary.scalar``, Keras), both read here (the tensor through tensorboard's
``tensor_util.make_ndarray``; the protos are tensorboard's own).

**Tags** (:data:`SHIPPED_TAGS`, looked up by the callers' source: Estimator's
``StepCounterHook`` writes ``global_step/sec``, TPUEstimator ``examples/sec``; Keras'
``TensorBoard`` callback ``batch_<metric>`` at the global batch count, ``epoch_<metric>`` at the
epoch index, ``batch_steps_per_second``/``epoch_steps_per_second`` with
``write_steps_per_second``, and in ``validation/`` ``evaluation_<metric>_vs_iterations`` at the
optimizer's iterations; Orbit and clu ``steps_per_second``). A user maps other tags in a formats
file (:class:`~tierscope.collector.formats.declared.DeclaredTags`); declared tags win.

**Records.** Consecutive events at one step make one record (Keras writes each scalar as an
event of its own): ``step`` the event's step, ``timestamp`` its wall time, ``elapsed_s`` the
seconds since the file's first event (the writer opening, so a restart's new file starts again
at 0), ``source_offset`` the 1-based number of its first event in the file. ``epoch_*`` tags
count epochs, not global steps: their records have no ``step``, and ``position`` (their event
number) keeps them apart, as a step-less text record. A rate must be a finite number >= 0,
else that event is a reject.

**Whose records** (:func:`place_of`): the directories above the file, nearest first, while they
are names tierscope knows: a task (``worker_0``, ``worker-1``, ``chief``, ``ps_2``,
``master-replica-0``, Keras' ``workertemp_1``) gives role and index (a bare role is index 0);
``train`` changes nothing; an evaluation directory (``eval``, ``eval_<name>``, ``validation``)
makes them evaluation records: role ``evaluator``, ``loss``/``accuracy`` stored as
``eval_loss``/``eval_accuracy``, rates dropped. Without a task directory the records name no
task: the run's single training task.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tierscope.collector.formats.envelopes import task_from_name
from tierscope.collector.formats.vocabulary import NOT_UNIX_TIME, TIME_GROUPS, is_unix_time, rate_from_time
from tierscope.collector.sources.eventfiles import EVENT_FILE_PREFIX as EVENT_FILE_PREFIX
from tierscope.collector.sources.eventfiles import TFEVENTS as TFEVENTS
from tierscope.collector.sources.eventfiles import event_files as event_files
from tierscope.collector.sources.eventfiles import is_event_file as is_event_file

#: The format name records and rejects from event files carry.
#: Step-record fields a tag can be mapped to: the schema's columns, and step times converted
#: to global steps/s by the vocabulary (:func:`~tierscope.collector.formats.vocabulary.rate_from_time`).
TAG_FIELDS: tuple[str, ...] = (
    "global_steps_per_s",
    "local_steps_per_s",
    "examples_per_s",
    "sec_per_step",
    "ms_per_step",
    "loss",
    "accuracy",
    "eval_loss",
    "eval_accuracy",
)
#: Fields that must be a finite number >= 0 (> 0 for step times).
RATE_FIELDS = ("global_steps_per_s", "local_steps_per_s", "examples_per_s", "sec_per_step", "ms_per_step")

#: The field's tags. Keras' rates are the job's: its replicas are synchronous (one global step each).
SHIPPED_TAGS: Mapping[str, str] = {
    "global_step/sec": "global_steps_per_s",  # Estimator, tf.train.StepCounterHook
    "examples/sec": "examples_per_s",  # TPUEstimator
    "steps_per_sec": "global_steps_per_s",
    "steps_per_second": "global_steps_per_s",  # Orbit (TF Model Garden), clu (Flax)
    "batch_steps_per_second": "global_steps_per_s",  # Keras, write_steps_per_second=True
    "epoch_steps_per_second": "global_steps_per_s",
    "loss": "loss",  # Estimator (and its eval/ directory)
    "training_loss": "loss",  # Model Garden
    "validation_loss": "eval_loss",
    "batch_loss": "loss",
    "epoch_loss": "loss",
    "accuracy": "accuracy",
    "batch_accuracy": "accuracy",
    "epoch_accuracy": "accuracy",
    "evaluation_loss_vs_iterations": "loss",  # Keras validation/
    "evaluation_accuracy_vs_iterations": "accuracy",
}
#: Tags whose step is an epoch index (Keras), not a global step.
EPOCH_TAG_PREFIX = "epoch_"

_TASK_DIR = re.compile(r"^(?P<role>master|chief|worker|ps|evaluator)(?:[_-]?(?P<index>\d+))?$", re.IGNORECASE)
_KERAS_WORKER_DIR = re.compile(r"^workertemp_(?P<index>\d+)$")
_TRAIN_DIRS = frozenset({"train", "training"})
_EVAL_DIR = re.compile(r"^(?:eval(?:uation)?(?:[_-].+)?|validation)$", re.IGNORECASE)
#: How many directories above a file are looked at for its task (``worker_0/train/``: two).
_PLACE_DEPTH = 3


@dataclass(frozen=True)
class Place:
    """Whose records a file holds: ``role``/``task_index`` (None: the run's single training
    task), and whether they are evaluation results."""

    role: str | None = None
    task_index: int | None = None
    evaluation: bool = False


def _task_dir(name: str) -> tuple[str | None, int | None]:
    role, index = task_from_name(name)
    if role is not None:
        return role, index
    if m := _TASK_DIR.match(name):
        return m["role"].lower(), int(m["index"] or 0)
    if m := _KERAS_WORKER_DIR.match(name):
        return "worker", int(m["index"])
    return None, None


def place_of(path: Path) -> Place:
    """The :class:`Place` of the event file at ``path``, from the directories above it (see the module doc)."""
    role: str | None = None
    index: int | None = None
    evaluation = False
    for part in list(path.parent.parts)[::-1][:_PLACE_DEPTH]:
        found_role, found_index = _task_dir(part)
        if found_role is not None:
            role, index = found_role, found_index
            break
        if _EVAL_DIR.match(part):
            evaluation = True
        elif part not in _TRAIN_DIRS:
            break
    if evaluation:
        return Place("evaluator", index if index is not None else 0, True)
    return Place(role, index, False)


def run_name(path: Path) -> str:
    """The run an event file given alone belongs to: the first directory above it that is no
    task, train or evaluation directory (``jobs/job42/worker_0/train/events...`` -> ``job42``)."""
    for part in list(path.resolve().parent.parts)[::-1]:
        if _task_dir(part)[0] is None and part not in _TRAIN_DIRS and not _EVAL_DIR.match(part):
            return part
    return path.name


@dataclass(frozen=True)
class Scalar:
    """One scalar of one event: the event's ``number`` in the file and the byte ``at`` which it
    starts, ``step``, ``wall_time`` (Unix s)."""

    number: int
    at: int
    step: int
    wall_time: float
    tag: str
    value: float


def scalars(number: int, at: int, data: bytes, tags: Mapping[str, str] | None) -> tuple[float, list[Scalar]]:
    """The event serialized in ``data`` (event ``number``, at byte ``at``): its wall time and its
    scalars whose tag is in ``tags`` (None: every scalar).
    Raises :class:`ValueError` if ``data`` is not an event."""
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import event_pb2

    try:
        event = event_pb2.Event.FromString(data)
    except DecodeError as exc:
        raise ValueError(f"not a TensorBoard event ({exc})") from None
    found = []
    for value in event.summary.value:
        if tags is not None and value.tag not in tags:
            continue
        number_value = _scalar_value(value)
        if number_value is not None:
            found.append(Scalar(number, at, event.step, event.wall_time, value.tag, number_value))
    return event.wall_time, found


def _scalar_value(value: object) -> float | None:
    """A summary value's number: its ``simple_value``, or a one-number tensor's; None for others
    (histograms, images, text)."""
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    if kind == "simple_value":
        return float(value.simple_value)  # type: ignore[attr-defined]
    if kind != "tensor":
        return None
    from tensorboard.util import tensor_util

    tensor = value.tensor  # type: ignore[attr-defined]
    # Only a one-value tensor is a scalar: decoding another could allocate its whole declared
    # shape (2**40 floats) from a few bytes.
    if tensor.tensor_shape.unknown_rank or any(d.size != 1 for d in tensor.tensor_shape.dim):
        return None
    try:
        array = tensor_util.make_ndarray(tensor)
    except (ValueError, TypeError, KeyError):  # KeyError: a dtype without a NumPy type (resource, variant)
        return None
    if array.size != 1 or array.dtype.kind not in "fiub":
        return None
    return float(array.reshape(-1)[0])


def field_of(tag: str, tags: Mapping[str, str], place: Place) -> str | None:
    """The step-record column ``tag`` goes to in a file at ``place`` (None: not kept)."""
    field = tags.get(tag)
    if field is None or not place.evaluation:
        return field
    return {"loss": "eval_loss", "accuracy": "eval_accuracy"}.get(field, field if field.startswith("eval_") else None)


def bad_value(field: str, value: float) -> str | None:
    """Why ``value`` cannot be stored as ``field`` (None: it can). A NaN loss is stored (and noted)."""
    if field in ("sec_per_step", "ms_per_step"):
        ok = math.isfinite(value) and value > 0 and math.isfinite(TIME_GROUPS[field] / value)
        return None if ok else "is not a finite number > 0"
    if field in RATE_FIELDS:
        # -0.0 as a negative figure (a text log's ``-0``: :func:`tierscope.collector.formats.base.unsigned`)
        return None if math.isfinite(value) and math.copysign(1.0, value) > 0 else "is not a finite number >= 0"
    return None


def bad_wall_time(wall: float) -> str | None:
    """Why an event's wall time cannot be a record's timestamp (None: it can): a text log's time's rule."""
    return None if is_unix_time(wall) else NOT_UNIX_TIME


def step_groups(found: Iterable[Scalar]) -> list[list[Scalar]]:
    """``found`` cut into records: runs of consecutive scalars of one step and kind (global step or epoch)."""
    groups: list[list[Scalar]] = []
    for s in found:
        key = (s.step, s.tag.startswith(EPOCH_TAG_PREFIX))
        last = groups[-1][-1] if groups else None
        if last is not None and (last.step, last.tag.startswith(EPOCH_TAG_PREFIX)) == key:
            groups[-1].append(s)
        else:
            groups.append([s])
    return groups


def records(
    groups: list[list[Scalar]], tags: Mapping[str, str], place: Place, first_wall: float | None
) -> pl.DataFrame:
    """One step record per group (columns of :data:`~tierscope.dataset.schema.STEP_SCHEMA`:
    ``source_offset``, ``step``, ``position``, ``timestamp``, ``elapsed_s`` (s since
    ``first_wall``; null without one), ``role``, ``task_index``, the mapped fields (steps/s, s), ``format``)."""
    rows = []
    for group in groups:
        head = group[0]
        epoch = head.tag.startswith(EPOCH_TAG_PREFIX)
        row: dict[str, object] = {
            "source_offset": head.number,
            "step": None if epoch else head.step,
            "position": head.number if epoch else None,
            "wall": min(s.wall_time for s in group),  # the first event: nearest to the step itself
        }
        for s in group:
            field = field_of(s.tag, tags, place)
            if field is not None:
                row.setdefault(field, s.value)
        rows.append(row)
    columns = {f: pl.Float64 for f in TAG_FIELDS}
    frame = pl.DataFrame(
        rows,
        schema={"source_offset": pl.Int64, "step": pl.Int64, "position": pl.Int64, "wall": pl.Float64, **columns},
    )
    rate = pl.coalesce(
        pl.col("global_steps_per_s"),
        *(rate_from_time(pl.col(u), TIME_GROUPS[u]) for u in ("sec_per_step", "ms_per_step")),
    )
    return frame.with_columns(
        global_steps_per_s=rate,
        timestamp=pl.from_epoch((pl.col("wall") * 1e6).round(0).cast(pl.Int64), time_unit="us").dt.replace_time_zone(
            "UTC"
        ),
        # Null before the writer opened: a clock set back, or no file_version event first.
        elapsed_s=pl.when(pl.col("wall") >= first_wall).then(pl.col("wall") - first_wall)
        if first_wall is not None
        else pl.lit(None, dtype=pl.Float64),
        role=pl.lit(place.role, dtype=pl.String),
        task_index=pl.lit(place.task_index, dtype=pl.Int32),
        rate_derived=pl.lit(False),
        format=pl.lit(TFEVENTS),
    ).drop("wall", "sec_per_step", "ms_per_step")
