"""Helpers for the tests of :mod:`tierscope.collector.formats`."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tierscope.collector.formats import LineFormat, ParseContext, Parsed, parse_lines
from tierscope.dataset.schema import EVENT_SCHEMA, REJECT_SCHEMA, STEP_SCHEMA, conform


def frame(lines: list[str], first: int = 1) -> pl.DataFrame:
    """Numbered lines, as :func:`tierscope.collector.sources.files.iter_line_batches` yields them."""
    return pl.DataFrame(
        {"source_offset": list(range(first, first + len(lines))), "line": lines},
        schema={"source_offset": pl.Int64, "line": pl.String},
    )


def parse(
    lines: list[str], only: str | None = None, year: int | None = 2024, formats: Sequence[LineFormat] = (), **kw: object
) -> Parsed:
    """Parse ``lines`` (with the declared ``formats``) and conform the results to the dataset
    schemas (which checks every dtype)."""
    context = ParseContext(year=year, formats=tuple(formats))
    got = parse_lines(frame(lines), only=only, context=context, **kw)  # type: ignore[arg-type]
    got.steps = conform(got.steps, STEP_SCHEMA).sort("source_offset", "step")
    got.events = conform(got.events, EVENT_SCHEMA).sort("source_offset")
    got.rejects = conform(got.rejects, REJECT_SCHEMA).sort("source_offset")
    return got


def read_lines(*lines: str, only: str | None = None) -> Parsed:
    """``lines`` numbered from 1 and parsed as one batch of a file whose glog times are of 2024, as
    :func:`parse_lines` returns them (neither conformed nor sorted: see :func:`parse` for that)."""
    return parse_lines(frame(list(lines)), only=only, context=ParseContext(year=2024))


def read(*lines: str, only: str | None = None) -> pl.DataFrame:
    """The step records of ``lines`` (:func:`read_lines`)."""
    return read_lines(*lines, only=only).steps


def endings(*lines: str) -> list[tuple[str, str]]:
    """The ``failed`` and ``finished`` events of ``lines`` (:func:`read_lines`), as ``(event, reason)``."""
    got = read_lines(*lines).events
    if got.height == 0:
        return []
    return got.filter(pl.col("event").is_in(["failed", "finished"])).select("event", "reason").rows()


def outcome_offsets(parsed: Parsed) -> dict[str, list[int]]:
    """The line numbers of the step records, events and rejects."""
    return {
        name: sorted(set(getattr(parsed, name).get_column("source_offset").to_list()))
        for name in ("steps", "events", "rejects")
    }
