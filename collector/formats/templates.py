"""A message's template: its words and layout with every number taken out.

Lines a trainer prints from one format string differ only in their numbers (and in the padding that
aligns them), so their templates are equal: ``loss: 2.31`` and ``loss: 0.07`` are both ``loss: #``.
Modules that learn a file's layout by repetition compare templates, never the lines themselves.
"""

from __future__ import annotations

from typing import Final

import polars as pl

#: What a number slot becomes in a template.
SLOT: Final = "#"

#: A number as trainers print them: a sign, digit groups joined by ``.``, ``,`` or ``:`` (decimals, thousands, a
#: clock), an exponent; ``nan`` and ``inf`` stand where a number does.
NUMBER: Final = r"(?i:[-+]?(?:\d+(?:[.,:]\d+)*(?:e[-+]?\d+)?|\bnan\b|\binf\b))"
#: A rule of three or more of one character (``-----``, ``=====``): its length follows the widest value printed.
_RULE: Final = r"([-=_*#~+.])[-=_*#~+.]{2,}"


def template(text: pl.Expr) -> pl.Expr:
    """``text`` (String) with each number a :data:`SLOT`, each rule three characters long and each run of
    white space one space, trimmed: equal for lines printed by one format string."""
    return (
        text.str.replace_all(NUMBER, SLOT)
        .str.replace_all(_RULE, "$1$1$1")
        .str.replace_all(r"\s+", " ")
        .str.strip_chars()
    )


def numbers(text: pl.Expr) -> pl.Expr:
    """The numbers of ``text`` in order (List of String), one per :data:`SLOT` of its template."""
    return text.str.extract_all(NUMBER)
