"""Message catalogs of the report (``en.json``, ``ja.json``: the same keys) and locale formatting."""

from __future__ import annotations

import json
import locale
import os
from functools import cache
from importlib.resources import files

LANGS = ("en", "ja")


@cache
def _load(lang: str) -> dict[str, str]:
    return json.loads(files("reports.i18n").joinpath(f"{lang}.json").read_text(encoding="utf-8"))


def default_lang() -> str:
    """``ja`` when the locale (LC_ALL, LC_MESSAGES, LANG) is Japanese, else ``en``."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var)
        if value:
            return "ja" if value.lower().startswith("ja") else "en"
    code = locale.getlocale()[0] or ""
    return "ja" if code.lower().startswith("ja") else "en"


class Catalog:
    """Translated messages: ``t("key", **values)``. Raises KeyError for an unknown key."""

    def __init__(self, lang: str) -> None:
        if lang not in LANGS:
            raise ValueError(f"unknown report language {lang!r}; choose one of {', '.join(LANGS)}")
        self.lang = lang
        self.messages = _load(lang)

    def __call__(self, key: str, **values: object) -> str:
        text = self.messages[key]
        return text.format(**values) if values else text

    def number(self, value: float | int | None, digits: int = 2) -> str:
        """``value`` with thousands separators (both catalogs use 1,234.5), or an en dash for None."""
        if value is None:
            return "–"
        if isinstance(value, int):
            return f"{value:,}"
        return f"{value:,.{digits}f}"
