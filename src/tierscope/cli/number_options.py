"""The number options' errors in the project's words: what was given, what it is not, what to give.

click's own (``'nan' is not a valid int range.``, ``-1 is not in the range x>=0.``) name a type and
a range notation, not what to type instead. :func:`word_numbers` wraps each int and float option of
a command so that a value that is no number, or one outside the option's bounds, is one line:
``Invalid value for '--steps': nan is not a whole number; give one of at least 1 (see --help)``.
A whole number written as a float (``1e5``, ``100000.0``) is that number: a step count is often
written so. Cheap to import (typer and the standard library): every command's options pass through here.
"""

from __future__ import annotations

import copy
import functools
import math
from typing import Any

import typer

#: Set on a parameter once its type is worded (a command is looked up more than once).
_WORDED = "_tierscope_worded"
#: The largest whole number an option takes: 2**53, the largest up to which float64 (the analysis' numbers)
#: holds every whole number exactly; above it a step count or a task count means nothing it can compute.
MAX_WHOLE = 2**53


def _shown(number: float) -> str:
    # a bound of a million and more whole, with its thousands marked: 1,000,000,000, never 1e+09
    if math.isfinite(number) and number == int(number) and abs(number) >= 1e6:
        return f"{int(number):,}"
    return f"{number:g}"


#: How Python spells a float that is no number or an infinity (``nan``, ``-Infinity``): not a number too large.
_SPELLED = ("nan", "inf", "infinity")


def _is(kind: object, base: str) -> bool:
    # by name: typer vendors click from 0.28 on (typer._click), and uses click's own before
    return any(cls.__name__ == base for cls in type(kind).__mro__)


def bounds(kind: Any) -> str:
    """What an int or float type's range allows, as words after "give one": `` of at least 1``,
    `` from 1 to 9999``, `` above 0``; empty where it has no bounds."""
    low, high = getattr(kind, "min", None), getattr(kind, "max", None)
    low_open, high_open = getattr(kind, "min_open", False), getattr(kind, "max_open", False)
    if low is not None and high is not None and not low_open and not high_open:
        return f" from {_shown(low)} to {_shown(high)}"
    parts = []
    if low is not None:
        parts.append(f"above {_shown(low)}" if low_open else f"at least {_shown(low)}")
    if high is not None:
        parts.append(f"below {_shown(high)}" if high_open else f"at most {_shown(high)}")
    if not parts:
        return ""
    return (" of " if parts[0].startswith("at ") else " ") + " and ".join(parts)


def _too_small(kind: Any, number: float) -> bool:
    low = getattr(kind, "min", None)
    return low is not None and (number < low or (getattr(kind, "min_open", False) and number <= low))


@functools.cache
def _worded_class(base: type) -> type:
    """``base`` (click's INT, FLOAT, IntRange or FloatRange class) whose ``convert`` says what to give."""

    def convert(self: Any, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return base.convert(self, value, param, ctx)  # a default, already a number
        text = str(value).strip()
        whole = _is(self, "IntParamType")
        noun = "a whole number" if whole else "a number"
        like = f", like its default {_shown(self.example)}" if self.example is not None else ""
        give = f"give one{bounds(self)}{like} (see --help)"
        try:
            number: float = float(text)
        except ValueError:
            self.fail(f"{text or repr(text)} is not {noun}; {give}", param, ctx)
        if not whole and not math.isfinite(number):
            if text.lstrip("+-").lower() in _SPELLED:
                self.fail(f"{number} is not a finite number; {give}", param, ctx)  # as Python writes it: nan, -inf
            # 1e400 reads as inf: a number past float64's range, which is what the user should hear of it
            self.fail(f"{text} is too {'small' if number < 0 else 'large'} to compute with; {give}", param, ctx)
        if whole:
            if not math.isfinite(number) or number != int(number):
                self.fail(f"{text} is not {noun}; {give}", param, ctx)
            number = int(text) if text.lstrip("+-").isdigit() else int(number)  # 1e5 steps are 100,000
            if abs(number) > MAX_WHOLE:
                self.fail(f"{text} is too large; give one of at most {MAX_WHOLE:,} (see --help)", param, ctx)
        try:
            return base.convert(self, number, param, ctx)
        except typer.BadParameter:
            # only the range refuses a number: which side it is off, and what to give
            self.fail(f"{text} is too {'small' if _too_small(self, number) else 'large'}; {give}", param, ctx)

    return type(f"Worded{base.__name__}", (base,), {"convert": convert, "example": None})


def worded(kind: Any, example: float | None) -> Any:
    """A copy of ``kind`` (an int or float type of click) whose failures say what to give: ``nan is not a
    whole number; give one of at least 1 (see --help)``; ``example``: the option's default, where it is a
    number (``like its default 60``)."""
    new = copy.copy(kind)
    new.__class__ = _worded_class(type(kind))
    new.example = example
    return new


def word_numbers(command: Any) -> Any:
    """``command`` (a click command, returned) with each int and float parameter's type :func:`worded`; once."""
    for param in getattr(command, "params", []):
        kind = param.type
        if getattr(param, _WORDED, False) or not (_is(kind, "IntParamType") or _is(kind, "FloatParamType")):
            continue
        default = param.default
        number = isinstance(default, int | float) and not isinstance(default, bool)
        param.type = worded(kind, default if number else None)
        setattr(param, _WORDED, True)
    return command
