"""Step-log formats: one module per format behind :class:`~collector.formats.base.LineFormat`.

:func:`parse_lines` runs the formats as a chain over a frame of lines: each takes the
lines it recognises and hands the rest on, so a file that interleaves formats is read
line by line. Lines no format recognises are *skipped* (counted, not stored): they carry
no metric (checkpoint saves, warnings, blank lines).
"""

from __future__ import annotations

import polars as pl

from collector.formats.base import LINES_SCHEMA, LineFormat, Parsed
from collector.formats.cloudml import CloudMLSamples
from collector.formats.gcloud import GcloudError
from collector.formats.structured import StructuredJSON

#: Every known format, in the order they are tried.
FORMATS: dict[str, LineFormat] = {f.name: f for f in (StructuredJSON(), CloudMLSamples(), GcloudError())}


class UnknownFormatError(ValueError):
    """``--format`` named a format tierscope does not know."""


def get_format(name: str) -> LineFormat:
    """The format called ``name``; raises :class:`UnknownFormatError` listing the known ones."""
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownFormatError(
            f"unknown log format {name!r}; known formats: {', '.join(FORMATS)} (see `tierscope formats`)"
        ) from None


def parse_lines(lines: pl.DataFrame, only: str | None = None) -> Parsed:
    """Parse ``lines`` (:data:`LINES_SCHEMA`) with every format, or with ``only`` one.

    Returns the union of what each format found; ``rest`` is what none recognised and
    ``skipped`` its size.
    """
    chain = [get_format(only)] if only else list(FORMATS.values())
    steps, events, rejects = [], [], []
    rest = lines
    for fmt in chain:
        if rest.height == 0:
            break
        got = fmt.parse(rest)
        steps.append(got.steps)
        events.append(got.events)
        rejects.append(got.rejects)
        rest = got.rest
    return Parsed(
        steps=pl.concat([s for s in steps if s.width], how="diagonal_relaxed")
        if any(s.width for s in steps)
        else pl.DataFrame(),
        events=pl.concat([e for e in events if e.width], how="diagonal_relaxed")
        if any(e.width for e in events)
        else pl.DataFrame(),
        rejects=pl.concat([r for r in rejects if r.width], how="diagonal_relaxed")
        if any(r.width for r in rejects)
        else pl.DataFrame(),
        rest=rest,
        skipped=rest.height,
    )


__all__ = ["FORMATS", "LINES_SCHEMA", "LineFormat", "Parsed", "UnknownFormatError", "get_format", "parse_lines"]
