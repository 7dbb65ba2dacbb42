"""How TensorBoard event files are named: enough to list a run directory's event files and to
tell one from a text log without loading the event reader (:mod:`.tfevents`) and polars."""

from __future__ import annotations

from pathlib import Path

#: What every event file's name starts with (``events.out.tfevents.<time>.<host>[.<suffix>]``).
EVENT_FILE_PREFIX = "events.out.tfevents."
#: The format name of records read from event files.
TFEVENTS = "tfevents"


def is_event_file(path: Path) -> bool:
    """Whether ``path`` is named like a TensorBoard event file."""
    return path.name.startswith(EVENT_FILE_PREFIX)


def event_files(directory: Path) -> list[Path]:
    """The event files in ``directory`` and its subdirectories, sorted."""
    return sorted(p for p in directory.rglob(f"{EVENT_FILE_PREFIX}*") if p.is_file())
