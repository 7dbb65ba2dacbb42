"""What a file's parse remembers, saved with its position so the next collect reads on as one read would.

The formats decide things about a file from the lines they have read (:attr:`ParseContext.state`): a step
counter whose total grows is an epoch's batch, a bar's laps, whether a file's times are per step or
cumulative, the epoch a Keras bar belongs to, the ranks that copy its lines. One read of the whole file keeps
those decisions from batch to batch; a cron collect that reads the file in pieces must keep them from collect
to collect, or the lines appended after a few lines are read as another file's (a different step, a conflict,
a restart). :func:`remembered` turns the state into JSON values for the position (:class:`FileState.carry
<tierscope.collector.offsets.FileState>`, under :data:`KEY`); :func:`recall` puts it back.

The state holds Python values: numbers, strings, lists, tuples, sets, dicts with keys of any of those, polars
frames (the lines a rank's run ended with), and a few classes of the formats' own, each listed in
:data:`_CLASSES`. Anything else is left out with its key (that decision is then made again from the lines
appended, as before), and so are the keys of :data:`NOT_SAVED`. A document that does not read (another
:data:`VERSION`, a class renamed) is ignored whole: the collect reads on as if nothing was remembered.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import math
from typing import Any

import polars as pl

from tierscope.collector.formats.base import WRITTEN, ParseContext
from tierscope.collector.formats.layout import Layout
from tierscope.collector.formats.ranks import RankCarry
from tierscope.collector.formats.stanzas import STATE_KEY as STANZA
from tierscope.collector.formats.status import LAST_STEP, WORK

#: The key of the carry under which the parse's memory is saved.
KEY = "parse"
#: Bumped when what is saved changes meaning; a document of another version is ignored.
VERSION = 1
#: State not saved: a batch's own lines (:data:`WRITTEN`); the group of lines a file's reports are printed as,
#: which a collect going on learns again from the file's head (:func:`~tierscope.collector.formats.learn_from_head`);
#: the status checks' memory, saved beside it (:func:`~tierscope.collector.formats.status.carried_work`: the
#: small append's path, :mod:`tierscope.collector.small_append`, keeps that up to date without polars).
NOT_SAVED = frozenset((WRITTEN, STANZA, WORK, LAST_STEP))

#: The formats' classes a state may hold, by the name saved.
_CLASSES: dict[str, type] = {"RankCarry": RankCarry, "ParseContext": ParseContext, "Layout": Layout}
#: The fields of a ParseContext saved (the rest are the collect's: its year, declared formats, chain).
_CONTEXT_FIELDS = ("state", "steps_seen", "steps_measured")


class _Unsaved(Exception):
    """A value of a kind this module does not save."""


def remembered(context: ParseContext) -> dict[str, Any] | None:
    """``context``'s memory as JSON values (``{"version", "state", "steps_measured"}``), or None when it holds
    nothing worth saving."""
    state = _encode_state(context.state)
    if not state and not context.steps_measured:
        return None
    doc = {"version": VERSION, "state": state, "steps_measured": context.steps_measured}
    return {**doc, "digest": _digest(doc)}


def _digest(doc: dict[str, Any]) -> str:
    """The SHA-256 of ``doc`` (without its digest) as canonical JSON: a document edited by hand, whose values
    the formats would take for their own decisions and trip on (a string where a count was), does not match."""
    body = {k: v for k, v in doc.items() if k != "digest"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def recall(context: ParseContext, doc: Any) -> None:
    """Put the memory :func:`remembered` saved back into ``context`` (a fresh one, before its first batch).
    A document that does not read, or whose digest does not match its content (edited by hand), leaves
    ``context`` as it was: the decisions are made again from the lines read."""
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("state"), dict):
        return
    try:
        if doc.get("digest") != _digest(doc):
            return
    except (TypeError, ValueError):  # a value JSON cannot hold (a document not from JSON)
        return
    try:
        state = {key: _decode(value, context) for key, value in doc["state"].items()}
    except (KeyError, TypeError, ValueError, AttributeError, OSError, pl.exceptions.PolarsError):
        return
    context.state.update(state)
    context.steps_measured = context.steps_measured or bool(doc.get("steps_measured"))


def _encode_state(state: dict[str, Any]) -> dict[str, Any]:
    saved = {}
    for key, value in state.items():
        if key in NOT_SAVED:
            continue
        try:
            saved[key] = _encode(value)
        except _Unsaved:
            continue
    return saved


def _encode(value: Any) -> Any:
    """``value`` as JSON values; a tagged one-key dict (``{"~t": ...}``) where JSON has no such kind."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"~f": repr(value)}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, tuple):
        return {"~t": [_encode(v) for v in value]}
    if isinstance(value, set | frozenset):
        return {"~s": sorted((_encode(v) for v in value), key=repr)}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("~") for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {"~d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, pl.DataFrame):
        buffer = io.BytesIO()
        value.write_ipc(buffer)
        return {"~df": base64.b64encode(buffer.getvalue()).decode("ascii")}
    if isinstance(value, Layout):
        return {"~c": "Layout", "f": value.to_json()}
    if isinstance(value, ParseContext):
        return {"~c": "ParseContext", "f": {"state": _encode_state(value.state), **_flags(value)}}
    name = type(value).__name__
    if _CLASSES.get(name) is type(value) and dataclasses.is_dataclass(value):
        return {"~c": name, "f": {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    raise _Unsaved(name)


def _flags(context: ParseContext) -> dict[str, bool]:
    return {"steps_seen": context.steps_seen, "steps_measured": context.steps_measured}


def _decode(value: Any, outer: ParseContext) -> Any:
    """What :func:`_encode` saved as ``value``; raises :class:`KeyError`, :class:`TypeError` or
    :class:`ValueError` for what it does not save. ``outer``: the file's context (a saved inner context takes
    its year, declared formats and chain)."""
    if not isinstance(value, dict | list):
        return value
    if isinstance(value, list):
        return [_decode(v, outer) for v in value]
    tag = next((k for k in value if k.startswith("~")), None)  # a saved dict's own keys never start with "~"
    if tag == "~f":
        return float(value["~f"])
    if tag == "~t":
        return tuple(_decode(v, outer) for v in value["~t"])
    if tag == "~s":
        return {_decode(v, outer) for v in value["~s"]}
    if tag == "~d":
        return {_decode(k, outer): _decode(v, outer) for k, v in value["~d"]}
    if tag == "~df":
        return pl.read_ipc(io.BytesIO(base64.b64decode(value["~df"])))
    if tag == "~c":
        name, fields = value["~c"], value["f"]
        if name == "Layout":
            return Layout.from_json(fields)
        if name == "ParseContext":
            inner = ParseContext(year=outer.year, formats=outer.formats, chain=outer.chain)
            inner.state = {k: _decode(v, outer) for k, v in fields["state"].items()}
            inner.steps_seen, inner.steps_measured = bool(fields["steps_seen"]), bool(fields["steps_measured"])
            return inner
        return _CLASSES[name](**{k: _decode(v, outer) for k, v in fields.items()})
    return {k: _decode(v, outer) for k, v in value.items()}
