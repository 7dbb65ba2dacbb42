"""A money or hours figure as text: two decimals, or, below 0.1, where two decimals could be off by more
than 5 %, three significant digits (stdlib only: the command room's ``--help`` path, the analysis's
sentences and the report's locale formatting all import it).

The digits are counted once, by :func:`significant_format`: the command line's figures
(:func:`two_decimals`) and the report's (:meth:`tierscope.reports.i18n.Catalog.significant`) agree.
"""

from __future__ import annotations

import math

#: Below this, two decimals could be off by more than 5 % (0.0949 as 0.09): :func:`two_decimals`
#: gives significant digits instead.
SMALL = 0.1
#: The smallest magnitude written in fixed point (``0.000100``); below it, scientific form
#: (``4.53e-05``), as Python's general format does: more zeros after the point are hard to count,
#: and ``1e-300`` in fixed point took 304 characters.
SMALLEST_FIXED = 1e-4


def significant_format(value: float, significant: int = 3) -> str:
    """The format spec (for :func:`format`) that writes ``value`` with at least ``significant``
    significant digits: fixed point with thousands separators and as many decimals as that takes
    (``0.00598``, ``1.00``, ``17,032``), or below :data:`SMALLEST_FIXED` scientific form (``4.53e-05``).

    The decimals are counted from ``value`` rounded to those digits: 0.000999999 rounds up to
    0.00100, which takes 5 decimals (6 would write 0.001000, four digits). Zero (and a non-finite
    value) takes ``significant - 1`` decimals; a negative zero is written as zero (``z``), not ``-0.00``.
    """
    if value == 0 or not math.isfinite(value):
        return f"z,.{significant - 1}f"
    rounded = abs(float(f"{value:.{significant - 1}e}"))
    if rounded < SMALLEST_FIXED:
        return f"z.{significant - 1}e"
    return f"z,.{max(significant - 1 - math.floor(math.log10(rounded)), 0)}f"


def two_decimals(value: float, significant: int = 3) -> str:
    """``value`` with 2 decimals and thousands separators (``1,234.50``); one below 0.1 (:data:`SMALL`),
    which 2 decimals would round by more than 5 % (0.005978 h as ``0.01``), with ``significant``
    significant digits instead (``0.00598``, ``0.0127``; ``1.00e-300`` below a ten-thousandth), as the
    report writes small amounts (:func:`significant_format`). Zero prints ``0.00``, a negative zero
    too, NaN ``nan``, an infinity ``inf``; nothing is raised."""
    if 0 < abs(value) < SMALL:
        return format(value, significant_format(value, significant))
    return f"{value:z,.2f}"  # z: -0.0 (a difference that came out zero) as 0.00
