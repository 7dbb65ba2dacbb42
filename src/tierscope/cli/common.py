"""What every command shares: exit codes (for cron and scripts)."""

from __future__ import annotations

#: Success, an error (one line on stderr), a usage error (typer's), the dataset locked by
#: another command (EX_TEMPFAIL: try again later), interrupted by Ctrl-C.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_BUSY = 75
EXIT_INTERRUPTED = 130
