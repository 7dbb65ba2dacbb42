"""A small append to a 2016-format log, read without polars: the parse half of a cheap cron collect.

A collect that finds a few thousand new lines in a log it read before spends most of its CPU on imports
(polars alone ~0.16 CPU-s of ~0.4). This module reads such an append with the standard library's ``re``
and says, for every line, what the polars format chain (:func:`tierscope.collector.formats.parse_lines`)
makes of it, or declines the whole append. It accepts only lines whose outcome it knows for certain:

- a step line of the 2016 experiment (``Train [worker/1], step 300:loss:2.049, accuracy:0.247 (13.217
  sec) 22.698 global_steps/s, 4.010 local_steps/s``), with no prefix, a known role, plain decimal
  numbers (no sign, exponent, ``nan`` or ``inf``) and every value within the checks of
  :mod:`tierscope.collector.formats.cloudml`: a step record;
- the 2016 trainer's checkpoint line (``INFO:root:Saving checkpoint to gs://bucket/job/model.ckpt-1900``)
  whose path is lower-case letters, digits and ``/._-`` and matches none of the status module's patterns
  (:func:`status_pattern`): a skipped line.

and only an append whose step lines' global steps rise strictly, the first of them among its first
:data:`SNIFF_LINES` lines, from line to line, with no line twice
(the chain reads a log that runs backwards, or one several ranks copy into, otherwise), no blank line
and no line longer than :data:`MAX_LINE_CHARS`. Anything else (another line, another variant, an
evaluation block, a traceback, a NaN loss, a status the last collect carried) returns None: the
caller hands the whole append to the polars path before anything is written. ``tests/collector/
test_small_append.py`` checks that wherever this module accepts an append, its records, skipped
lines and carried status equal the chain's.
"""

from __future__ import annotations

import ast
import functools
import pathlib
import re
from dataclasses import dataclass, field

#: Bytes of new log above which a collect takes the polars path: well within the reader's first batch
#: (:func:`tierscope.collector.sources.files.ramp_sizes`, 4 MiB), so the polars path reads the same append as
#: one final batch too, with no look-ahead held back. ~17,000 lines of the 2016 format.
MAX_APPEND_BYTES = 2 << 20

#: Characters of the longest line accepted (a 2016 step line is ~120): longer ones take the polars path.
MAX_LINE_CHARS = 512

#: The roles of :data:`tierscope.dataset.schema.ROLES` (defined there: ``tests/collector/test_small_append.py``
#: checks the two agree; that module imports polars).
ROLES = frozenset(("master", "chief", "worker", "ps", "evaluator"))

#: Lines at a file's read's start that tell its format (:data:`tierscope.collector.formats.SNIFF_LINES`, defined
#: there; the tests check the two agree): an append whose first step line lies past them is sniffed as no format
#: by the full collect (a checkpoint line is no format's), so it takes that path.
SNIFF_LINES = 200

#: The format name the chain gives these records (:class:`tierscope.collector.formats.cloudml.CloudMLSamples`).
FORMAT = "cloudml"

_NUM = r"[0-9]{1,15}(?:\.[0-9]{1,15})?"
_STEP_LINE = re.compile(
    rf"Train \[(?P<role>[a-z]{{1,9}})/(?P<task>[0-9]{{1,9}})\], step (?P<step>[0-9]{{1,15}}):loss:(?P<loss>{_NUM}), "
    rf"accuracy:(?P<acc>{_NUM}) \((?P<elapsed>{_NUM}) sec\) (?P<g>{_NUM}) global_steps/s, "
    rf"(?P<l>{_NUM}) local_steps/s"
)
_CHECKPOINT_LINE = re.compile(r"INFO:root:Saving checkpoint to gs://[a-z0-9._/-]{1,200}/model\.ckpt-[0-9]{1,15}")

#: The patterns of :mod:`tierscope.collector.formats.status` a checkpoint line must match none of: its status lines
#: (:data:`~tierscope.collector.formats.status.MARKERS`), milestones, work announced and stops on purpose. Read from
#: that module's source (importing it imports polars), the one definition, so a pattern added there counts here.
_STATUS_NAMES = ("MARKERS", "MILESTONES", "ANNOUNCED", "STOPPED_ON_PURPOSE")
#: The modules whose patterns the status lines are made of, and their names: a process group's endings are
#: :data:`MARKERS` built in status.py from collectives.py's wordings.
_STATUS_SOURCES = {"status.py": _STATUS_NAMES, "collectives.py": ("COLLECTIVE_ENDINGS",)}


@functools.cache
def status_pattern() -> re.Pattern[str]:
    """One pattern matching wherever a pattern of :data:`_STATUS_NAMES` may: each compiled case-blind (a polars
    ``(?i)`` may sit mid-pattern, where ``re`` refuses it; matching more only sends an append to the polars path)."""
    found: list[str] = []
    for module, wanted in _STATUS_SOURCES.items():
        tree = ast.parse((pathlib.Path(__file__).parent / "formats" / module).read_text(encoding="utf-8"))
        for node in tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
            if isinstance(target, ast.Name) and target.id in wanted and node.value is not None:  # type: ignore[attr-defined]
                found += [
                    c.value
                    for c in ast.walk(node.value)  # type: ignore[attr-defined]
                    if isinstance(c, ast.Constant) and isinstance(c.value, str) and len(c.value) > 2
                ]
    parts = [re.sub(r"\(\?i\)|\(\?P<\w+>", lambda m: "" if m.group() == "(?i)" else "(?:", f) for f in found]
    return re.compile("|".join(f"(?:{p})" for p in parts), re.IGNORECASE)


@dataclass
class SmallParse:
    """What the chain makes of an append: one step record per accepted step line (columns of
    :data:`tierscope.dataset.schema.STEP_SCHEMA` as Python lists, in line order) and the lines skipped."""

    columns: dict[str, list[object]] = field(default_factory=dict)
    skipped: int = 0

    @property
    def records(self) -> int:
        return len(self.columns.get("step", ()))


#: The record columns, in the order the chain's cloudml parser gives them.
STEP_COLUMNS = (
    "source_offset",
    "role",
    "task_index",
    "step",
    "loss",
    "accuracy",
    "elapsed_s",
    "global_steps_per_s",
    "local_steps_per_s",
    "format",
)


def parse_append(lines: list[str], first_line: int) -> SmallParse | None:
    """The records and skipped lines of ``lines`` (an append's lines without their line ends, the first
    one line number ``first_line``, 1-based), or None where one line's or the whole append's outcome is
    not certain (see the module's docstring)."""
    columns: dict[str, list[object]] = {name: [] for name in STEP_COLUMNS}
    offsets, roles, tasks, steps = (columns[n] for n in ("source_offset", "role", "task_index", "step"))
    losses, accs, elapsed, globals_, locals_ = (
        columns[n] for n in ("loss", "accuracy", "elapsed_s", "global_steps_per_s", "local_steps_per_s")
    )
    skipped = 0
    last_step = -1
    if len(set(lines)) != len(lines):
        return None
    for number, line in enumerate(lines, first_line):
        if len(line) > MAX_LINE_CHARS:
            return None
        found = _STEP_LINE.fullmatch(line)
        if found is None:
            if _CHECKPOINT_LINE.fullmatch(line) and not status_pattern().search(line):
                skipped += 1
                continue
            return None
        role, task, step, loss, acc, secs, g, local = found.groups()
        step_n = int(step)
        acc_n = float(acc)
        if role not in ROLES or step_n <= last_step or acc_n > 1:
            return None
        last_step = step_n
        offsets.append(number)
        roles.append(role)
        tasks.append(int(task))
        steps.append(step_n)
        losses.append(float(loss))
        accs.append(acc_n)
        elapsed.append(float(secs))
        globals_.append(float(g))
        locals_.append(float(local))
    if steps and offsets[0] - first_line >= SNIFF_LINES:  # type: ignore[operator]
        return None
    columns["format"] = [FORMAT] * len(steps)
    return SmallParse(columns=columns, skipped=skipped)


#: The keys of a position's carried status (:func:`tierscope.collector.formats.status.carried_work`) this
#: module knows: a position carrying another is the full collect's.
CARRY_KEYS = frozenset(("short", "why", "steps", "step"))
#: The key of the formats' memory in a position's carry (:data:`tierscope.collector.formats.memory.KEY`, defined
#: there; the tests check the two agree): kept as it is where these lines leave it as it is.
MEMORY_KEY = "parse"


def carry_after(carried: dict[str, object] | None, parsed: SmallParse) -> dict[str, object] | None:
    """The status the full collect saves with the position after ``parsed`` (an append holding a record),
    read on from a position that carried ``carried``; None where this module cannot tell it: ``carried``
    says the newest record announced work it had not reached or that the run stopped on purpose (a bare
    ending later is judged by that), or holds a key it does not know, or formats' memory these lines may
    change (:func:`memory_kept`). The append's lines say neither, so both stay False; a record came, and the
    newest one's step is the one a later traceback fails at. The memory is carried on as it was."""
    if carried and (set(carried) - CARRY_KEYS - {MEMORY_KEY} or carried.get("short") or carried.get("why")):
        return None
    memory = (carried or {}).get(MEMORY_KEY)
    if memory is not None and not memory_kept(memory):
        return None
    steps = parsed.columns["step"]
    if not steps:
        return None
    after: dict[str, object] = {"short": False, "why": False, "steps": True, "step": steps[-1]}
    return after if memory is None else {**after, MEMORY_KEY: memory}


def memory_kept(memory: object) -> bool:
    """Whether the formats' memory ``memory`` (as saved) stays as it is over lines this module accepts: the 2016
    lines are the cloudml format's, which remembers nothing; what else remembers is decided already and not
    moved by them: no ranks copy the lines (a rank's run ends with every line) and no layout is learned from
    them (decided: none; or not yet, where another format read the file's steps: then the first line it sees
    decides none. Undecided otherwise, it counts the lines it saw). An MLPerf memory, empty, is another's."""
    if not isinstance(memory, dict) or not isinstance(memory.get("state"), dict):
        return False
    state = memory["state"]
    layout = state.get("layout", None if state.get("layout-others-read") is True else True)
    return state.get("ranks", False) is False and layout in (False, None) and state.get("mlperf", {}) == {}
