"""Errors printed by the ``gcloud`` command line when a job could not be submitted or run.

``ERROR: gcloud crashed (BadStatusCodeError):`` (the 2016 PREMIUM_1 attempt) and
``ERROR: (gcloud.ml-engine.jobs.submit.training) RESOURCE_EXHAUSTED: Quota ...`` are
failed-run events, not rejected lines: they carry no step and say why the run has none.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from tierscope.collector.formats.base import ParseContext, Parsed, SingleLineFormat

# gcloud writes "ERROR: " with a space; Python logging writes "ERROR:name:" without one.
_PATTERN = r"^ERROR: (?P<reason>.*?)[:\s]*$"


class GcloudFailures(SingleLineFormat):
    """The line format of gcloud's failure lines: each a failed-run event with its reason."""

    name: ClassVar[str] = "gcloud"
    example: ClassVar[str] = "ERROR: gcloud crashed (BadStatusCodeError):"
    meaning: ClassVar[str] = "no step: the run failed (or never started) for the reason given"

    def sniff(self, lines: pl.Series) -> int:
        return int(lines.str.starts_with("ERROR: ").sum())

    def parse(self, lines: pl.DataFrame, context: ParseContext) -> Parsed:
        hit = pl.col("line").str.starts_with("ERROR: ")
        events = lines.filter(hit).select(
            "source_offset",
            pl.lit("failed").alias("event"),
            pl.col("line").str.extract(_PATTERN, 1).alias("reason"),
            pl.lit(self.name).alias("format"),
        )
        return Parsed(steps=pl.DataFrame(), events=events, rejects=pl.DataFrame(), rest=lines.filter(~hit))
