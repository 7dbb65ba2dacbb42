"""A message's template: its words and layout with every number taken out as a *slot*.

Lines a trainer prints from one format string differ only in their numbers (and in the padding that
aligns them), so their templates are equal: ``loss: 2.31`` and ``loss: 0.07`` are both ``loss: #``.
Modules that learn a file's layout by repetition (the learned layout, the stanzas) compare templates,
never the lines themselves, and read a slot's number with :func:`value`. What one slot is:

- a sign belongs to its number where no word or number is glued before it (``loss -0.5``, ``lr=-1``):
  a figure printed negative is one slot and reads negative, so a check refuses it; a dash between two
  numbers (``1-3``, ``2024-05-01``) parts them;
- digits grouped by thousands (``1,000,000``: groups of three after a comma) are one number, 1000000;
  other commas part numbers (``[1,2]``, ``0.5,0.3``);
- a clock (``12:34:56``, ``0:05``, ``8:37:01.05``: minutes and seconds of two digits) is one slot, its
  seconds (45296 for ``12:34:56``), never three counters (its minutes and seconds restart as an epoch's
  counter does);
- digits glued after a word's letters (``a100``, ``w1075``, ``resnet50``, ``fp16``) and a hexadecimal
  number (``0x1F``) are part of a word, never a slot; digits before letters stay a number with its unit
  (``100ms``, ``1.36s``, ``3e5``);
- ``nan`` and ``inf`` stand where a number does (a measure that came out NaN still matches its template);
- so does a value that is none, JSON's ``null`` or Python's ``None`` after its key's ``:`` or ``=`` (a trainer's JSON
  log writes ``"loss": null`` on a line with no loss to report): a slot with no number, its value null.
"""

from __future__ import annotations

import re
from typing import Final

import polars as pl

from tierscope.collector.formats.vocabulary import clock_seconds

#: What a number slot becomes in a template.
SLOT: Final = "#"

#: A word with digits glued after its letters (group 1 its letters) or a hexadecimal number: written as its letters
#: and ``D`` before slots are cut, so its digits stay the word's (a polars regex has no look-behind to skip them).
_GLUED: Final = r"\b0[xX][0-9A-Fa-f]+\b|\b([A-Za-z][A-Za-z]*)\d[\w.]*"
#: A key's value that is none (group 1 what comes before it: the key's ``:`` or ``=`` and a quote or spaces), written
#: :data:`_NO_VALUE` before slots are cut so that it is one (LLaMA-Factory's ``trainer_log.jsonl`` writes its last
#: line ``{"current_steps": 3235, "total_steps": 3235, "loss": null, ..., "elapsed_time": "5:16:48", ...}``,
#: hiyouga/LlamaFactory issue 774, 2023-09-04; its lines before print ``"loss": 4.4598``). A ``None`` in a sentence is a
#: word.
_NONE_VALUE: Final = r"([:=]\s*)(?:null|None)\b"
#: What a value that is none becomes: a slot whose number is null.
_NO_VALUE: Final = "\N{EMPTY SET}"
#: A number as trainers print them (see the module doc): a sign where nothing is glued before it, then a clock,
#: digits grouped by thousands, or a decimal with its exponent; ``nan`` and ``inf`` (valid in polars and ``re``).
NUMBER: Final = (
    r"(?:\B[-+])?(?:\d+(?::\d\d){1,2}(?:\.\d+)?|\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
    rf"|\b(?i:nan|inf(?:inity)?)\b|{_NO_VALUE})"
)
#: A rule of three or more of one character (``-----``, ``=====``): its length follows the widest value printed.
_RULE: Final = r"([-=_*#~+.])[-=_*#~+.]{2,}"
#: A slot that is a whole number >= 0 (a position, a counter): digits, or digits grouped by thousands.
WHOLE_SLOT: Final = r"^(?:\d+|\d{1,3}(?:,\d{3})+)$"


#: What a ``#`` of the line's own becomes, so that a template's every :data:`SLOT` is a slot (``iter #5``).
_OWN_MARK: Final = "\N{NUMERO SIGN}"


def _unglued(text: pl.Expr) -> pl.Expr:
    # rules are shortened before the numbers are cut, so a slot's mark is never part of a rule
    return (
        text.str.replace_all(_NONE_VALUE, f"${{1}}{_NO_VALUE}")
        .str.replace_all(_GLUED, "${1}D")
        .str.replace_all(_RULE, "$1$1$1")
        .str.replace_all(SLOT, _OWN_MARK, literal=True)
    )


def template(text: pl.Expr) -> pl.Expr:
    """``text`` (String) with each number a :data:`SLOT`, each rule three characters long and each run of
    white space one space, trimmed: equal for lines printed by one format string. Its slots are
    :func:`numbers`' in order, ``template.count(SLOT)`` of them (a ``#`` of the text's own is written ``№``)."""
    return _unglued(text).str.replace_all(NUMBER, SLOT).str.replace_all(r"\s+", " ").str.strip_chars()


def numbers(text: pl.Expr) -> pl.Expr:
    """The numbers of ``text`` in order (List of String, as printed), one per :data:`SLOT` of its template."""
    return _unglued(text).str.extract_all(NUMBER)


def numbers_in(line: str) -> list[str]:
    """:func:`numbers` of one line, without a frame (the standard library's ``re``)."""
    unglued = re.sub(_NONE_VALUE, rf"\1{_NO_VALUE}", line)
    unglued = re.sub(_RULE, r"\1\1\1", re.sub(_GLUED, lambda m: (m.group(1) or "") + "D", unglued))
    unglued = unglued.replace(SLOT, _OWN_MARK)
    return re.findall(NUMBER, unglued)


def number_starts(line: str) -> list[int]:
    """Where each of :func:`numbers_in`'s numbers of ``line`` starts (its character offset in ``line``): a glued word
    is masked to its own length, and a rule shortened or not holds no number, so the offsets are the line's."""
    # a value that is none keeps its length (its slot starts where its word does)
    line = re.sub(_NONE_VALUE, lambda m: m.group(1) + _NO_VALUE.ljust(len(m.group(0)) - len(m.group(1))), line)
    masked = re.sub(_GLUED, lambda m: (m.group(1) or "") + "D" * (len(m.group(0)) - len(m.group(1) or "")), line)
    return [m.start() for m in re.finditer(NUMBER, masked.replace(SLOT, _OWN_MARK))]


def value(raw: pl.Expr) -> pl.Expr:
    """A slot's number (Float64) from its text as :func:`numbers` gives it: thousands' commas dropped, a clock's
    seconds (the vocabulary's :func:`~tierscope.collector.formats.vocabulary.clock_seconds`: ``1:02:03`` is 3723.0),
    ``nan`` and ``inf`` as such; null where it is none (a value that is none: :data:`_NO_VALUE`)."""
    plain = raw.str.replace_all(",", "", literal=True)
    sign = pl.when(plain.str.starts_with("-")).then(-1.0).otherwise(1.0)
    clock = sign * clock_seconds(plain.str.strip_chars_start("+-"))
    return pl.when(plain.str.contains(":", literal=True)).then(clock).otherwise(plain.cast(pl.Float64, strict=False))
