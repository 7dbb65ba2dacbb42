"""What the collector raises. Each message says what was wrong, where, and what to do."""

from __future__ import annotations

from pathlib import Path

#: Exit codes, for cron: success, an error (message on stderr), a usage error (typer's),
#: and the dataset locked by another collect (EX_TEMPFAIL: try again later).
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_BUSY = 75


class CollectorError(Exception):
    """Base class: a problem the user can fix; the CLI prints it on one line and exits 1."""


class DatasetCorruptError(CollectorError):
    """A data file of the dataset cannot be read."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"dataset file {path} is unreadable: {problem}. "
            f"Run `tierscope doctor --dataset {path.parents[2]} --fix` to move it to quarantine."
        )


class StateCorruptError(CollectorError):
    """A collector state document (``state/*.json``) cannot be read."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"collector state {path} {problem}; run `tierscope doctor --dataset {path.parents[1]} --fix` "
            "to move it to quarantine, or delete it (the next collect then re-reads from the start, "
            "and records already stored are skipped)."
        )


class DatasetBusyError(CollectorError):
    """Another collect holds the dataset's lock."""


class ManifestError(CollectorError):
    """The run manifest is missing, not TOML, or lacks a field."""


class InputError(CollectorError):
    """A log file cannot be opened or decoded."""
