"""Positions a grammar record states, made global steps: paired positions, blocks, optimizer steps,
counters that count on across epochs, and batches that restart each epoch.

A log's position is not always its global step: an epoch's batch counter restarts, a micro-step counts
gradient accumulation, a block header states the position its body measures. These functions read which,
from the records of a file together."""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.bars import lap_clocks_dropped
from tierscope.collector.formats.base import (
    STAMP,
    TAG,
    ParseContext,
)
from tierscope.collector.formats.statements import (
    BAR_NAMED,
    INNER_NAMED,
    counter_groups,
    epoch_statements,
    first_matched,
)
from tierscope.collector.formats.vocabulary import (
    BLOCK_HEADER,
    ITERATION_BESIDE_STEP,
    ITERATION_STEP,
    ITERATION_TIME,
    MEASURE_GATE,
    MEASURES,
    NOT_TRAINING,
    POSITIONS,
    TIMER_COUNTER,
    number,
)

#: The bars an epoch announced on a line of its own may count (see :func:`whole_steps`).
_BANNER_BARS = ("N it [ (a tqdm bar without a total)", BAR_NAMED)


def paired_positions(read: pl.DataFrame) -> pl.DataFrame:
    """``read`` (the grammar's record lines) with the position of the line right before a line whose only position
    is a bare counter, where that line is of the same time (its envelope's, to the printed digit), names a position
    and measures nothing: the two lines are one statement (DeepSpeed's engine logs ``step=40, skipped=2, lr=...``,
    then at the same millisecond its timer ``0/40, SamplesPerSec=83.5``, whose ``0/40`` is epoch/step)."""
    if read.height == 0 or STAMP not in read.columns:
        return read
    maybe = ((pl.col("_position") == "N/M") & (pl.col("_prev_stamp") == pl.col(STAMP))).fill_null(False)
    return _positions_from_before(read, read.filter(maybe & ~pl.col("_prev_line").str.contains(MEASURE_GATE)))


#: The measures that state a rate of steps in so many words (``0.71428 iters/sec``), not a time.
_STATED_RATES = [m.spelling for m in MEASURES if m.kind == "rate"]


def rates_under_positions(read: pl.DataFrame, summary: str) -> pl.DataFrame:
    """``read`` (every piece the grammar read) with the position of the line right before a line that states the
    task's step rate and no position, where that line names a position and measures nothing (and both are of the same
    time where a logger's time is on them): the two lines are one report. Chainer's ProgressBar redraws four lines in
    place, ``     91300 iter, 7 epoch / 20 epochs`` then ``   0.71428 iters/sec. Estimated time to finish: ...``; a
    rate with no line like that before it stays no record, and so does one under a line of other work or one that
    ``summary`` (a pattern) says sums the run up (``Final results at step 1000``)."""
    if read.height == 0:
        return read
    # (a job-wide rate is a record on its own, its step where it is said: TF's ``global_step/sec: 7.5`` comes before
    # its step's line, never after it)
    alone = pl.col("_step").is_null() & pl.col("_measure").is_in(_STATED_RATES) & pl.col("_global_per_s").is_null()
    same_time = (pl.col("_prev_stamp") == pl.col(STAMP)) if STAMP in read.columns else pl.lit(True)
    maybe = alone & same_time.fill_null(pl.col("_prev_stamp").is_null()) & pl.col("_prev_line").is_not_null()
    # ... a line of other work (``Evaluating step 100``) is no training step's position
    pairs = read.filter(
        maybe
        & ~pl.col("_prev_line").str.contains(MEASURE_GATE)
        & ~pl.col("_prev_line").str.contains(NOT_TRAINING)
        & ~pl.col("_prev_line").str.contains(summary)
    )
    return _positions_from_before(read, pairs)


def _positions_from_before(read: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """``read`` with the named position of ``_prev_line`` given to its ``pairs`` (rows of ``read``, by ``_order``)."""
    if pairs.height == 0:
        return read
    before, spelling = first_matched(
        [(p.spelling, p.regex) for p in POSITIONS if p.kind == "named"], pl.col("_prev_line")
    )
    pairs = pairs.select("_order", _named=before.str.replace_all(",", ""), _named_as=spelling).drop_nulls()
    paired = pl.col("_named").is_not_null()
    return (
        read.join(pairs, on="_order", how="left", maintain_order="left")
        .with_columns(
            _step=pl.when(paired).then("_named").otherwise("_step"),
            _position=pl.when(paired).then("_named_as").otherwise("_position"),
            _inner=pl.when(paired).then(pl.lit(False)).otherwise("_inner"),
        )
        .drop("_named", "_named_as")
    )


def epoch_records(read: pl.DataFrame, record: pl.Expr, epoch_record: pl.Expr, context: ParseContext) -> pl.DataFrame:
    """``read`` with ``_epoch_record``: True for a line stating an epoch and a time that says no unit of work, and
    no finer position (``Epoch 1 of 500 took 494.369s``), in a file whose lines state no step record (this batch's
    or an earlier one's, kept in ``context``): an epoch-level log, whose records are its epochs. Beside step records
    such a line is an epoch's summary, no record."""
    stepped = context.state.get("grammar-stepped", False) or read.select(record.any()).item()
    context.state["grammar-stepped"] = stepped
    return read.with_columns(_epoch_record=pl.lit(False) if stepped else epoch_record.fill_null(False))


#: How much a measure is preferred (its place in the vocabulary), to choose the one a block's step is read by.
_MEASURE_RANK: dict[str, int] = {m.spelling: i for i, m in enumerate(MEASURES)}


def blocks(lines: pl.DataFrame) -> pl.DataFrame:
    """The lines of ``lines`` (``source_offset``, ``line``, the task tag) that are indented under a block header
    (:data:`~tierscope.collector.formats.vocabulary.BLOCK_HEADER`, ``[batch=20/20]:``), each with its header's line
    (``_block``) and step (``_block_step``, String). A block runs from its header to the first line that is not
    indented, within one task."""
    header = pl.col("line").str.extract(BLOCK_HEADER, 1)
    none = pl.DataFrame(schema={"source_offset": pl.Int64, "_block": pl.Int64, "_block_step": pl.String})
    if lines.height == 0 or not lines.select(header.is_not_null().any()).item():
        return none
    tag = pl.col(TAG).fill_null("") if TAG in lines.columns else pl.lit("")
    f = lines.sort("source_offset").select(
        "source_offset", _t=tag, _h=header, _in=pl.col("line").str.contains(r"^[ \t]+\S")
    )
    f = f.with_columns(_run=(~pl.col("_in")).cum_sum().over("_t"))
    heads = f.filter(pl.col("_h").is_not_null()).select("_t", "_run", _block="source_offset", _block_step="_h")
    return f.filter(pl.col("_in")).join(heads, on=["_t", "_run"]).select("source_offset", "_block", "_block_step")


def block_positions(read: pl.DataFrame, blocks: pl.DataFrame) -> pl.DataFrame:
    """``read`` with the step of a block's header given to the one line of the block whose measure is the most
    preferred (the job's ``batches_per_sec`` before a device's, a step rate before examples/s): the block is one
    statement, its position on the header's line and its measures on the lines under it. The block's other lines
    state no position, so they make no record."""
    if read.height == 0 or blocks.height == 0:
        return read
    read = read.join(blocks, on="source_offset", how="left", maintain_order="left")
    rank = pl.col("_measure").replace_strict(_MEASURE_RANK, default=None, return_dtype=pl.Int64)
    member = pl.col("_block").is_not_null() & pl.col("_step").is_null() & pl.col("_measure").is_not_null()
    chosen = (
        read.filter(member)
        .with_columns(_rank=rank)
        .sort("_rank", "_order")
        .group_by("_block", maintain_order=True)
        .first()
        .get_column("_order")
    )
    pick = pl.col("_order").is_in(chosen.implode())
    return read.with_columns(
        _step=pl.when(pick).then("_block_step").otherwise("_step"),
        _position=pl.when(pick).then(pl.lit("[batch=N/M]: block header")).otherwise("_position"),
        _inner=pl.when(pick).then(pl.lit(False)).otherwise("_inner"),
    ).drop("_block", "_block_step")


def optimizer_steps(records: pl.DataFrame) -> pl.DataFrame:
    """``records`` with the lines that name an iteration beside a step (``iter 77 step 39: ... iter time:
    214.40ms``) made one record per step, each step's first line, and an iteration's time made the step's: the
    file's iterations per step ``k`` (``(last iteration - first) / (last step - first)``, rounded) times it.

    The step counts the optimizer's updates, the global step; the iteration one micro-batch of gradient
    accumulation (litgpt prints ``iter 76 step 38``, ``iter 77 step 39 (optimizer.step)``, ``iter 78 step 39``:
    two iterations a step, so 214.40 ms an iteration is 428.8 ms a step)."""
    beside = (pl.col("_position") == ITERATION_STEP).fill_null(False)
    if records.height == 0 or not records.select(beside.any()).item():
        return records
    tag = pl.col(TAG).fill_null("")
    rows = (
        records.filter(beside)
        .sort("_order")
        .select(
            "_order", _t=tag, _i=number(pl.col("_piece").str.extract(ITERATION_BESIDE_STEP, 1), pl.Int64), _s="step"
        )
    )
    span = (pl.col("_s").last() - pl.col("_s").first()).cast(pl.Float64)
    per_step = rows.group_by("_t").agg(
        _k=pl.when(span > 0).then(((pl.col("_i").last() - pl.col("_i").first()) / span).round()).otherwise(1.0)
    )
    firsts = (
        rows.filter(pl.col("_order") == pl.col("_order").min().over("_t", "_s"))
        .join(per_step, on="_t", how="left")
        .select("_order", _k=pl.col("_k").clip(lower_bound=1.0))
    )
    timed = pl.col("_piece").str.contains(ITERATION_TIME)
    return (
        records.join(firsts, on="_order", how="left", maintain_order="left")
        .filter(~beside | pl.col("_k").is_not_null())
        .with_columns(_per_s=pl.when(beside & timed).then(pl.col("_per_s") / pl.col("_k")).otherwise("_per_s"))
        .drop("_k")
    )


#: The fewest counters whose totals must go up line by line before ``N/M`` is read as epoch/step.
_COUNTING_ON = 3


def _task_counters(read: pl.DataFrame, chosen: pl.Expr) -> pl.DataFrame:
    """The ``N/M`` counters of ``read``'s rows where ``chosen`` holds, in log order: ``_order``, ``_t`` (the
    task's tag, "" for none), ``_n`` and ``_m`` (Int64, null where unreadable)."""
    counter = counter_groups(pl.col("_piece"))
    return (
        read.filter(chosen)
        .select(
            "_order",
            _t=pl.col(TAG).fill_null(""),
            _n=number(counter.struct.field("x"), pl.Int64),
            _m=number(counter.struct.field("m"), pl.Int64),
        )
        .sort("_order")
    )


def _of_tasks_whose(counters: pl.DataFrame, moving: str, *, other_stands: bool) -> pl.DataFrame:
    """``counters`` (from :func:`_task_counters`) of the tasks with at least :data:`_COUNTING_ON` of them whose
    ``moving`` column never goes down and goes up at least once, and whose other column stands still
    (``other_stands``) or never goes down."""
    other = pl.col("_n" if moving == "_m" else "_m").diff().drop_nulls()
    steps = pl.col(moving).diff().drop_nulls()
    shape = (
        (pl.len() >= _COUNTING_ON)
        & (steps >= 0).all()
        & (steps > 0).any()
        & ((other == 0) if other_stands else (other >= 0)).all()
    )
    tasks = counters.group_by("_t").agg(_keep=shape).filter("_keep").get_column("_t")
    return counters.filter(pl.col("_t").is_in(tasks.implode()))


def totals_that_count_on(read: pl.DataFrame) -> pl.DataFrame:
    """``read`` with each ``N/M`` counter, bare or after its step word, whose ``M`` goes up from line to line (a
    task's, at least :data:`_COUNTING_ON` of them, ``M`` never down and up at least once) and whose ``N`` never goes
    down read as epoch/step: its step is ``M``.

    A counter's total never changes within a run, so a "total" that grows is a position: WeNet's and
    wekws' ``TRAIN Batch 4/203700 loss ...`` (epoch 4, batch 203700: wenet-e2e/wenet issue 941, 2023-01-30; ``Batch
    78/0``, ``78/10``: wenet-e2e/wekws issue 214, 2026-05-09), each rank printing the same batch (``M`` repeated)."""
    counter = counter_groups(pl.col("_piece"))
    # a step word's counter (``Batch 4/203700``), never a bar's drawing (its totals are bars of other passes)
    worded = (pl.col("_position") == INNER_NAMED) & (counter.struct.field("x") == pl.col("_step"))
    bare = ((pl.col("_position") == "N/M") | worded).fill_null(False)
    if read.height == 0 or not read.select(bare.any()).item():
        return read
    steps = _of_tasks_whose(_task_counters(read, bare), "_m", other_stands=False)
    if steps.height == 0:
        return read
    return (
        read.join(
            steps.select("_order", _total=pl.col("_m").cast(pl.String)), on="_order", how="left", maintain_order="left"
        )
        .with_columns(
            _step=pl.coalesce("_total", "_step"),
            _inner=pl.when(pl.col("_total").is_not_null()).then(pl.lit(False)).otherwise("_inner"),
        )
        .drop("_total")
    )


def timer_totals_that_stand(read: pl.DataFrame) -> pl.DataFrame:
    """``read`` with the counters spelled as DeepSpeed's timer's (``E/N, SamplesPerSec=X``, read as epoch/step:
    step ``N``) read as a position and its total where a task's show it: at least :data:`_COUNTING_ON` of them, their
    ``N`` never changing and their ``E`` going up, never down (``10/200``, ``20/200``, ``30/200``: steps 10, 20, 30).
    A timer's step never stands still while its epoch goes on, so these are another program's progress."""
    timer = (pl.col("_position") == TIMER_COUNTER).fill_null(False)
    if read.height == 0 or not read.select(timer.any()).item():
        return read
    steps = _of_tasks_whose(_task_counters(read, timer), "_n", other_stands=True)
    if steps.height == 0:
        return read
    return (
        read.join(
            steps.select("_order", _own=pl.col("_n").cast(pl.String)), on="_order", how="left", maintain_order="left"
        )
        .with_columns(_step=pl.coalesce("_own", "_step"))
        .drop("_own")
    )


def whole_steps(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` (the grammar's, with ``_piece``, ``_position``, ``_inner``, ``_order``) with each position
    counted within its epoch made a step of the run: ``(epoch - first epoch) x its total + position``, the first
    epoch being 1 where the file's first stated epoch is 1, else 0 (loops count epochs from 1 or from 0: the first
    iteration of ``epoch 1 iter 50/1000`` is step 50, not 1050; a file that starts later, ``7/299``, says neither
    and keeps counting from 0, its steps then off by one epoch at most, its rates the same).

    Whether a position beside an epoch counts within it (``Epoch: [35]  [10/31]``, ``Epoch[102] Batch [50]``) or
    over the run (``epoch: 2, iter: 1010/100000``) the line does not say; the file does: where the epoch advances
    and the position goes back (or stays: a finished bar each epoch), it counts within the epoch (kept for the
    file in ``context``). Until a file shows
    that, a position stays as printed (an epoch's records then differ by a constant only). A position with no
    total (``Batch [250]``) takes the largest position the file has shown as its epoch's length, one more where the
    counter has shown 0 (``Epoch 00001 | Step 00000``: counted from 0)."""
    if records.height == 0:
        return records
    tag = pl.col(TAG).fill_null("")
    # a bar whose line states no epoch, drawn anew under an epoch announced on a line of its own (``Epoch 2 of 20``,
    # then ``69it [01:19,  1.16s/it]``): that epoch is the bar's
    banner = pl.col("_banner_epoch") if "_banner_epoch" in records.columns else pl.lit(None, dtype=pl.String)
    under_banner = (
        pl.col("_position").is_in(list(_BANNER_BARS))
        & banner.is_not_null()
        & ~pl.col("_piece").str.contains(r"(?i)epoch")
        & pl.col("step").is_not_null()
    ).fill_null(False)
    # the epoch is looked for only where a line may state one: a word epoch, a tqdm bar's description
    maybe = (
        pl.col("_inner") & pl.col("step").is_not_null() & pl.col("_piece").str.contains(r"(?i)epoch|\d%")
    ).fill_null(False) | under_banner
    stated = records.filter(maybe)
    if stated.height == 0:
        return records
    stated = stated.with_columns(
        **{f"_{k}": v for k, v in epoch_statements(pl.col("_piece"), pl.col("_position")).items()}
    )
    stated = stated.with_columns(_epoch=pl.coalesce("_epoch", pl.when(under_banner).then(banner))).filter(
        pl.col("_epoch").is_not_null()
    )
    epoch = number("_epoch", pl.Int64)
    seen = stated.sort("_order").select(
        "source_offset",
        _t=tag,
        _e=epoch,
        _n=pl.col("step"),
        _pe=epoch.shift(1).over(tag),
        _pn=pl.col("step").shift(1).over(tag),
    )
    if seen.height == 0:
        return records
    seen = _after_last_read(seen, context)
    advanced = seen.filter(pl.col("_e") > pl.col("_pe"))
    went_back = advanced.filter(pl.col("_n") <= pl.col("_pn")).height
    if went_back and went_back == advanced.height:
        context.state["grammar-within-epoch"] = True
    longest = max(context.state.get("grammar-epoch-length", 0), int(seen.get_column("_n").max() or 0))
    context.state["grammar-epoch-length"] = longest
    shown = context.state.setdefault("grammar-first-epoch-shown", seen.item(0, "_e"))
    first = 1 if shown == 1 else 0
    if not context.state.get("grammar-within-epoch"):
        return records
    # a counter that shows 0 counts from 0: its epoch holds one position more than the largest shown (the largest
    # alone would make the next epoch's position 0 the same step as this one's last)
    from_zero = bool(context.state.get("grammar-epoch-from-zero")) or bool(
        seen.select((pl.col("_n") == 0).any()).item()
    )
    context.state["grammar-epoch-from-zero"] = from_zero
    length = longest + 1 if from_zero else longest
    total = pl.coalesce(number("_inner_total", pl.Int64), pl.lit(max(length, 1), dtype=pl.Int64))
    whole = stated.select(
        "_order", _whole=(epoch - first) * total + pl.col("step"), _later_lap=epoch != shown, _lap_of=epoch
    )
    return lap_clocks_dropped(
        records.join(whole, on="_order", how="left", maintain_order="left")
        .with_columns(step=pl.coalesce("_whole", "step"))
        .drop("_whole"),
        context,
    )


#: The state key of each task's last epoch and position read (``{task tag: (epoch, position)}``): the first line of
#: a collect going on is compared with it as with the line before it in one read of the file.
_LAST_EPOCH_AT = "grammar-last-epoch-at"


def _after_last_read(seen: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``seen`` (``source_offset``, ``_t`` task tag, ``_e`` epoch, ``_n`` position, ``_pe``/``_pn`` the task's
    previous ones) with each task's first row given the task's last epoch and position of the lines read before
    (a batch before, or a collect before: :mod:`~tierscope.collector.formats.memory` saves them), and those
    remembered for the next. Without them a collect that starts at an epoch's first lines (a cron collect after
    the last drawing of ``Epoch 0: 100%|...| 100/100``) sees no epoch advance with its position going back, and
    reads ``Epoch 1: 20/100`` as step 20: the run restarted."""
    last: dict[str, tuple[int, int]] = context.state.get(_LAST_EPOCH_AT, {})
    if last:
        carried = pl.DataFrame(
            {"_t": list(last), "_ce": [e for e, _ in last.values()], "_cn": [n for _, n in last.values()]},
            schema={"_t": pl.String, "_ce": pl.Int64, "_cn": pl.Int64},
        )
        seen = (
            seen.join(carried, on="_t", how="left", maintain_order="left")
            .with_columns(_pe=pl.coalesce("_pe", "_ce"), _pn=pl.coalesce("_pn", "_cn"))
            .drop("_ce", "_cn")
        )
    counted = seen.filter(context.counts(pl.col("source_offset")))
    ends = counted.group_by("_t", maintain_order=True).agg(pl.col("_e").last(), pl.col("_n").last())
    context.state[_LAST_EPOCH_AT] = {**last, **{t: (int(e), int(n)) for t, e, n in ends.iter_rows()}}
    return seen


#: A batch counter with no epoch on its line (MXNet R's speedometer ``Batch [50] Speed: ...``, its epochs said apart:
#: ``[1] Train-accuracy=0.70``).
_BATCH_ONLY = r"(?i)\bbatch\b"


def restarted_batches(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` with a batch counter that starts again (its line states no epoch) made a step of the run: a batch
    counts within its epoch, so each time the counter goes back a new epoch has begun, and its step is the epochs
    begun so far x the largest batch shown so far + the batch. Kept per task in ``context`` across read batches.
    A step or iteration that goes back is left as printed (a resumed run's)."""
    if records.height == 0:
        return records
    tag = pl.col(TAG).fill_null("")
    piece = pl.col("_piece")
    batch = (
        (pl.col("_position") == INNER_NAMED)
        & pl.col("step").is_not_null()
        & piece.str.contains(_BATCH_ONLY)
        & ~piece.str.contains(r"(?i)epoch|\bpass\b")
    ).fill_null(False)
    counted = records.filter(batch)
    if counted.height == 0:
        return records
    known: dict[str, tuple[int, int, int]] = context.state.setdefault("grammar-batch-restarts", {})
    counted = counted.sort("_order").with_columns(_tag=tag)
    carried = pl.DataFrame(
        {
            "_tag": list(known),
            "_last": [v[0] for v in known.values()],
            "_restarts": [v[1] for v in known.values()],
            "_longest": [v[2] for v in known.values()],
        },
        schema={"_tag": pl.String, "_last": pl.Int64, "_restarts": pl.Int64, "_longest": pl.Int64},
    )
    counted = counted.join(carried, on="_tag", how="left", maintain_order="left").with_columns(
        pl.col("_last", "_restarts", "_longest").fill_null(0)
    )
    previous = pl.coalesce(pl.col("step").shift(1).over("_tag"), pl.col("_last").first().over("_tag"))
    went_back = (pl.col("step") < previous).fill_null(False).cast(pl.Int64)
    counted = counted.with_columns(
        _epochs=pl.col("_restarts") + went_back.cum_sum().over("_tag"),
        _length=pl.max_horizontal(pl.col("_longest"), pl.col("step").cum_max().over("_tag")),
    )
    for row in (
        counted.group_by("_tag")
        .agg(pl.col("step").last(), pl.col("_epochs").last(), pl.col("_length").last())
        .iter_rows()
    ):
        known[row[0]] = (row[1], row[2], row[3])
    if not counted.select((pl.col("_epochs") > 0).any()).item():
        return records
    whole = counted.select("_order", _whole=pl.col("_epochs") * pl.col("_length") + pl.col("step"))
    return (
        records.join(whole, on="_order", how="left", maintain_order="left")
        .with_columns(step=pl.coalesce("_whole", "step"))
        .drop("_whole")
    )
