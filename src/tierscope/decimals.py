"""A money or hours figure as text: two decimals, or significant digits where two would show zero
(stdlib only: the command room's ``--help`` path and the analysis's sentences both import it)."""

from __future__ import annotations

import math


def two_decimals(value: float, significant: int = 3) -> str:
    """``value`` with 2 decimals and thousands separators (``1,234.50``); an amount that 2 decimals
    would show as ``0.00`` with ``significant`` significant digits instead (``0.00167``), as the
    report writes it. Zero prints ``0.00``, NaN ``nan``, an infinity ``inf``; nothing is raised."""
    if 0 < abs(value) < 0.005:
        return f"{value:.{significant - 1 - math.floor(math.log10(abs(value)))}f}"
    return f"{value:,.2f}"
