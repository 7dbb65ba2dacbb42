"""A money or hours figure as text: two decimals, or significant digits where two would round it by
more than a tenth (stdlib only: the command room's ``--help`` path and the analysis's sentences both
import it)."""

from __future__ import annotations

import math


def two_decimals(value: float, significant: int = 3) -> str:
    """``value`` with 2 decimals and thousands separators (``1,234.50``); one below 0.1, which 2 decimals
    would round by more than 5 % (0.005978 h as ``0.01``), with ``significant`` significant digits
    instead (``0.00598``, ``0.0127``), as the report writes small amounts. Zero prints ``0.00``, NaN
    ``nan``, an infinity ``inf``; nothing is raised."""
    if 0 < abs(value) < 0.1:
        rounded = float(f"{value:.{significant - 1}e}")  # 0.000999999 rounds up to 0.00100: count from there
        return f"{rounded:.{significant - 1 - math.floor(math.log10(abs(rounded)))}f}"
    return f"{value:,.2f}"
