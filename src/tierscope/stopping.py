"""Ctrl-C (SIGINT) and SIGTERM as exceptions in the main thread, each raised once: what lets a
command stop where it is (every write atomic), clean up and say so in one line with its exit code
(:func:`tierscope.cli.common.interrupted`).

Only the console script installs them (:func:`catch_stop_signals`); the library leaves signals
alone. Standard library only: installed before typer, polars or a room is imported.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

#: Exit codes: 128 + the signal's number, as a shell reports a command the signal killed.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM reached the process (cron's or a supervisor's ``kill``). A KeyboardInterrupt, so
    whatever finishes its work on Ctrl-C (the collector's storing thread) does the same for it."""


def _being_handled() -> bool:
    """Whether the main thread is already unwinding from a KeyboardInterrupt (handling it, or
    another exception raised while handling it)."""
    exc = sys.exc_info()[1]
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__context__
    return False


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    # polars hooks SIGINT as well (when it is imported) and aborts a query under way with a
    # KeyboardInterrupt of its own; this handler runs at the next bytecode, in the clean-up of
    # that exception. One signal must not raise twice: the second would cut the clean-up (the
    # storing thread's last batch) and the message short. A second Ctrl-C during the clean-up
    # is dropped the same way (the clean-up waits for one batch at most).
    if _being_handled():
        return
    if signum == signal.SIGTERM:
        raise Terminated("SIGTERM")
    raise KeyboardInterrupt


def catch_stop_signals() -> None:
    """Make SIGINT raise :class:`KeyboardInterrupt` and SIGTERM :class:`Terminated` in the main
    thread (call it there, first thing).

    SIGINT is caught even when the parent left it ignored, as a shell without job control does
    for every background command (a script's ``tierscope collect ... &``): polars' hook would
    otherwise turn the signals that land inside one of its queries into a KeyboardInterrupt and
    drop the rest, so a collect stopped at some instants and ran to its end at others. An
    ignored SIGTERM (a deliberate choice: nothing ignores it by default) stays ignored.
    """
    signal.signal(signal.SIGINT, _raise_stop)
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:
        signal.signal(signal.SIGTERM, _raise_stop)


def stopped(exc: KeyboardInterrupt) -> tuple[str, int]:
    """What stopped the command, ``interrupted`` or ``interrupted by SIGTERM``, and its exit code."""
    if isinstance(exc, Terminated):
        return "interrupted by SIGTERM", EXIT_TERMINATED
    return "interrupted", EXIT_INTERRUPTED
