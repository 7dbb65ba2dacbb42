"""What the collector raises. Each message says what was wrong, where, and what to do."""

from __future__ import annotations

from tierscope.errors import TierscopeError


class CollectorError(TierscopeError):
    """Base class of the collector's errors: a problem with the input the user can fix."""


class ManifestError(CollectorError):
    """The run manifest is missing, not TOML, or lacks a field."""


class InputError(CollectorError):
    """A log file cannot be opened or decoded."""


class MissingInputError(InputError):
    """A log file named to be read is not there (or is not a regular file): nothing of it was read."""


class CutOffError(InputError):
    """A compressed file ends before its stream does: cut off, or still being written (a gzip's writer, logrotate's
    ``compress``, adds to it until it closes it). ``lines``: the lines read before the cut."""

    def __init__(self, message: str, lines: int) -> None:
        super().__init__(message)
        self.lines = lines
