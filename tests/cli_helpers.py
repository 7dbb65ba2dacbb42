"""Reading the commands' tables in tests: since issue 14 they have no borders (kubectl's style)."""

from __future__ import annotations

import re


def table_row(output: str, first: str) -> list[str]:
    """The cells of the table row whose first cell is ``first`` (columns are two or more spaces apart)."""
    for line in output.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r} in\n{output}")
