"""A report printed as a block under a header that says its position: read from its first occurrence.

A group of lines (:mod:`~tierscope.collector.formats.stanzas`) is found by repetition where its words alone do not
say it is a report. Some say so at once: a header whose words state a position and nothing else (Mozilla TTS's
``--> STEP: 309/390 -- GLOBAL_STEP: 91150``, rsl_rl's ``Learning iteration 1/10``), then lines of figures, each a
key and its number (``| > step_time: 3.02``, ``Iteration time: 0.16s``), one of them a measure the vocabulary
names. Such a block is a report the first time it is printed; a log of two of them (an issue's excerpt) reads two.

The block runs from its header over its figure lines (lines without words, blank lines and rules, inside it) to
the next header of its shape, the first line with words that is no figure (a progress bar's drawing is none), or
:data:`MOST_LINES`; a block whose first figure is indented ends at a line with words that is not. Refused, so its
lines are read one by one as before: a header that may measure something itself (a bar), names an evaluation,
other work, a summary or settings (``Evaluation at step 100``, ``Final results at step 1000``, ``Config for step
5:``) or is a key and its number alone (YAML's ``step: 5``); a block whose joined statement states no measure (a
config dump under ``step 5`` measures nothing) or whose lines read as a record on their own.

A result dump says its position last: Ray Tune's result printed as YAML (RLlib's ``pretty_print(result)``), one key
a line from ``custom_metrics: {}`` to ``training_iteration: 6``, with ``time_this_iter_s: 2.88`` among them. Such a
block (:func:`footed`) runs back from a key-and-number line that states a position and nothing else over the lines
of keys before it (nested ones indented) to a blank line, a line that is no key's or the task's first line; it is a
report where its joined statement states a measure, under the same refusals.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

import polars as pl

from tierscope.collector.formats.templates import template
from tierscope.collector.formats.vocabulary import BAR, BARE_TIMES, MEASURE_GATE, UNNAMED_TIMES

#: The longest block looked for, in lines (as the repeated groups').
MOST_LINES: Final = 40
#: How many figure lines a block needs under its header: one is a line of its own, not a block.
LEAST_FIGURES: Final = 2
#: How many headers are tried before none is taken (a header whose block is refused may come first).
_TRIES: Final = 3

#: A line with a word: lines without one (blank lines, rules) are inside a block and say nothing.
_WORDS: Final = r"[A-Za-z]"
#: A figure line: a key of words, then a number (``| > step_time: 3.02``, ``Mean reward: -4.08``, ``ETA: 00:00:09``,
#: a table row ``|    fps    | 1025 |``).
_FIGURE: Final = r"^[\s|>*-]*[A-Za-z][\w ./()%-]*?\s*[:=|]\s*[-+]?\.?\d"
#: A progress bar's drawing (``Epoch 1/3:  40%|####  | 40/100``, ``Training: 0it [00:00, ?it/s]``): a line of its
#: own, never a figure of a block nor its header.
_DRAWING: Final = rf"{BAR}\d+/\d+|\d+it \["
#: A header's words that say the block sums up, or is, other work than a training step.
_SUMMARY: Final = r"(?i)\b(?:best|final|summary|total|results?|average|mean)\b"
#: A header's words that say the block holds settings, not a report (``Config for step 5:``, ``Hyperparameters``).
_SETTINGS: Final = r"(?i)\b(?:config\w*|conf|hyper-?param\w*|param\w*|settings?|options?|arguments?|args)\b"
#: A header that is a key and its number alone (YAML's ``step: 5``): a setting among settings, not a position.
_KEY_ALONE: Final = r"^\s*[A-Za-z_][\w.-]*\s*[:=]\s*\d+\s*$"
#: A line of a YAML mapping: a key (indented where nested), its colon, then its value or nothing (``info:``).
_YAML_KEY: Final = r"^\s*[A-Za-z_][\w./-]*:(?:\s.*)?$"
#: The grammar's measures: a block that states none of them is no report of training progress.
_MEASURED: Final = ("per_s", "global_per_s", "examples_per_s", "interval_s", "elapsed_s")

#: ``statements(messages)``: the grammar's statements of each message (one row each); handed in, as to the stanzas.
Statements = Callable[[pl.Series], pl.DataFrame]
#: ``alone(lines)``: whether any of ``lines`` reads as a record on its own (the format chain's verdict).
Alone = Callable[[pl.DataFrame], bool]


def _block_end(texts: list[str], templates: list[str], start: int) -> int:
    """Where the block headed at ``start`` ends (exclusive), its trailing lines without words left out."""
    end = start + 1
    indented = None  # whether the block's first figure line is indented: then a line that is not ends it
    while end < len(texts) and end - start < MOST_LINES:
        text = texts[end]
        if templates[end] == templates[start]:
            break
        if re.search(_WORDS, text) and (not re.search(_FIGURE, text) or re.search(_DRAWING, text)):
            break
        if re.search(_WORDS, text):
            flush = not text[:1].isspace()
            if indented is None:
                indented = not flush
            elif indented and flush:
                break
        end += 1
    while end > start + 1 and not re.search(_WORDS, texts[end - 1]):
        end -= 1
    return end


def headed(
    task: pl.DataFrame, statements: Statements, not_training: str, alone: Alone, joined: Callable[[list[str]], str]
) -> tuple[str, ...] | None:
    """The templates of the lines with words of the first block under a position header in ``task`` (one task's
    lines in order: ``source_offset``, ``line``), or None where it has none that is a report (see the module doc).
    ``not_training``: the pattern of other work's words; ``joined``: a block's lines as one statement."""
    texts = task.get_column("line").to_list()
    templates = task.select(template(pl.col("line"))).to_series().to_list()
    figure = [bool(re.search(_FIGURE, t)) for t in texts]
    worded = [bool(re.search(_WORDS, t)) for t in texts]
    # a header: a line with a number and words, the next line with words after it a figure
    candidates = []
    for i, text in enumerate(texts):
        if not worded[i]:
            continue
        after = next((j for j in range(i + 1, min(i + 3, len(texts))) if worded[j]), None)
        if after is None or not figure[after]:
            continue
        # a header states its position and nothing a measure could be read from (a bar's ``?it/s``): asked only
        # here, of the few lines a figure follows (the gate's alternation costs ~15 µs a line in ``re``)
        if re.search(r"\d", text) and not re.search(MEASURE_GATE, text) and not re.search(_DRAWING, text):
            candidates.append(i)
    if not candidates:
        return None
    read = statements(pl.Series([texts[i] for i in candidates], dtype=pl.String))
    measured = pl.any_horizontal(pl.col(c).is_not_null() for c in _MEASURED)
    positional = read.select(
        pl.col("step").is_not_null() & ~measured & ~pl.col("evaluation") & ~pl.col("other_work")
    ).to_series()
    tries = _TRIES
    for i, is_header in zip(candidates, positional.to_list(), strict=True):
        refused = (_SUMMARY, _SETTINGS, _KEY_ALONE, not_training)
        if not is_header or any(re.search(p, texts[i]) for p in refused):
            continue
        end = _block_end(texts, templates, i)
        lines = [t for t in texts[i:end] if re.search(_WORDS, t)]
        if sum(bool(re.search(_FIGURE, t)) for t in lines[1:]) < LEAST_FIGURES:
            continue
        whole = statements(pl.Series([joined(lines)], dtype=pl.String))
        reads = whole.select(pl.col("step").is_not_null() & measured & ~pl.col("evaluation")).item()
        if reads and not alone(task.slice(i, end - i)):
            return tuple(templates[j] for j in range(i, end) if worded[j])
        tries -= 1
        if tries == 0:
            break
    return None


def _dump_start(texts: list[str], footer: int) -> int:
    """Where the result dump that ``footer`` (its position's line) closes starts: back over the lines of keys
    before it to a line that is none (a blank line, a header, another message), at most :data:`MOST_LINES` back."""
    start = footer
    while start > 0 and footer - start < MOST_LINES - 1 and re.search(_YAML_KEY, texts[start - 1]):
        start -= 1
    return start


def footed(
    task: pl.DataFrame, statements: Statements, not_training: str, alone: Alone, joined: Callable[[list[str]], str]
) -> tuple[str, ...] | None:
    """The templates of the lines of the first result dump in ``task`` (one task's lines in order) that is a report
    (see the module doc), or None. Arguments as :func:`headed`'s."""
    texts = task.get_column("line").to_list()
    footers = [i for i, t in enumerate(texts) if re.search(_KEY_ALONE, t) and re.search(_YAML_KEY, t)]
    if not footers:
        return None
    read = statements(pl.Series([texts[i] for i in footers], dtype=pl.String))
    measured = pl.any_horizontal(pl.col(c).is_not_null() for c in _MEASURED)
    positional = read.select(pl.col("step").is_not_null() & ~measured).to_series().to_list()
    tries = _TRIES
    for i, is_footer in zip(footers, positional, strict=True):
        if not is_footer:
            continue
        start = _dump_start(texts, i)
        lines = texts[start : i + 1]
        # a dump under a header of settings (``Config:``, ``Hyperparameters:``, as a line of its own or its first
        # key) is a config's
        header = (texts[start - 1] if start > 0 else "") + " " + lines[0]
        if len(lines) <= LEAST_FIGURES or re.search(_SETTINGS, header) or re.search(not_training, lines[0]):
            continue
        whole = statements(pl.Series([joined(lines)], dtype=pl.String))
        # ... and a key named only ``time`` (a setting's ``time: 3``) is no measure of one
        named = ~pl.col("measure").is_in(list(UNNAMED_TIMES | BARE_TIMES)).fill_null(True)
        reads = whole.select(pl.col("step").is_not_null() & measured & named & ~pl.col("evaluation")).item()
        if reads and not alone(task.slice(start, i + 1 - start)):
            templates = task.slice(start, i + 1 - start).select(template(pl.col("line"))).to_series().to_list()
            return tuple(templates)
        tries -= 1
        if tries == 0:
            break
    return None
