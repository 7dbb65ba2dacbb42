"""A trainer's logging dict: metrics with no step of their own, placed at the step of a record beside them.

Hugging Face's Trainer prints its metrics as a Python dict between the redraws of its progress bar
(``{'loss': 0.6821, 'grad_norm': 1.23, 'learning_rate': 4.9e-05, 'epoch': 0.2}``): no step, no time, so
no step record. Its ``on_log`` runs after the bar's ``on_step_end`` has drawn the step it logs
(transformers ``trainer_callback.py``, ``ProgressCallback``, read 2026-12-06), so the dict's step is the
one of the record right before it, of the same task. Where no record comes before it (an excerpt that
starts mid-run, bars drawn only at the end), the dict's ``epoch`` gives the step over the steps per
epoch: the bar's total (``N/M``) over the epochs the run states (``Num Epochs = E``, or the ``epoch``
of the trainer's closing ``train_runtime`` dict); the dict then lands only on a record at that very
step. A dict placed at no record stays unread (no step record is made of a metric alone: it states no
time and would start a segment of its own).
"""

from __future__ import annotations

from typing import Final

import polars as pl

from tierscope.collector.formats.base import TAG
from tierscope.collector.formats.vocabulary import BAR, NUMBER, number

_Q = r"['\"]"
#: A logging dict holding the loss under its own key (not a summary's ``train_loss``), and its epoch.
LOGGING_DICT: Final = rf"^\s*\{{[^{{}}]*{_Q}loss{_Q}\s*:\s*({NUMBER})[^{{}}]*\}}\s*$"
_EPOCH: Final = rf"{_Q}epoch{_Q}\s*:\s*({NUMBER})"
#: The epochs a run states: Hugging Face's ``Num Epochs = 3`` or its closing dict's ``'epoch': 3.0``.
_EPOCHS_STATED: Final = (r"(?i)\bNum Epochs\s*=\s*(\d+)", rf"{_Q}train_runtime{_Q}.*{_EPOCH}")
#: A progress bar's total (the ``M`` of ``NN%|...| N/M``, of ``NN% N/M`` without glyphs).
_BAR_TOTAL: Final = rf"{BAR}\d+/(\d+)"


def dict_statements(piece: pl.Expr) -> dict[str, pl.Expr]:
    """``dict_loss`` and ``dict_epoch`` (Float64) of a piece that is a logging dict, else null;
    ``bar_total`` (Int64), a tqdm bar's total, else null."""
    loss = number(piece.str.extract(LOGGING_DICT, 1))
    return {
        "dict_loss": loss,
        "dict_epoch": pl.when(loss.is_not_null()).then(number(piece.str.extract(_EPOCH, 1))),
        "bar_total": number(piece.str.extract(_BAR_TOTAL, 1), pl.Int64),
    }


def epochs_stated(lines: pl.DataFrame) -> float | None:
    """The number of epochs ``lines`` (a ``line`` column) state, the last statement winning; None: none."""
    found = lines.select(pl.coalesce(number(pl.col("line").str.extract(r, 1)) for r in _EPOCHS_STATED).alias("e"))
    values = found.get_column("e").drop_nulls()
    values = values.filter(values > 0)
    return float(values[-1]) if values.len() else None


def place_dict_losses(records: pl.DataFrame, dicts: pl.DataFrame, epochs: float | None) -> tuple[pl.DataFrame, list]:
    """``records`` with the loss of the logging ``dicts`` filled in where they had none, and the
    ``source_offset`` of each dict so placed.

    Both frames hold ``_order`` (UInt32, the pieces' order in the batch) and :data:`TAG`; ``records``
    ``step``, ``loss`` and ``_bar_total``; ``dicts`` ``_dict_loss``, ``_dict_epoch`` and ``source_offset``.
    A dict goes to the record right before it of its task, else (see the module doc) to the first record
    at ``round(epoch x bar total / epochs)``. Several dicts at one record: the last one's loss."""
    if records.height == 0 or dicts.height == 0:
        return records, []
    tag = pl.col(TAG).fill_null("")
    recs = records.with_columns(_tagk=tag).sort("_order")
    found = (
        dicts.with_columns(_tagk=tag)
        .sort("_order")
        .join_asof(
            recs.select("_order", "_tagk", pl.col("_order").alias("_at")),
            on="_order",
            by="_tagk",
            strategy="backward",
            check_sortedness=False,
        )
    )
    total = recs.get_column("_bar_total").drop_nulls()
    if epochs and total.len():
        per_epoch = float(total[-1]) / epochs
        firsts = recs.group_by("_tagk", "step", maintain_order=True).agg(pl.col("_order").first().alias("_by_epoch"))
        found = found.with_columns(step=(pl.col("_dict_epoch") * per_epoch).round(0).cast(pl.Int64, strict=False)).join(
            firsts, on=["_tagk", "step"], how="left"
        )
        found = found.with_columns(pl.coalesce("_at", "_by_epoch").alias("_at"))
    placed = found.filter(pl.col("_at").is_not_null())
    losses = placed.group_by("_at").agg(pl.col("_dict_loss").sort_by("_order").last().alias("_placed"))
    out = (
        recs.join(losses, left_on="_order", right_on="_at", how="left")
        .with_columns(pl.coalesce("loss", "_placed").alias("loss"))
        .drop("_placed", "_tagk")
    )
    return out, placed.get_column("source_offset").unique().to_list()
