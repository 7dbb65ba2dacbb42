"""Sentences for the terminal: a paragraph wrapped at words to the terminal's width, its continuation
lines keeping the paragraph's indent, no line ending in a space.

rich wraps a :class:`~rich.text.Text` at the console's width, but its continuation lines start at
column 0 (an indented ``  Caveat:`` loses its indent) and keep the space before each break; and
with no terminal (a pipe, cron, a CI log) the console is 200 wide, so a note came out as one
200-character line. Prose is wrapped here instead, at the terminal's width, else ``COLUMNS``,
else :data:`PLAIN_WIDTH`. Cheap to import (the standard library only).
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TextIO

#: The width prose is wrapped at with no terminal and no ``COLUMNS`` (a pipe, a file, cron).
PLAIN_WIDTH = 80
#: The narrowest a paragraph is wrapped at, whatever the terminal says.
MIN_WIDTH = 40


def prose_width(stream: TextIO | None = None) -> int:
    """The width to wrap prose at on ``stream`` (default stdout): its terminal's columns, else ``COLUMNS``,
    else :data:`PLAIN_WIDTH`; never below :data:`MIN_WIDTH`."""
    stream = stream or sys.stdout
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return max(int(given), MIN_WIDTH)
    try:
        if stream.isatty():
            return max(os.get_terminal_size(stream.fileno()).columns, MIN_WIDTH)
    except (AttributeError, ValueError, OSError):  # a test's captured stream
        pass
    return PLAIN_WIDTH


def wrap(text: str, width: int) -> str:
    """``text`` (one paragraph: its whitespace runs become one space) wrapped at words to ``width``
    columns; every line starts with the paragraph's own leading indent and none ends in a space. A word
    longer than a line (a path, a URL) is kept whole on a line of its own, never cut."""
    indent = text[: len(text) - len(text.lstrip())]
    words = " ".join(text.split())
    if not words:
        return ""
    lines = textwrap.wrap(
        words,
        width=max(width, len(indent) + 10),
        initial_indent=indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(line.rstrip() for line in lines)


def say(text: str, stream: TextIO | None = None) -> None:
    """Print ``text`` (a paragraph) wrapped to ``stream``'s width (:func:`prose_width`), default stdout."""
    stream = stream or sys.stdout
    print(wrap(text, prose_width(stream)), file=stream)
