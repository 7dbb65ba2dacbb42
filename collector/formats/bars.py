"""Progress bars that are not the training's, and bars that lap: what a tqdm or Keras bar's drawings mean.

A bar of evaluation, of data work or nested inside another is not a training step; a bar redrawn from 0
each epoch laps, and its clock restarts with it."""

from __future__ import annotations

import polars as pl

from tierscope.collector.formats.base import (
    STAMP,
    TAG,
    ParseContext,
)
from tierscope.collector.formats.statements import BAR_COUNTER, BAR_NAMED, BAR_POSITIONS, epoch_statements
from tierscope.collector.formats.vocabulary import (
    BAR,
    number,
)

#: A trainer's banner before an evaluation or a prediction (Hugging Face's ``***** Running Evaluation *****``, its
#: examples' ``*** Evaluate ***``), and before training (``***** Running training *****``).
#: Also the word alone on its line, as a hand-written loop prints it before each phase's bar (``Training``, the
#: bar, ``Validating``, the bar: sovit-123/German-Traffic-Sign-Recognition-with-Deep-Learning ``outputs/Outputs.md``),
#: or with what it evaluates after it (PyTorch-YOLOv3's ``---- Evaluating Model ----``, then its ``Detecting objects``
#: and ``Computing AP`` bars: eriklindernoren/PyTorch-YOLOv3 issue 650, 2021-03-20).
_EVAL_BANNER = (
    r"(?i)\*{3,}\s*(?:running\s+)?(?:evaluat|predict|test)\w*\s*\*{3,}"
    r"|^\W*(?:validat|evaluat|test)(?:e|ing|ion)?(?:\s+(?:the\s+)?(?:model|network|net|checkpoint))?\W*$"
)


#: A bar's description that names training (``Training Epoch 14``, ``Epoch 3``, ``iter``): its bar is no
#: evaluation's, whatever zone it is drawn in.
_TRAINING_DESC = r"(?i)train|epoch|iter|step|batch"


#: Where a banner sorts among its line's pieces: after them.
_AFTER_PIECES = 2**62


_TRAIN_BANNER = r"(?i)\*{3,}\s*(?:running\s+)?train\w*\s*\*{3,}|^\W*train(?:ing)?\W*$"


#: A progress bar's description: the text before ``NN%|`` or a bar without its glyphs (:data:`BAR`).
TQDM_DESC = rf"^(.*?)\s*(?:\d{{1,3}}%\||{BAR}\d+/\d+)"


#: A tqdm bar without a total: its count before ``it [``.
_BAR_NO_TOTAL = r"^\s*(\d+)it\s*\["


def lap_clocks_dropped(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` with the bar's clock of a later lap (``_later_lap`` True; ``_lap_of`` the lap, both then dropped)
    read as intervals: a bar drawn anew each epoch (Lightning's ``Epoch 1: 40%|...| 200/500 [00:11<00:16, ...]``)
    restarts its clock with each epoch, so from its second lap on the clock is the lap's, no time since the run
    began; kept, it would go back at each epoch and pass for a restart of the run. The lap's clock still times the
    lap: each of its steps' time since the lap's previous step is the rise of the clock (``_interval_s``), its first
    step's the clock itself (the bar counts from its own start), so that a run of several epochs has the time its
    bars measured (goodput's lifetime on the interval clock). A clock that went back within a lap times nothing.
    A step's drawings share its first drawing's reading, as the first lap's do; a logger's time on the line is the
    clock instead. The lap's records keep their stated rates. The last reading of each lap carries over to the
    next batch of lines in ``context``."""
    if "_bar_elapsed_s" not in records.columns:
        return records.drop("_later_lap", "_lap_of")
    later = pl.col("_later_lap").fill_null(False)
    stamped = pl.col(STAMP).is_not_null() if STAMP in records.columns else pl.lit(False)
    bar = pl.col("_position").is_in(list(BAR_POSITIONS)).fill_null(False)
    timed = later & bar & ~stamped & pl.col("_bar_elapsed_s").is_not_null()
    drawn = records.filter(timed).sort("_order").with_columns(_t=pl.col(TAG).fill_null(""))
    if drawn.height:
        # {lap: [its last clock, its last step]}: the last reading of each lap read, carried to the next batch
        known: dict[str, list] = context.state.setdefault("grammar-lap-readings", {})
        drawn = drawn.with_columns(_key=pl.concat_str("_t", pl.lit("\x1f"), pl.col("_lap_of").cast(pl.String)))
        carried_step = _carried(known, 1, pl.Int64)
        # A lap drawn again from a lower position is a new drawing of it (a resumed run appended to the log draws
        # its epochs' bars anew): its clock starts again, and no redraw of a step joins another drawing's.
        fell = pl.col("step") < pl.coalesce(pl.col("step").shift(1).over("_key"), carried_step)
        drawn = drawn.with_columns(_drawing=fell.fill_null(False).cum_sum().over("_key"))
        readings = drawn.group_by("_key", "_drawing", "step", maintain_order=True).agg(
            pl.col("source_offset").first(), _clock=pl.col("_bar_elapsed_s").first()
        )
        # the clock the last batch ended on times the first reading only where its drawing goes on here
        before = pl.when(pl.col("_drawing") == 0).then(_carried(known, 0, pl.Float64))
        readings = readings.with_columns(
            _before=pl.coalesce(pl.col("_clock").shift(1).over("_key", "_drawing"), before)
        )
        rise = pl.col("_clock") - pl.col("_before")
        readings = readings.with_columns(
            _lap_interval=pl.when(pl.col("_before").is_null()).then("_clock").when(rise >= 0).then(rise)
        )
        counted = readings.filter(context.counts(pl.col("source_offset")))
        last = counted.group_by("_key", maintain_order=True).agg(pl.col("_clock").last(), pl.col("step").last())
        known.update({key: [clock, step] for key, clock, step in last.iter_rows()})
        # each drawing's step takes its first reading (a step's redraws share it, as the first lap's do)
        found = drawn.select("_order", "_key", "_drawing", "step").join(
            readings.select("_key", "_drawing", "step", "_lap_interval"), on=["_key", "_drawing", "step"], how="left"
        )
        records = records.join(found.select("_order", "_lap_interval"), on="_order", how="left", maintain_order="left")
        records = records.with_columns(
            _interval_s=pl.when(timed).then(pl.coalesce("_interval_s", "_lap_interval")).otherwise("_interval_s")
        ).drop("_lap_interval", strict=False)
    return records.with_columns(_bar_elapsed_s=pl.when(later).then(None).otherwise("_bar_elapsed_s")).drop(
        "_later_lap", "_lap_of"
    )


def bar_visits(records: pl.DataFrame, drawn: pl.Expr) -> pl.DataFrame:
    """``records`` (with ``_order``, the task's ``TAG``, ``step`` and, where the bar shows it, ``_bar_elapsed_s``)
    with ``_visit`` (UInt32 on the rows where ``drawn``, a bar's drawing; null elsewhere): the task's bar drawings
    numbered anew each time the bar starts again, its position and its clock both lower than at its drawing before
    (a resumed run appended to the log draws its steps again, its clock from zero). A step's drawings within one
    visit are one record (a bar redrawn at its step after a logging dict, an evaluation). A position lower with the
    clock going on is no new start: two processes' bars interleaved without a rank tag (Horovod's ranks, 234 then
    233 at 00:31 and 00:32) are one drawing, each step's drawings one record, as one read always took them."""
    bars = records.filter(drawn).sort("_order")
    if bars.height == 0:
        return records.with_columns(_visit=pl.lit(None, pl.UInt32))
    clock = pl.col("_bar_elapsed_s") if "_bar_elapsed_s" in bars.columns else pl.lit(None, pl.Float64)
    lower = pl.col("step") < pl.col("step").shift(1)
    # an unknown clock cannot say the bar went on: the lower position alone is the new start
    earlier = (clock < clock.shift(1)).fill_null(True)
    restarted = (lower & earlier).fill_null(False)
    visits = bars.select("_order", _visit=restarted.cast(pl.UInt32).cum_sum().over(TAG))
    return records.join(visits, on="_order", how="left", maintain_order="left")


def _carried(known: dict[str, list], at: int, dtype: pl.DataType) -> pl.Expr:
    """Item ``at`` of each row's lap's entry in ``known`` (``_key`` -> [clock, step]); null for a lap not read
    before."""
    if not known:
        return pl.lit(None, dtype)
    return pl.col("_key").replace_strict({k: v[at] for k, v in known.items()}, default=None, return_dtype=dtype)


def bar_laps(records: pl.DataFrame, context: ParseContext) -> pl.DataFrame:
    """``records`` with the position of a bar that states no epoch made a step of the run where the bar restarts: a
    training loop that draws a new bar each epoch (``24/100 ... 100/100``, then ``24/100`` again) is on its second lap,
    and its step is lap x total + position (100 + 24 = 124). Bars of each total are counted apart (an evaluation's
    bar between them starts no lap); a redraw at the same position is the same step, but for a finished bar drawn
    again lines later with another loss: the next epoch's. The laps and the last position
    of each bar carry over to later batches in ``context``."""
    if records.height == 0:
        return records
    tag = pl.col(TAG).fill_null("")
    bars = records.filter((pl.col("_position") == BAR_NAMED) & pl.col("step").is_not_null())
    if bars.height == 0:
        return records
    stated = epoch_statements(pl.col("_piece"), pl.col("_position"))
    bars = bars.filter(stated["epoch"].is_null()).with_columns(
        _key=pl.concat_str(tag, pl.lit("\x1f"), stated["inner_total"].fill_null(""))
    )
    if bars.height == 0:
        return records
    known: dict[str, tuple[int, int]] = context.state.setdefault("grammar-bar-laps", {})
    earlier_lap = pl.col("_key").replace_strict({k: v[0] for k, v in known.items()}, default=0, return_dtype=pl.Int64)
    earlier_n = pl.col("_key").replace_strict({k: v[1] for k, v in known.items()}, default=None, return_dtype=pl.Int64)
    # a finished bar drawn again lines later with another training loss is the next lap's: a copy that kept only each
    # epoch's finished bar (``100% 2774/2774 [14:15<00:00, 3.24it/s, train_loss=5.86]``, then ``train_loss=5.49``);
    # one step states one loss, so a redraw of the same bar (its closing refresh after an evaluation) keeps it
    finished_again = (
        (pl.col("step") == pl.col("_prev"))
        & (pl.col("step") == number(stated["inner_total"], pl.Int64))
        & (pl.col("source_offset") - pl.col("_prev_offset") > 1)
        & (pl.col("loss") != pl.col("_prev_loss"))
    )
    laps = (
        bars.sort("_order")
        .with_columns(
            _prev=pl.col("step").shift(1).over("_key"),
            _prev_offset=pl.col("source_offset").shift(1).over("_key"),
            _prev_loss=pl.col("loss").shift(1).over("_key"),
        )
        .with_columns(_prev=pl.coalesce("_prev", earlier_n))
        .with_columns(_restart=((pl.col("step") < pl.col("_prev")) | finished_again).fill_null(False).cast(pl.Int64))
        .with_columns(_lap=earlier_lap + pl.col("_restart").cum_sum().over("_key"))
    )
    counted = laps.filter(context.counts(pl.col("source_offset")))
    for key, lap, n in counted.group_by("_key").agg(pl.col("_lap").last(), pl.col("step").last()).iter_rows():
        known[key] = (int(lap), int(n))
    total = number(stated["inner_total"], pl.Int64)
    whole = laps.filter(pl.col("_lap") > 0).select(
        "_order",
        _whole=pl.col("_lap") * total + pl.col("step"),
        _later_lap=pl.lit(True),
        _lap_of=pl.concat_str("_key", pl.lit("\x1f"), pl.col("_lap").cast(pl.String)),
    )
    if whole.height == 0:
        return records
    return lap_clocks_dropped(
        records.join(whole, on="_order", how="left", maintain_order="left")
        .with_columns(step=pl.coalesce("_whole", "step"))
        .drop("_whole"),
        context,
    )


def evaluation_bars(read: pl.DataFrame, lines: pl.DataFrame, context: ParseContext) -> pl.Series:
    """For each row of ``read`` (pieces with ``_order``, ``_piece``): whether it is a bar of an evaluation that has no
    description: after an evaluation's banner (:data:`_EVAL_BANNER`, until a training banner), a bar without a
    description whose total is not the training bar's (the total of the last such bar before the banner: Hugging
    Face's ``345/345`` training bar, then its ``51/51`` evaluation bar; where no training bar came before, the total
    of the first bar after the banner). What the file has shown so far (in a zone or not, the training bar's total)
    carries over to later batches in ``context``."""
    known = context.state.setdefault("grammar-eval-zone", {"zone": False, "total": None})
    banner = pl.col("line").str.contains(_EVAL_BANNER)
    if not lines.select(banner.any()).item() and not known["zone"]:
        return pl.Series([False] * read.height, dtype=pl.Boolean)
    banners = lines.filter(banner | pl.col("line").str.contains(_TRAIN_BANNER)).select(
        "source_offset",
        # after the pieces of its own line (a bar's line the banner was glued to: ``...3.37it/s][...] - ***** Running
        # Evaluation *****``)
        pl.lit(_AFTER_PIECES, dtype=pl.Int64).alias("_at"),
        pl.col("line").str.contains(_EVAL_BANNER).alias("_zone"),
        pl.lit(False).alias("_candidate"),
        pl.lit(None, dtype=pl.Int64).alias("_total"),
    )
    # A bar with a description that names no training is judged as one without (``Detecting objects: 100% 13/13``);
    # one whose description names training is never an evaluation's, but its total is the training bar's.
    desc = pl.col("_piece").str.extract(TQDM_DESC, 1).str.strip_chars()
    descless = (desc == "") | ~desc.str.contains(_TRAINING_DESC) | pl.col("_piece").str.contains(_BAR_NO_TOTAL)
    bars = read.select(
        "source_offset",
        pl.col("_order").cast(pl.Int64).alias("_at"),
        pl.lit(None, dtype=pl.Boolean).alias("_zone"),
        descless.fill_null(False).alias("_candidate"),
        # a bar without a total (``8it [00:08,  1.11s/it]``) is told by its count: an epoch's bars end at one count
        pl.when(descless | desc.str.contains(_TRAINING_DESC))
        .then(
            pl.coalesce(
                number(pl.col("_piece").str.extract(BAR_COUNTER, 1), pl.Int64),
                number(pl.col("_piece").str.extract(_BAR_NO_TOTAL, 1), pl.Int64),
            )
        )
        .alias("_total"),
    )
    seen = (
        pl.concat([banners, bars])
        .sort("source_offset", "_at")
        .with_columns(pl.col("_zone").forward_fill().fill_null(known["zone"]))
        .with_columns(
            _train=pl.when(~pl.col("_zone"))
            .then("_total")
            .forward_fill()
            .fill_null(pl.lit(known["total"], dtype=pl.Int64)),
        )
        .with_columns(_train_before=pl.col("_train").shift(1).fill_null(pl.lit(known["total"], dtype=pl.Int64)))
    )
    counted = seen.filter(context.counts(pl.col("source_offset")))
    if counted.height:
        known["zone"] = bool(counted.get_column("_zone")[-1])
        total = counted.get_column("_train")[-1]
        known["total"] = None if total is None else int(total)
    # where the training bar's total is not known yet (an excerpt that starts at the banner), the evaluation's bar is
    # the first one after its banner
    banner_no = (pl.col("_at") == _AFTER_PIECES).cast(pl.Int64).cum_sum()
    first_after = pl.col("_total").drop_nulls().first().over(banner_no)
    evaluation = (
        pl.col("_zone")
        & pl.col("_candidate")
        & pl.col("_total").is_not_null()
        & pl.when(pl.col("_train_before").is_not_null())
        .then(pl.col("_total") != pl.col("_train_before"))
        .otherwise(pl.col("_total") == first_after)
    )
    flags = seen.filter(pl.col("_at") != _AFTER_PIECES).select("_at", evaluation.fill_null(False).alias("_eval"))
    return (
        read.select(pl.col("_order").cast(pl.Int64).alias("_at"))
        .join(flags, on="_at", how="left")
        .get_column("_eval")
        .fill_null(False)
    )


#: A tqdm bar's drawing: its position (group 1) and total (group 2).
BAR_COUNTS_DRAWN = rf"{BAR}(\d+)/(\d+)"


def lossless_bars(read: pl.DataFrame, context: ParseContext) -> pl.Series:
    """For each row of ``read`` (pieces with ``_position``, ``_piece``, ``_loss``, ``_not_training``): whether it is a
    drawing of a bar that never states a loss, of another total than a bar that does, in the same stream: the
    evaluation's pass beside the training bar, which carries the training loss in its postfix (SpeechBrain's
    ``100%|...| 190/190 [03:08<00:00,  1.01it/s, train_loss=0.945]`` then ``100%|...| 137/137 [01:43<00:00,
    1.33it/s]``, speechbrain/speechbrain PR 2216 and issue 938). A total drawn with a loss once is the training
    bar's, however many of its drawings lack it (tqdm draws the postfix after the first step). The totals seen with
    a loss carry over to later batches in ``context``."""
    known: dict[str, list[int]] = context.state.setdefault("grammar-loss-bar-totals", {})
    bar = (pl.col("_position") == BAR_NAMED).fill_null(False) & ~pl.col("_not_training")
    bars = read.select(
        bar.alias("_bar"),
        pl.col(TAG).fill_null("").alias("_tag"),
        number(pl.col("_piece").str.extract(BAR_COUNTER, 1), pl.Int64).alias("_total"),
        pl.col("_loss").is_not_null().alias("_has_loss"),
        context.counts(pl.col("source_offset")).alias("_counts"),
    )
    lossy = bars.filter("_bar" & pl.col("_has_loss") & pl.col("_total").is_not_null())
    totals = {tag: set(values) for tag, values in known.items()}
    for tag, total, counts in lossy.select("_tag", "_total", "_counts").iter_rows():
        totals.setdefault(tag, set()).add(total)
        if counts:
            known[tag] = sorted(set(known.get(tag, [])) | {total})
    if not totals:
        return pl.Series([False] * read.height, dtype=pl.Boolean)
    pairs = pl.DataFrame(
        [(tag, total) for tag, values in totals.items() for total in values],
        schema={"_tag": pl.String, "_total": pl.Int64},
        orient="row",
    )
    with_loss = pairs.with_columns(_lossy=pl.lit(True))
    flagged = bars.with_row_index("_i").join(with_loss, on=["_tag", "_total"], how="left").sort("_i")
    has_lossy_tag = pl.col("_tag").is_in(pairs.get_column("_tag").unique().implode())
    return flagged.select(
        (pl.col("_bar") & pl.col("_total").is_not_null() & has_lossy_tag & pl.col("_lossy").is_null()).fill_null(False)
    ).to_series()


def nested_bars(read: pl.DataFrame, context: ParseContext) -> pl.Series:
    """For each row of ``read`` (pieces with ``_order``, ``_piece``, ``_not_training``): whether it is a drawing of a
    bar nested in the training bar: a second bar, of another total, drawn between two drawings of the training bar
    while it is paused (Hugging Face's Trainer draws its evaluation's bar, ``0/400`` to ``400/400`` with no
    description, between two drawings of its training bar at step 200, ``200/1000`` then ``200/1000`` or
    ``201/1000``). Per stream (:data:`TAG`), the drawings of one total in a row are a *run*; a run of total M is nested
    when the run before it is of another total N that counts on by itself somewhere (two drawings in a row of a run
    of N rising: the training bar's steps, never an epoch bar drawn once between the laps of the bar inside it) and

    - the run after it is of total N again and goes on from where N stood (its first position not below the last
      one): N was paused, not begun anew; or
    - no run follows yet (the batch ends), N is not at its total (a training bar unfinished is drawn again) and
      the run begins a bar anew (its total not seen before, or its position below the last one seen).

    A run that opens its stream (nothing before it, in this batch or carried) is not the training bar's either where
    the run after it is of a larger total that counts on by itself and it is not drawn again: a bar of another loop
    drawn before the training bar, or one nested in it that the excerpt begins inside (axolotl's data bar ``2/3
    [00:01<00:00,  1.68it/s]`` with no description, then the training bar's ``281/873 [25:36<52:46,  5.35s/it]``,
    ``282/873`` ...: axolotl-ai-cloud/axolotl issue 592, 2023-09-17). Read as training, its 2 steps and its clock's
    1 s would join the training bar's 281 steps and 1536 s as one interval of one counter and one clock.

    Two bars with different totals in one stream are so two bars, never one counter. The last run of each stream,
    the totals that count on by themselves and the last position of each total carry over to later batches in
    ``context``."""
    flags = pl.Series([False] * read.height, dtype=pl.Boolean)
    drawn = pl.col("_piece").str.extract_groups(BAR_COUNTS_DRAWN)
    bars = (
        read.select(
            pl.col("_order").cast(pl.Int64).alias("_at"),
            pl.col(TAG).fill_null("").alias("_tag"),
            number(drawn.struct.field("1"), pl.Int64).alias("_n"),
            number(drawn.struct.field("2"), pl.Int64).alias("_total"),
            "source_offset",
            "_not_training",
        )
        .filter(pl.col("_total").is_not_null() & pl.col("_n").is_not_null() & ~pl.col("_not_training"))
        .sort("_at")
    )
    known: dict[str, dict] = context.state.setdefault("grammar-nested-bars", {})
    if bars.height == 0 or (bars.get_column("_total").n_unique() < 2 and not known):
        return flags
    runs = (
        bars.with_columns(_new=(pl.col("_total") != pl.col("_total").shift(1).over("_tag")).fill_null(True))
        .with_columns(_run=pl.col("_new").cast(pl.Int64).cum_sum())
        .group_by("_run", maintain_order=True)
        .agg(
            pl.col("_tag").first(),
            pl.col("_total").first(),
            pl.col("_n").first().alias("first_matched"),
            pl.col("_n").last().alias("_last"),
            (pl.col("_n").diff() > 0).any().alias("_rises"),
            pl.col("_at"),
            pl.col("source_offset").max().alias("_offset"),
        )
    )
    counted = runs.with_columns(_counts=context.counts(pl.col("_offset"))).get_column("_counts").to_list()
    nested_at: list[int] = []
    by_tag: dict[str, list[tuple]] = {}
    for row, counts in zip(runs.iter_rows(), counted, strict=True):
        by_tag.setdefault(row[1], []).append((*row[2:7], counts))
    for tag, stream in by_tag.items():
        state = known.get(tag, {"rising": [], "seen": {}, "last": None})
        rising = set(state["rising"]) | {r[0] for r in stream if r[3]}
        seen = dict(state["seen"])
        before = state["last"]  # (total, last position, nested) of the run before
        for i, (total, first, last, _rises, at, counts) in enumerate(stream):
            after = stream[i + 1] if i + 1 < len(stream) else None
            if before is not None and before[0] == total:  # the carried run goes on
                nested = bool(before[2])
            elif before is None:
                # the stream's first run: another loop's bar where a larger bar that counts on follows it and it is
                # not drawn again (a bar that comes back was paused by the other: the training bar, an evaluation's
                # bar of more batches drawn inside it)
                again = any(r[0] == total for r in stream[i + 1 :])
                nested = after is not None and after[0] > total and after[0] in rising and not again
            elif before[0] not in rising:
                nested = False
            elif after is not None:
                nested = after[0] == before[0] and after[1] >= before[1]
            else:
                fresh = total not in seen or first < seen[total]
                nested = before[1] < before[0] and fresh
            if nested:
                nested_at.extend(at)
            if counts:
                seen[total] = last
                state = {"rising": sorted(rising), "seen": dict(seen), "last": (total, last, nested)}
            before = (total, last, nested)
        known[tag] = state
    if not nested_at:
        return flags
    return read.select(pl.col("_order").cast(pl.Int64).is_in(nested_at)).to_series()
