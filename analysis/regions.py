"""Which ``--region`` names a place prices can be asked for: a legacy area of the ML-unit tables (``us``,
``europe``, ``asia``), a region of the price rows, or any name of Google Cloud's region form, which a price
file of the user's own may price (docs/machines-and-prices.md: ``--prices FILE`` adds a region the rows lack).
A name of none of these is a typo (``europe-wst4``): an error naming the nearest known regions, raised where
the name is given rather than as "no price row" when a run is priced."""

from __future__ import annotations

import difflib
import re

from tierscope.analysis.errors import AnalysisError
from tierscope.errors import UsageError

#: The areas and compass words Google Cloud region names are made of (``<area>-<direction><n>``: us-central1,
#: europe-west4, asia-northeast1, me-central2, northamerica-northeast1, africa-south1), from the region list at
#: https://cloud.google.com/compute/docs/regions-zones (read 2026-12-07).
_AREAS = "africa|asia|australia|europe|me|northamerica|southamerica|us"
_DIRECTIONS = "central|east|west|north|south|northeast|northwest|southeast|southwest"
_CLOUD_REGION = re.compile(rf"(?:{_AREAS})-(?:{_DIRECTIONS})\d{{1,2}}")


class UnknownRegionError(AnalysisError, UsageError, ValueError):
    """A region that is neither a known one nor of Google Cloud's form; the message names the nearest known."""


def known_regions() -> list[str]:
    """The legacy ML-unit tables' areas (``asia``, ``europe``, ``us``), then the shipped price rows' regions."""
    from tierscope.analysis.cost import load_prices
    from tierscope.analysis.prices import shipped

    areas = sorted(load_prices().get_column("region").unique())
    return areas + sorted({r.region for r in shipped()} - set(areas))


def checked_region(region: str, known: list[str] | None = None) -> str:
    """``region`` as given if it is one of ``known`` (default :func:`known_regions`) or of Google Cloud's form
    (``us-east5``: a price file may price it). Raises :class:`UnknownRegionError` otherwise."""
    known = known_regions() if known is None else known
    if region in known or _CLOUD_REGION.fullmatch(region):
        return region
    near = difflib.get_close_matches(region.strip().lower(), known, n=3, cutoff=0.6)
    hint = f"nearest known: {', '.join(near)}" if near else f"known: {', '.join(known)}"
    raise UnknownRegionError(
        f"unknown region {region!r}: neither a region of the price rows nor a Google Cloud region like "
        f"us-central1; {hint}"
    )
