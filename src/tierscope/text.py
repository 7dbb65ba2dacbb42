"""Text from logs shown to a person: control characters made visible (stdlib only).

Run ids, tiers, file names and reasons come from the logs and the command line and are
stored as given. Shown on a terminal, an escape sequence in them would retitle the window or
clear the screen; in the report, a right-to-left override (U+202E) would reorder the text
around it (HTML escaping does neither). :func:`printable` is the one place both use.
"""

from __future__ import annotations

import re

#: C0 controls (tab and newline included: a cell or a line must stay one line), DEL, C1 controls,
#: the line and paragraph separators (U+2028, U+2029: a terminal or a browser breaks the line there),
#: the zero-width space and the BOM (invisible: two names that look alike; the joiners U+200C and
#: U+200D stay, as Persian and Indic names and emoji need them), and the bidirectional controls:
#: marks, embeddings, overrides, isolates.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    r"""``text`` with every control character written as its escape (``\x1b``, ``\u202e``);
    other characters, Japanese included, unchanged."""
    return _CONTROLS.sub(_escaped, text)


def has_controls(text: str) -> bool:
    """True if :func:`printable` would change ``text``."""
    return _CONTROLS.search(text) is not None
