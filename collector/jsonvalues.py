"""JSON from logs decoded with bounds: a value that cannot be represented is a reason, not a crash.

Python's decoder turns ``1e400`` into ``inf``, raises ValueError for an integer of more than
4,300 digits and RecursionError for an object nested about 1,000 deep. Input data is decoded
here, never with ``json.loads`` directly:

- :func:`loads` (one line, one value): raises :class:`JSONValueError` saying what is wrong;
  the caller makes the line a reject.
- :func:`loads_lenient` (a whole export or API page holding many entries): each value that
  cannot be represented becomes an :class:`Unrepresentable` marker (a ``str``), and a subtree
  nested deeper than :data:`MAX_DEPTH` one marker, so the other entries still decode;
  :func:`problem_in` finds the marker in one entry, which then becomes a reject.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: Nesting kept when a document is re-read after Python's decoder ran out of stack (about
#: 1,000 levels, the interpreter's recursion limit, is where :func:`loads` stops).
MAX_DEPTH = 512
#: Python's limit on the digits of an int converted from text (sys.get_int_max_str_digits()).
MAX_INT_DIGITS = 4300


class JSONValueError(ValueError):
    """A JSON value that cannot be represented (a number out of range, nesting too deep)."""


class Unrepresentable(str):
    """A marker standing in for a value :func:`loads_lenient` could not represent; its text says why."""


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JSONValueError(f"number {text[:40]} is out of the range of a 64-bit float")
    return value


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise JSONValueError(f"integer of {digits:,} digits (more than {MAX_INT_DIGITS:,})")
    return int(text)


def _lenient_float(text: str) -> float | Unrepresentable:
    try:
        return _float(text)
    except JSONValueError as exc:
        return Unrepresentable(str(exc))


def _lenient_int(text: str) -> int | Unrepresentable:
    try:
        return _int(text)
    except JSONValueError as exc:
        return Unrepresentable(str(exc))


def _constant(name: str) -> float:
    # NaN and Infinity are not JSON; Python accepts them. A NaN is a value (a diverged loss);
    # an infinity is out of range like 1e400.
    if name == "NaN":
        return math.nan
    raise JSONValueError(f"{name} is not a JSON number")


def _lenient_constant(name: str) -> float | Unrepresentable:
    try:
        return _constant(name)
    except JSONValueError as exc:
        return Unrepresentable(str(exc))


_TOO_DEEP = f"value nested more than {MAX_DEPTH} levels deep"


def loads(text: str) -> Any:
    """The value of one JSON document. Raises :class:`json.JSONDecodeError` for bad syntax and
    :class:`JSONValueError` for a number out of range or nesting deeper than the decoder's stack."""
    try:
        return json.loads(text, parse_float=_float, parse_int=_int, parse_constant=_constant)
    except RecursionError:
        raise JSONValueError("value nested too deep (about 1,000 levels or more)") from None


def loads_lenient(text: str) -> Any:
    """The value of ``text`` with each value that cannot be represented replaced by an
    :class:`Unrepresentable` marker (a subtree deeper than :data:`MAX_DEPTH`: one marker).
    Raises :class:`json.JSONDecodeError` for bad syntax."""
    hooks: dict[str, Any] = {
        "parse_float": _lenient_float,
        "parse_int": _lenient_int,
        "parse_constant": _lenient_constant,
    }
    try:
        return json.loads(text, **hooks)
    except RecursionError:
        return _marked(json.loads(_flatten_deep(text), **hooks))


#: A JSON string, or one bracket (what nesting depth is counted on).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_DEEP_MARK = "\ufdd0" + _TOO_DEEP + "\ufdd0"


def _flatten_deep(text: str) -> str:
    """``text`` with every array or object opened deeper than MAX_DEPTH replaced by a string
    marker (linear: one scan). Unbalanced brackets are left for the decoder to report."""
    out: list[str] = []
    depth = 0
    cut_from: int | None = None
    last = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth == MAX_DEPTH + 1 and cut_from is None:
                cut_from = match.start()
        elif token in "]}":
            if depth == MAX_DEPTH + 1 and cut_from is not None:
                out += [text[last:cut_from], json.dumps(_DEEP_MARK)]
                last = match.end()
                cut_from = None
            depth -= 1
    out.append(text[last:])
    return "".join(out)


def _marked(value: Any) -> Any:
    """``value`` with the deep-nesting placeholders made :class:`Unrepresentable` (iteratively:
    the value is up to MAX_DEPTH deep, beyond the recursion a walk would need)."""
    if value == _DEEP_MARK:
        return Unrepresentable(_TOO_DEEP)
    stack = [value]
    while stack:
        item = stack.pop()
        pairs = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        for key, child in list(pairs):
            if isinstance(child, str) and child == _DEEP_MARK:
                item[key] = Unrepresentable(_TOO_DEEP)
            elif isinstance(child, dict | list):
                stack.append(child)
    return value


def problem_in(value: Any) -> str | None:
    """Why ``value`` (from :func:`loads_lenient`) holds a marker, with where (``a.b[3]``); None if it holds none."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, Unrepresentable):
            return f"{item}{f' at {where}' if where else ''}"
        if isinstance(item, dict):
            stack += [(f"{where}.{k}" if where else str(k), v) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(f"{where}[{i}]", v) for i, v in enumerate(item)]
    return None
