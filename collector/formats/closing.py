"""The speed a log's closing summary states over the whole run: a run-level figure, never a step record.

Many trainers end with the run's mean speed, and a log may time nothing else. Each such line becomes a
:data:`~tierscope.contract.WHOLE_RUN_RATE` event whose ``detail`` is JSON ``{"global_steps_per_s": x}`` and/or
``{"examples_per_s": y}`` (the analysis shows it as the run's mean only where no step record measures one). The
summaries read (facts about the tools' output, read 2026-12-07):

- Hugging Face Trainer's closing dict ``{'train_runtime': 85.4, 'train_samples_per_second': 187.3,
  'train_steps_per_second': 1.803, ...}`` and its ``log_metrics`` lines (``train_steps_per_second =  62.573``),
  transformers ``trainer_utils.speed_metrics``: steps and samples over ``train_runtime``, warm-up, evaluations
  and saves in it. A step's logging dict that carries such keys beside its own ``'loss'`` (Unsloth's) is no summary.
- detectron2's ``IterationTimer.after_train`` (``engine/hooks.py``): ``Overall training speed: 997 iterations in
  0:11:18 (0.6804 s / it)``; steps/s = 1 / the seconds per iteration (its seconds are printed whole, its
  s / it to 4 places). It leaves out the first iterations and the hooks' time, and is printed also when training
  raised (``after_train`` runs in a ``finally``): a mean, and no sign the run finished.
- tf_cnn_benchmarks' ``total images/sec: 138.95`` and Horovod's synthetic benchmarks' ``Total img/sec on 4 GPU(s):
  432.8 +-4.9`` (job-wide): examples/s alone, no steps/s (the batch is on another line).

Never read: an evaluation's rates (``eval_samples_per_second``), a loss (``train_loss``), a rate per device
(``Img/sec per GPU``), a value that is no positive finite number (``None`` in a config dump, ``nan``).
"""

from __future__ import annotations

import json
from typing import Final

import polars as pl

from tierscope.collector.formats.vocabulary import KEY_VALUE, NUMBER, number
from tierscope.contract import WHOLE_RUN_RATE

#: Hugging Face's whole-run rates, as a dict's keys or ``log_metrics``' ``key = value`` lines.
_HF_STEPS: Final = rf"\btrain_steps_per_second{KEY_VALUE}({NUMBER})"
_HF_SAMPLES: Final = rf"\btrain_samples_per_second{KEY_VALUE}({NUMBER})"
#: A step's logging dict (its own ``'loss'`` key, not the summary's ``'train_loss'``): its rates are no summary.
_STEP_DICT: Final = r"['\"]loss['\"]\s*:"
#: detectron2's overall speed; group 1: seconds per iteration.
_D2_SPEED: Final = rf"\bOverall training speed: \d+ iterations in \S+ \(({NUMBER}) s / it\)"
#: A benchmark's job-wide total (tf_cnn_benchmarks, Horovod's ``on N GPU(s)``); group 1: examples/s.
_BENCH_TOTAL: Final = rf"(?i)^\s*total (?:images|img|examples|samples)/sec(?: on \d+ \w+\(s\))?\s*:\s*({NUMBER})"
#: The cheap first test: a batch none of whose lines says one of these holds no closing rate.
GATE: Final = (
    r"train_(?:steps|samples)_per_second|Overall training speed|(?i:total (?:images|img|examples|samples)/sec)"
)


def _positive(value: pl.Expr) -> pl.Expr:
    """``value`` where it is a finite number > 0, else null."""
    return pl.when(value.is_finite() & (value > 0)).then(value)


def whole_run_rates(lines: pl.DataFrame, fmt: str) -> pl.DataFrame:
    """The :data:`~tierscope.contract.WHOLE_RUN_RATE` events of ``lines`` (``line``, ``source_offset``): one per
    line stating a closing summary's rate, with ``source_offset``, ``event``, ``reason`` (the figures in words),
    ``detail`` (JSON) and ``format`` ``fmt``; an empty frame where none does."""
    line = pl.col("line")
    if lines.height == 0 or not lines.select(line.str.contains(GATE).any()).item():
        return pl.DataFrame()
    summary = ~line.str.contains(_STEP_DICT)
    found = lines.select(
        "source_offset",
        steps=_positive(
            pl.coalesce(
                pl.when(summary).then(number(line.str.extract(_HF_STEPS, 1))),
                1.0 / number(line.str.extract(_D2_SPEED, 1)),
            )
        ),
        examples=_positive(
            pl.coalesce(
                pl.when(summary).then(number(line.str.extract(_HF_SAMPLES, 1))),
                number(line.str.extract(_BENCH_TOTAL, 1)),
            )
        ),
    ).filter(pl.col("steps").is_not_null() | pl.col("examples").is_not_null())
    if found.height == 0:
        return pl.DataFrame()
    rows = []
    for offset, steps, examples in found.iter_rows():
        figures = {k: v for k, v in (("global_steps_per_s", steps), ("examples_per_s", examples)) if v is not None}
        said = ", ".join(f"{v:.6g} {k.removesuffix('_per_s').replace('_', ' ')}/s" for k, v in figures.items())
        rows.append((offset, f"stated over the whole run: {said}", json.dumps(figures)))
    return pl.DataFrame(
        {
            "source_offset": [r[0] for r in rows],
            "event": [WHOLE_RUN_RATE] * len(rows),
            "reason": [r[1] for r in rows],
            "detail": [r[2] for r in rows],
            "format": [fmt] * len(rows),
        },
        schema={"source_offset": pl.Int64, **dict.fromkeys(("event", "reason", "detail", "format"), pl.String)},
    )
