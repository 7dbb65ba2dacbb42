"""Constants of the dataset's Parquet files that a writer without polars needs too
(:mod:`tierscope.dataset.arrow_steps`); :mod:`tierscope.dataset.store` imports polars, this module nothing."""

from __future__ import annotations

#: Largest dictionary page per column chunk: a column whose values repeat (a role, a loss printed
#: with three decimals, a rate) stays dictionary-encoded; one whose values are nearly all distinct
#: (elapsed seconds) gives up after this many bytes instead of building a dictionary as large as it.
DICTIONARY_PAGE_BYTES = 128 * 1024

#: Footer key of every data file written since checksums: the JSON list of the ``source``
#: values its rows came from (what ``doctor --fix`` asks the collector to re-read).
SOURCES_KEY = b"tierscope.sources"
