"""Message catalogs of the report (``en.json``, ``ja.json``: the same keys) and locale formatting.

The notes tierscope ships in its price and tier tables (their ``source`` column, English) are
translated by ``sources.<lang>.json``, keyed by the English text; a note it does not know (a
table someone edited) is shown as written, like every other piece of data. A run's price note (why it
has no price, which rows priced it) is written from ``price_notes.<lang>.json``: the templates of
:data:`tierscope.analysis.price_notes.ENGLISH`, the same keys, in that language.

Numbers in the HTML are formatted with the same d3-format locale Vega uses for the chart
axes (from vl-convert), so a table and a chart of one report agree on separators.
"""

from __future__ import annotations

import json
import locale
import math
import os
from functools import cache
from importlib.resources import files
from typing import Any

from tierscope.decimals import significant_format

LANGS = ("en", "ja")
#: The d3 locale (BCP 47) of each report language, for numbers in the HTML and in charts.
LOCALES = {"en": "en-US", "ja": "ja-JP"}


@cache
def _load(lang: str) -> dict[str, str]:
    return json.loads(files("tierscope.reports.i18n").joinpath(f"{lang}.json").read_text(encoding="utf-8"))


@cache
def _sources(lang: str) -> dict[str, str]:
    path = files("tierscope.reports.i18n").joinpath(f"sources.{lang}.json")
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


@cache
def _price_notes(lang: str) -> dict[str, str]:
    from tierscope.analysis.price_notes import ENGLISH

    path = files("tierscope.reports.i18n").joinpath(f"price_notes.{lang}.json")
    return ENGLISH | (json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {})


@cache
def number_locale(lang: str) -> dict[str, Any]:
    """The d3-format locale of ``lang``: ``decimal``, ``thousands``, ``grouping``, ``currency``."""
    import vl_convert

    return vl_convert.get_format_locale(LOCALES[lang])


@cache
def time_locale(lang: str) -> dict[str, Any]:
    """The d3-time-format locale of ``lang`` (month and day names)."""
    import vl_convert

    return vl_convert.get_time_format_locale(LOCALES[lang])


def default_lang() -> str:
    """``ja`` when the locale (LC_ALL, LC_MESSAGES, LANG) is Japanese, else ``en``."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    code = locale.getlocale()[0] or ""
    return "ja" if code.lower().startswith("ja") else "en"


class Catalog:
    """Translated messages: ``t("key", **values)``. Raises KeyError for an unknown key,
    ValueError for a language other than :data:`LANGS`."""

    def __init__(self, lang: str) -> None:
        if lang not in LANGS:
            raise ValueError(f"unknown report language {lang!r}; choose one of {', '.join(LANGS)}")
        self.lang = lang
        self.messages = _load(lang)
        self.sources = _sources(lang)

    def __call__(self, key: str, **values: object) -> str:
        text = self.messages[key]
        return text.format(**values) if values else text

    def number(self, value: float | int | None, digits: int = 2) -> str:
        """``value`` with the locale's separators (``1,234.50`` in both en and ja); an en dash for None or NaN.

        Integers are written whole; floats with ``digits`` decimals.
        """
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            return "–"
        return self._separated(f"{value:,}" if isinstance(value, int) else f"{value:,.{digits}f}")

    def _separated(self, text: str) -> str:
        """``text``, a number Python formatted (``,`` and ``.``), with the locale's separators."""
        loc = number_locale(self.lang)
        return text.translate(str.maketrans({",": loc["thousands"], ".": loc["decimal"]}))

    def count(self, n: int) -> str:
        """A small count in words where the language writes them so (``two`` runs), else :meth:`number`."""
        words = self("count.words").split(",") if self("count.words") else []
        return words[n] if 0 <= n < len(words) else self.number(n)

    def counted(self, key: str, n: int) -> str:
        """``n`` with the words that agree with it: ``key.one`` for 1, else ``key.other``, its ``{n}`` the
        number (``counted("count.runs", 1) == "1 run"``, ``"3 runs"``; Japanese has one form)."""
        return self(f"{key}.{'one' if n == 1 else 'other'}", n=self.number(n))

    def join(self, items: list[str]) -> str:
        """``1, 5 and 20`` in the catalog's language (``list.and`` before the last item)."""
        if len(items) < 2:
            return "".join(items)
        return f"{', '.join(items[:-1])}{self('list.and')}{items[-1]}"

    def source(self, note: str | None) -> str | None:
        """A price or tier table's ``source`` note in this language (as written when it has no translation)."""
        return None if note is None else self.sources.get(note, note)

    def price_note(self, said: str | None) -> str | None:
        """A run's price note in this language from its sentences (``said``:
        :func:`tierscope.analysis.price_notes.to_json`'s text); None for none."""
        from tierscope.analysis.price_notes import from_json, written

        return written(from_json(said), _price_notes(self.lang), self.sources)

    def sentences(self, *parts: str | None) -> str | None:
        """``parts`` that are not None as one text, the price notes' sentence separator between them."""
        given = [p for p in parts if p]
        return _price_notes(self.lang)["sentence.sep"].join(given) if given else None

    def units(self, value: float | None) -> str:
        """ML units: up to 4 decimals, trailing zeros dropped (``10``, ``0.5661``, ``1.5``); an en dash for None."""
        text = self.number(value, 4)
        decimal = number_locale(self.lang)["decimal"]
        return text.rstrip("0").rstrip(decimal) if decimal in text else text

    def significant(self, value: float | None, figures: int = 3) -> str:
        """``value`` with at least ``figures`` significant digits (``0.000453``, ``1.00``, ``17,032``;
        ``4.53e-05`` below a ten-thousandth), counted as the command line counts them
        (:func:`tierscope.decimals.significant_format`); an en dash for None or NaN."""
        if value is None or not math.isfinite(value):
            return "–"
        return self._separated(format(float(value), significant_format(value, figures)))

    def interval(self, low: float | None, high: float | None, digits: int = 2) -> str:
        """``low–high`` (an interval), or an en dash when either end is unknown."""
        if low is None or high is None:
            return "–"
        return self("fmt.interval", low=self.number(low, digits), high=self.number(high, digits))

    def duration(self, seconds: float | None) -> str:
        """A duration in the unit that reads best: ``42.0 s``, ``12.5 min``, ``3.2 h`` (``42.0 秒``... in ja)."""
        if seconds is None or not math.isfinite(seconds):
            return "–"
        if seconds >= 2 * 3600:
            return self("fmt.hours", value=self.number(seconds / 3600, 1))
        if seconds >= 120:
            return self("fmt.minutes", value=self.number(seconds / 60, 1))
        return self("fmt.seconds", value=self.number(seconds, 1))
