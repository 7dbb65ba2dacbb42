"""What the dataset room raises. Each message says what was wrong, where, and what to do."""

from __future__ import annotations

from pathlib import Path

from tierscope.errors import TierscopeError


class DatasetError(TierscopeError):
    """Base class of the dataset's errors: a missing or unusable dataset directory."""


class DatasetCorruptError(DatasetError):
    """A data file of the dataset cannot be read."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"dataset file {path} is unreadable: {problem}. "
            f"Run `tierscope doctor --dataset {path.parents[2]} --fix` to move it to quarantine."
        )


class StateCorruptError(DatasetError):
    """A state document (``state/*.json``) cannot be read."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"collector state {path} {problem}; run `tierscope doctor --dataset {path.parents[1]} --fix` "
            "to move it to quarantine, or delete it (the next collect then re-reads from the start, "
            "and records already stored are skipped)."
        )


class DatasetBusyError(DatasetError):
    """Another command holds the dataset's lock (the CLI exits 75, EX_TEMPFAIL)."""


def a_file_not_a_dataset(root: object) -> str:
    """The one line for a ``--dataset`` that names a file: said alike by every command, reading or writing."""
    return f"{root} is a file, not a dataset directory; pass --dataset a directory"
