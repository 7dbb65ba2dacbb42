"""What a price rests on, in words of no language: the sentences of a run's price note (why it has no price,
which rows of which date priced it, stale rows) as message keys and their values.

:data:`ENGLISH` holds each key's English template: the summary's ``price_note`` column is
:func:`english` of them. The report writes the same sentences in its language from its own templates
(``reports/i18n/price_notes.<lang>.json``, the same keys), from :func:`to_json`'s text carried beside the
English one (``price_said``). A value is a string (a date, a resource, a number already written) or a
:class:`Said`, or a tuple of them: a list, its items joined by the template ``list.sep``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: A row this many days older than the date it prices is flagged (``tierscope prices update`` refreshes it).
STALE_DAYS = 180
REMEDY = "run `tierscope prices update` for current rows"
#: What to do when the rows start after the priced date: only the user knows that date's price.
EARLY_REMEDY = "give that date's price with --prices FILE"
#: What to do for a legacy tier the ML-unit tables cannot price: they are retired, nothing refreshes them.
LEGACY_REMEDY = "describe the run's machines (--machine, --job-spec) and give their prices with --prices FILE"

#: The English template of each key; ``{name}`` fields are the values.
ENGLISH: dict[str, str] = {
    "sentence.sep": "; ",
    "list.sep": ", ",
    "missing": "no price row for {resources}; add one with --prices FILE",
    "missing.item": "{resource} ({region}, {pricing}, on {on})",
    # a run's region is its own (collect); the analysis's --region is every run's, so it unprices the others
    "missing.elsewhere": "{item}: rows price it in {regions} (collect the run again with --region {region} "
    "--change-hardware to price it there; --region {region} here prices every run there)",
    "early": "priced {rows}, after the priced date {on} (no earlier row); " + EARLY_REMEDY,
    "early.item": "{resource} from the {date} row",
    "stale": "price rows older than {limit} days on {on}: {rows}; " + REMEDY,
    "stale.item": "{resource} from {date} ({days} days)",
    "units_older": "ML units from the {units_from} table: the {table} table has no row for some of its machine types",
    "legacy_stale": "{what}, {days} days before {on} (older than {limit} days); `tierscope prices update` cannot "
    "refresh retired ML units: " + LEGACY_REMEDY,
    "legacy_stale.units": "ML units from the {date} table",
    "legacy_stale.usd": "USD per ML unit-hour from the {date} row",
    "legacy_stale.both": "ML units from the {units} table and USD per ML unit-hour from the {usd} row",
    "machine_types": "its machine types",
    "price_row": "{resource} {region} {pricing} {usd}/h from {date} ({source})",
    "price_row.used": "{quantity} x {row}",
    "before_table": "no price on {on}: the ML-unit table's earliest row for {name} is from {first}; check the date "
    "of the run's records, or " + LEGACY_REMEDY,
}


@dataclass(frozen=True)
class Said:
    """One sentence (or list item) of a price note: the template ``key`` and its ``values``."""

    key: str
    values: tuple[tuple[str, object], ...] = ()

    @classmethod
    def of(cls, key: str, **values: object) -> Said:
        return cls(key, tuple(values.items()))

    def text(self, templates: Mapping[str, str] = ENGLISH, sources: Mapping[str, str] | None = None) -> str:
        """This sentence written from ``templates`` (a key it lacks: the English one); a price row's ``source``
        (a table's note, English) as ``sources`` translates it, where it does."""
        filled = {name: _value(v, templates, sources) for name, v in self.values}
        if sources and "source" in filled:
            filled["source"] = sources.get(filled["source"], filled["source"])
        return templates.get(self.key, ENGLISH[self.key]).format(**filled)


def _value(value: object, templates: Mapping[str, str], sources: Mapping[str, str] | None) -> str:
    if isinstance(value, Said):
        return value.text(templates, sources)
    if isinstance(value, tuple):
        return templates.get("list.sep", ENGLISH["list.sep"]).join(_value(v, templates, sources) for v in value)
    return str(value)


def written(
    said: Iterable[Said], templates: Mapping[str, str] = ENGLISH, sources: Mapping[str, str] | None = None
) -> str | None:
    """The sentences ``said`` as one note (``sentence.sep`` between them); None for none. ``sources``: see
    :meth:`Said.text`."""
    texts = [s.text(templates, sources) for s in said]
    return templates.get("sentence.sep", ENGLISH["sentence.sep"]).join(texts) if texts else None


def english(said: Iterable[Said]) -> str | None:
    """The sentences ``said`` in English, as the summary and the command line write them."""
    return written(said)


def to_json(said: Iterable[Said]) -> str | None:
    """``said`` as JSON text (a column of a frame carries it to the report); None for none."""
    listed = [_plain(s) for s in said]
    return json.dumps(listed, ensure_ascii=False) if listed else None


def from_json(text: str | None) -> list[Said]:
    """The sentences :func:`to_json` wrote (none for None)."""
    return [_said(item) for item in json.loads(text)] if text else []


def _plain(value: object) -> object:
    if isinstance(value, Said):
        return {"key": value.key, "values": {name: _plain(v) for name, v in value.values}}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return str(value)


def _said(item: dict) -> Said:
    return Said(item["key"], tuple((name, _restored(v)) for name, v in item["values"].items()))


def _restored(value: object) -> object:
    if isinstance(value, dict):
        return _said(value)
    if isinstance(value, list):
        return tuple(_restored(v) for v in value)
    return value
