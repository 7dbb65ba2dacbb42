"""How a tierscope process ends: its exit codes, and the exception a stop signal raises.

Defined once for the command line (:mod:`tierscope.cli.common`, :mod:`tierscope.stopping`), the
trainer's tasks (:mod:`tierscope.trainer.train`) and its launcher (:mod:`tierscope.trainer.launch`).
Standard library only: every TensorFlow task imports it, and the console script before typer.
"""

from __future__ import annotations

import signal

#: Success.
EXIT_OK = 0
#: An error: one line on stderr saying what and where (a failed training task, a failed run).
EXIT_ERROR = 1
#: A usage error: typer's own, or :class:`tierscope.errors.UsageError`.
EXIT_USAGE = 2
#: ``tierscope recommend`` answered, and no configuration meets the deadline, budget or quotas: the
#: candidates are printed (the closest first) but none is recommended. Not 1: a script tells "nothing
#: fits" (ask for more time or money) from "could not answer" (a bad dataset, no price).
EXIT_NONE_MEETS = 3
#: The dataset is held by another command: ``EX_TEMPFAIL`` of sysexits.h, "try again later".
EXIT_BUSY = 75
#: A run stopped at its time limit, as coreutils' ``timeout`` exits.
EXIT_TIMEOUT = 124
#: Stopped by Ctrl-C (SIGINT) or by SIGTERM: 128 + the signal's number, as a shell reports a
#: command the signal killed.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """A signal asked the process to end (SIGTERM: cron's or a supervisor's ``kill``, the launcher
    stopping a task). A KeyboardInterrupt, so whatever finishes its work on Ctrl-C (the collector's
    storing thread, a task logging why it stopped) does the same for it, and no ``except Exception``
    on the way swallows it. ``str(error)`` says which signal."""
