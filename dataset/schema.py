"""The step record, the run event and the reject: the three tables of a tierscope dataset.

Every parser produces frames with exactly these columns and dtypes, every reader
returns them, and nothing else in the project spells a column list out again.

Units: seconds for every time (``elapsed_s``, ``interval_s``), steps per second
for every rate, UTC for every timestamp.
"""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from tierscope.contract import EVENTS as CONTRACT_EVENTS

#: One row per step-log record (one logged line or one structured log entry).
#:
#: - ``run_id``: the run the record belongs to (a training job, a local run).
#: - ``tier``: the scale tier (``BASIC``, ``STANDARD_1``, ``PREMIUM_1``, ``CUSTOM``, ``local``...).
#: - ``role``: ``master`` (older platforms) or ``chief`` (newer), ``worker``, ``ps``, ``evaluator``.
#: - ``task_index``: the replica's index within its role (``worker/3`` -> 3).
#: - ``step``: the *global* step, shared by all tasks of a job.
#: - ``local_step``: this task's own step count, when the log gives it.
#: - ``loss``, ``accuracy``: training metrics on the logged batch (Keras: the epoch's running
#:   mean; a cloudml ``Eval`` block: on the training set).
#: - ``eval_loss``, ``eval_accuracy``: the same metrics on held-out data, when the log reports
#:   them (Keras ``val_loss``/``val_accuracy``, cloudml ``Eval`` blocks, MLPerf ``eval_accuracy``,
#:   which is the benchmark's quality metric as logged). A record whose numbers come from an
#:   evaluation pass alone (not from training) has role ``evaluator`` and no rates, so
#:   analyses of training speed (:data:`TRAINING_ROLES`) leave it out.
#: - ``elapsed_s``: seconds since this task started (per task, not per job).
#: - ``interval_s``: seconds since the task's previous record, when the format logs it
#:   instead of ``elapsed_s`` (Estimator hooks).
#: - ``global_steps_per_s``, ``local_steps_per_s``: rates over the last logging interval,
#:   as the log reports them.
#: - ``examples_per_s``: examples per second over the interval, when logged.
#: - ``rate_derived``: True when tierscope computed the rates from the log's clock (global
#:   steps gained over the seconds since the task's previous record) because the log printed
#:   none; False or null when they are the log's own figures (at most converted: 1 / sec/step).
#: - ``position``: for a record with no global step (a TPUEstimator ``global_step/sec`` line),
#:   its line number in ``source``: what keeps such records apart and orders them; null for a
#:   record with a step (the step identifies it).
#: - ``timestamp``: when the record was written, UTC; null when the log has no clock
#:   (the 2016 logs).
#: - ``source``: the file path or Cloud Logging log name the record came from.
#: - ``source_offset``: 1-based line number in ``source``; null for Cloud Logging entries.
#: - ``entry_id``: Cloud Logging ``insertId`` (null for files).
#: - ``format``: the name of the parser that read it (see :mod:`tierscope.collector.formats`).
#: - ``pid``: the id of the process that wrote the record, where the log line names one (Python
#:   logging's ``%(process)d``, as tf_cnn_benchmarks' logs print it); null otherwise. A change of
#:   ``pid`` within one task's records is a new process (a restart or another run): the analysis
#:   starts a new segment there, and no rate is derived across it. glog/absl's header number is a
#:   *thread* id (one process has several), so it is not read as one.
#: - ``examples_unit``: what ``examples_per_s`` counts where the log's measure says it is not examples
#:   (samples, images, sequences): ``tokens`` for a language model's tokens/s; null otherwise.
STEP_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tier": pl.String(),
    "role": pl.String(),
    "task_index": pl.Int32(),
    "step": pl.Int64(),
    "local_step": pl.Int64(),
    "loss": pl.Float64(),
    "accuracy": pl.Float64(),
    "eval_loss": pl.Float64(),
    "eval_accuracy": pl.Float64(),
    "elapsed_s": pl.Float64(),
    "interval_s": pl.Float64(),
    "global_steps_per_s": pl.Float64(),
    "local_steps_per_s": pl.Float64(),
    "examples_per_s": pl.Float64(),
    "rate_derived": pl.Boolean(),
    "position": pl.Int64(),
    "timestamp": pl.Datetime("us", "UTC"),
    "source": pl.String(),
    "source_offset": pl.Int64(),
    "entry_id": pl.String(),
    "format": pl.String(),
    "pid": pl.Int64(),
    "examples_unit": pl.String(),
}

#: The columns that identify a step record: the same values twice are the same record,
#: whichever file, line, log handler or platform copy they came from.
#: Files written before ``rate_derived``, ``position``, ``pid`` and ``examples_unit`` existed read them as null. ``pid``
#: is no part of the key: a copy of a record that lost its logger header (and so its pid) is the same record.
STEP_KEY: tuple[str, ...] = (
    "run_id",
    "role",
    "task_index",
    "step",
    "local_step",
    "elapsed_s",
    "interval_s",
    "position",
)

#: The figures a step record states beside its key. Two rows of one key are one record (a copy: another file,
#: a platform's copy, a re-read) only where these agree: a figure both state (a rate neither derived) differing
#: by more than :data:`FIGURE_TOLERANCE` of its size makes them two records that claim one step, a conflict (two
#: runs read as one), neither a duplicate of the other. Times are no figure: a copy's time may be its envelope's.
STEP_FIGURES: tuple[str, ...] = (
    "global_steps_per_s",
    "examples_per_s",
    "loss",
    "accuracy",
    "eval_loss",
    "eval_accuracy",
)

#: How far apart, relatively, two statements of one figure may be and still be copies: a log printing 4
#: significant digits and a structured copy of full precision differ by up to 0.05 % of the value.
FIGURE_TOLERANCE = 1e-3


def figures_differ(suffix: str) -> pl.Expr:
    """True where a row's :data:`STEP_FIGURES` differ from those of the columns named with ``suffix``
    (the other copy's, joined on :data:`STEP_KEY`) beyond :data:`FIGURE_TOLERANCE`; a figure either lacks,
    or a rate either derived, is no difference."""

    def stated(name: str, end: str = "") -> pl.Expr:
        value = pl.col(name + end)
        if name == "global_steps_per_s":
            return pl.when(pl.col("rate_derived" + end).fill_null(False)).then(None).otherwise(value)
        return value

    differ = [
        (
            (stated(n) - stated(n, suffix)).abs()
            > FIGURE_TOLERANCE * pl.max_horizontal(stated(n).abs(), stated(n, suffix).abs())
        ).fill_null(False)
        for n in STEP_FIGURES
    ]
    return pl.any_horizontal(differ)


#: The ``reason`` of a ``failed`` event whose Python traceback the read ended in, before its exception line (a collect
#: of a log still being written, or a log cut there), and the ending of one whose class IPython named on the
#: traceback's first line: the failure is known, its cause is not yet. A later failed event of the same file (the
#: exception line, read by the next collect) says the cause.
CUT_TRACEBACK_REASON = "Traceback (most recent call last): ending the log (its exception line missing)"
CUT_TRACEBACK_ENDING = " (its traceback ends the log, its last line missing)"


def cut_traceback(reason: str | pl.Expr = "reason") -> pl.Expr:
    """Boolean: ``reason`` (a column) is a failure cut before its exception line (:data:`CUT_TRACEBACK_REASON`)."""
    text = pl.col(reason) if isinstance(reason, str) else reason
    return ((text == CUT_TRACEBACK_REASON) | text.str.ends_with(CUT_TRACEBACK_ENDING)).fill_null(False)


#: Run events. ``event`` is one of :data:`EVENTS`: ``started``, ``failed`` or ``finished``, and the
#: milestones goodput reads (``initialized``, ``first_step``, ``checkpoint_begin`` / ``_end``,
#: ``eval_begin`` / ``_end``, ``restored``; :mod:`tierscope.contract` says what each means);
#: ``reason`` says why a run failed (``gcloud crashed (BadStatusCodeError)``), ``detail`` is free
#: JSON text (topology, versions, wall time, an evaluation's metrics), ``step`` the global step
#: it happened at (a checkpoint's or restore's step). Role and task are null for job-level events.
EVENT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tier": pl.String(),
    "event": pl.String(),
    "reason": pl.String(),
    "detail": pl.String(),
    "role": pl.String(),
    "task_index": pl.Int32(),
    "step": pl.Int64(),
    "timestamp": pl.Datetime("us", "UTC"),
    "source": pl.String(),
    "source_offset": pl.Int64(),
    "entry_id": pl.String(),
    "format": pl.String(),
}

EVENT_KEY: tuple[str, ...] = ("run_id", "event", "reason", "role", "task_index", "step", "source", "source_offset")

#: Every event name (defined with what the trainer writes, in :mod:`tierscope.contract`).
EVENTS = CONTRACT_EVENTS

#: A line that looked like a record but could not be read. ``raw`` is capped at
#: :data:`REJECT_RAW_MAX` characters; ``reason`` says what was wrong.
REJECT_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "source": pl.String(),
    "source_offset": pl.Int64(),
    "format": pl.String(),
    "reason": pl.String(),
    "raw": pl.String(),
}

REJECT_KEY: tuple[str, ...] = ("run_id", "source", "source_offset", "raw")

REJECT_RAW_MAX = 2000

#: One row per run and collect: what the manifest or the command line said about the run.
RUN_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(),
    "tier": pl.String(),
    "ran_on": pl.String(),
    "date": pl.Date(),
    "note": pl.String(),
    # JSON {role: {"machine_type": str, "count": int}} from the manifest (a CUSTOM tier); null if not given
    "topology": pl.String(),
    # JSON {role: count}: the replicas the run declares (run.json's topology, the manifest's
    # workers/ps/evaluators); null: not declared (its tier's composition then says)
    "replicas": pl.String(),
    "strategy": pl.String(),  # run.json's: single / mirrored / ps (null: unknown)
    "batch_size": pl.Int64(),  # examples per replica per step (run.json's config, the manifest's batch_size)
    # the configuration the run repeats (the manifest's config, collect --config); null: a configuration of its own
    "config": pl.String(),
    # what a sweep estimated the run would cost before it ran (USD: price rows x its time cap, tierscope sweep);
    # null: not a sweep's run
    "estimate_usd": pl.Float64(),
    "collected_at": pl.Datetime("us", "UTC"),
}

#: Run facts are stored again only when they differ from the run's newest row (the collector's
#: ``record_runs`` says so): the table's key adds ``collected_at`` to these, so facts changed back
#: to earlier ones are a new row, the newest, and no compaction merges it with the earlier one.
RUN_KEY: tuple[str, ...] = (
    "run_id", "tier", "ran_on", "date", "note", "topology", "replicas", "strategy", "batch_size", "config",
    "estimate_usd",
)  # fmt: skip

TRAINING_ROLES = ("master", "chief", "worker")
ROLES = ("master", "chief", "worker", "ps", "evaluator")
#: The role of each of Vertex AI's worker pools, by position: ``workerPoolSpecs[0]`` is the chief, 1 the
#: workers, 2 the parameter servers, 3 the evaluators (cloud.google.com/vertex-ai/docs/training/distributed-training,
#: read 2026-12-06).
POOL_ROLES = ("chief", "worker", "ps", "evaluator")


#: The first and last instant a stored ``timestamp`` may be (UTC): 1970-01-01 through 9999-12-31. What a
#: log's time can mean (no training ran before 1970), and what every reader of the dataset can hold:
#: Python's datetime ends with the year 9999. The collector rejects a time outside (the README's rule).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)


def off_the_clock(column: str = "timestamp") -> pl.Expr:
    """Boolean: ``column`` (Datetime UTC) holds a time outside :data:`EARLIEST` - :data:`LATEST`
    (false where it is null)."""
    stamp = pl.col(column)
    return stamp.is_not_null() & ((stamp < EARLIEST) | (stamp > LATEST))


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """An empty frame with ``schema``'s columns and dtypes."""
    return pl.DataFrame(schema=schema)


def conform(frame: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """``frame`` with exactly ``schema``'s columns, in order, cast to its dtypes.

    Missing columns become nulls; extra columns are dropped. Raises
    :class:`polars.exceptions.InvalidOperationError` if a present column cannot be cast.
    """
    if frame.width == 0:
        # Selecting only literals from a frame without columns would make one row of nulls.
        return empty(schema)
    return frame.select(
        [
            (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
            for name, dtype in schema.items()
        ]
    )
