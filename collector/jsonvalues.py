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
from collections.abc import Generator
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


def _twice(pairs: list[tuple[str, Any]]) -> str | None:
    """The first key that ``pairs`` (an object's, in order) hold more than once, or None."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A key given twice is a record that says two things (which run, which step): Python's decoder
    # keeps the last silently, another reader the first. The record is a reject, not a guess.
    made = dict(pairs)
    if len(made) != len(pairs):
        raise JSONValueError(f"key {_twice(pairs)!r} appears twice in one object")
    return made


def _lenient_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) != len(pairs):
        key = _twice(pairs)
        made[key] = Unrepresentable(f"key {key!r} appears twice in one object")  # type: ignore[index]
    return made


_TOO_DEEP = f"value nested more than {MAX_DEPTH} levels deep"
#: One decoder for every line: ``json.loads`` with hooks builds a new one per call (a fifth of the time).
_STRICT = json.JSONDecoder(parse_float=_float, parse_int=_int, parse_constant=_constant, object_pairs_hook=_object)


def loads(text: str) -> Any:
    """The value of one JSON document. Raises :class:`json.JSONDecodeError` for bad syntax and
    :class:`JSONValueError` for a number out of range or nesting deeper than the decoder's stack."""
    try:
        return _STRICT.decode(text)
    except RecursionError:
        raise JSONValueError("value nested too deep (about 1,000 levels or more)") from None


_LENIENT: dict[str, Any] = {
    "parse_float": _lenient_float,
    "parse_int": _lenient_int,
    "parse_constant": _lenient_constant,
    "object_pairs_hook": _lenient_object,
}


def loads_lenient(text: str) -> Any:
    """The value of ``text`` with each value that cannot be represented replaced by an
    :class:`Unrepresentable` marker (a subtree deeper than :data:`MAX_DEPTH`: one marker).
    Raises :class:`json.JSONDecodeError` for bad syntax."""
    try:
        return json.loads(text, **_LENIENT)
    except RecursionError:
        return _marked(json.loads(_flatten_deep(text), **_LENIENT))


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(**_LENIENT)


def _skip_space(text: str, pos: int) -> int:
    return _SPACE.match(text, pos).end()  # type: ignore[union-attr]


def _value_at(text: str, pos: int) -> tuple[Any, int]:
    """The value starting at ``text[pos]`` (decoded as :func:`loads_lenient` does) and where it ends."""
    try:
        return _DECODER.raw_decode(text, pos)
    except RecursionError:
        end = _end_of_nested(text, pos)
        return loads_lenient(text[pos:end]), end


def _end_of_nested(text: str, pos: int) -> int:
    """Just past the array or object opened at ``text[pos]`` (linear in its length)."""
    depth = 0
    for match in _TOKEN.finditer(text, pos):
        token = match.group()
        if token in "[{":
            depth += 1
        elif token in "]}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise json.JSONDecodeError("Unterminated array or object", text, pos)


def _expect(text: str, pos: int, what: str) -> int:
    if not text.startswith(what, pos):
        raise json.JSONDecodeError(f"Expecting {what!r}", text, pos)
    return pos + len(what)


def iter_items(text: str, pos: int) -> Generator[Any, None, int]:
    """The values of the JSON array opened at ``text[pos]`` (``[``), one at a time, each decoded
    as :func:`loads_lenient` does: a large array is never held as one Python list. The
    generator's return value is where the array ends. Raises :class:`json.JSONDecodeError`."""
    pos = _skip_space(text, _expect(text, pos, "["))
    if text.startswith("]", pos):
        return pos + 1
    while True:
        value, pos = _value_at(text, pos)
        yield value
        pos = _skip_space(text, pos)
        if text.startswith("]", pos):
            return pos + 1
        pos = _skip_space(text, _expect(text, pos, ","))


def iter_document_items(text: str, key: str) -> Generator[Any, None, tuple[bool, dict[str, Any]]]:
    """The items of the array that is ``text`` (a JSON document), or of the array under ``key``
    of the object that is ``text``, one at a time (see :func:`iter_items`). The generator returns
    whether there was such an array, and the object's other members (empty for an array).
    Raises :class:`json.JSONDecodeError` for bad syntax, a document that is neither an array nor
    an object, or content after it ("Extra data")."""
    pos = _skip_space(text, 0)
    others: dict[str, Any] = {}
    found = True
    if text.startswith("[", pos):
        pos = yield from iter_items(text, pos)
    else:
        found = False
        pos = _skip_space(text, _expect(text, pos, "{"))
        while not text.startswith("}", pos):
            name, pos = _DECODER.raw_decode(text, pos) if text.startswith('"', pos) else (None, pos)
            if not isinstance(name, str):
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
            pos = _skip_space(text, _expect(text, _skip_space(text, pos), ":"))
            if name == key and text.startswith("[", pos):
                pos = yield from iter_items(text, pos)
                found = True
            else:
                others[name], pos = _value_at(text, pos)
            pos = _skip_space(text, pos)
            if not text.startswith("}", pos):
                pos = _skip_space(text, _expect(text, pos, ","))
        pos += 1
    if _skip_space(text, pos) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip_space(text, pos))
    return found, others


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
