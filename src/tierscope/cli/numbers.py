"""How the commands write numbers: the one place a figure becomes text.

Thousands separators everywhere (``17,031.6``, ``1,000,000 steps``, ``12,345 records``); each
kind of figure keeps its own decimals; ML units drop trailing zeros (``10``, ``5.9234``);
counts agree with their noun (``1 line``, ``2 lines``). Standard library only: ``--help``
imports this package.
"""

from __future__ import annotations

from tierscope.decimals import two_decimals

#: What stands for a missing figure in a table (ASCII: it pastes into CSV and Markdown as it is).
MISSING = "-"


def count(n: int | None) -> str:
    """A whole number: ``12,345``."""
    return MISSING if n is None else f"{n:,}"


def fixed(value: float | None, digits: int) -> str:
    """``value`` with ``digits`` decimals and thousands separators: ``fixed(17031.62, 1) == "17,031.6"``."""
    return MISSING if value is None else f"{value:,.{digits}f}"


def rate(value: float | None) -> str:
    """Steps/s (global or local): 3 decimals, ``22.389``."""
    return fixed(value, 3)


def ratio(value: float | None) -> str:
    """A speedup or scaling efficiency: 2 decimals, ``4.82``."""
    return fixed(value, 2)


def units(value: float | None) -> str:
    """ML units (per hour): as precise as the price table (4 decimals), trailing zeros dropped:
    ``10``, ``0.5661``, ``75``."""
    if value is None:
        return MISSING
    text = f"{value:,.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def money(value: float | None) -> str:
    """US dollars: 2 decimals, ``1,234.50`` (the currency goes in the column header); an amount below
    0.1 with 3 significant digits, ``0.00167``, ``0.0449``, as the report writes it."""
    return MISSING if value is None else two_decimals(value)


def hours(value: float | None) -> str:
    """A duration in hours: 2 decimals; under 0.1 h (6 min) 3 significant digits, ``0.00598``."""
    return MISSING if value is None else two_decimals(value)


def seconds(value: float | None) -> str:
    """A duration in whole seconds: ``14 s``, ``2,400 s``."""
    return MISSING if value is None else f"{value:,.0f} s"


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """``n`` and the noun that agrees with it: ``plural(1, "line") == "1 line"``,
    ``plural(3, "entry", "entries") == "3 entries"``; ``n`` with thousands separators."""
    return f"{n:,} {noun if n == 1 else (nouns or noun + 's')}"
