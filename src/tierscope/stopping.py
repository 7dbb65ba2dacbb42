"""Ctrl-C (SIGINT) and SIGTERM as exceptions in the main thread, one per signal: what lets a
command stop where it is (every write atomic), clean up and say so in one line with its exit code
(:func:`tierscope.cli.common.interrupted`).

Only the console script installs them (:func:`catch_stop_signals`); the library leaves signals
alone. Standard library only: installed before typer, polars or a room is imported.

polars hooks SIGINT itself when it is imported (a C handler, signal-hook's): it calls the handler
it found, then, while a polars query runs in any thread, makes that query raise a
KeyboardInterrupt of its own. Kept, that hook made one Ctrl-C two KeyboardInterrupts (the query's,
then the interpreter's in the first one's clean-up, or in a finalizer run while unwinding, where it
is printed and dropped), raised one in the collector's reading and storing threads, and, over a
SIGINT the parent left ignored, stopped a command at some instants (inside a query) and not at
others. Its flags
(SA_RESTART) also kept a blocking read (a socket, a pipe) from being interrupted. So once polars
is imported, SIGINT is given back to the interpreter's handler (:class:`_AfterPolars`): a long
polars call in the main thread then finishes before the KeyboardInterrupt is raised.
"""

from __future__ import annotations

import contextlib
import importlib.util
import signal
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import FrameType, ModuleType
from typing import Any

from tierscope.exits import EXIT_INTERRUPTED, EXIT_TERMINATED, Terminated


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


#: The first stop signal's number (0: none yet): the first decides the exit (130 or 143) and its line.
_stopping = 0


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    # A second signal while the first one's clean-up runs (Ctrl-C pressed twice, or SIGTERM
    # after it) is dropped: it would cut the clean-up (the storing thread's last batch, which
    # takes a batch's time at most) and the message short. A flag, not only the exception being
    # handled: closing a generator (a reader's thread pool) runs its clean-up under GeneratorExit,
    # where a second KeyboardInterrupt printed a traceback and a SIGINT after a SIGTERM said 130.
    global _stopping
    if _stopping or _being_handled():
        return
    _stopping = signum
    if signum == signal.SIGTERM:
        raise Terminated("SIGTERM")
    raise KeyboardInterrupt


class _QuietStops:
    """An unraisable-exception hook that drops the stop a signal raised where Python cannot raise it (a
    callback of a compiled extension: polars reading a schema printed "Exception ignored in: 'String'"
    and a traceback of our KeyboardInterrupt); the command still stops (:func:`stop_requested`)."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt) and _stopping:
            return
        self.previous(unraisable)


def stop_requested() -> KeyboardInterrupt | None:
    """The stop a signal asked for (:class:`Terminated` for SIGTERM, else :class:`KeyboardInterrupt`),
    None if none came. Another error may surface first from the work the signal cut short (a polars
    thread's read interrupted by it fails with "Interrupted system call"): the stop is what happened."""
    if not _stopping:
        return None
    return Terminated("SIGTERM") if _stopping == signal.SIGTERM else KeyboardInterrupt()


def catch_stop_signals() -> None:
    """Make SIGINT raise :class:`KeyboardInterrupt` and SIGTERM :class:`Terminated` in the main
    thread (call it there, first thing), SIGINT also after polars is imported.

    A signal the parent left ignored stays ignored, as every Unix program does: a shell without
    job control starts each background command (a script's ``tierscope collect ... &``) with
    SIGINT ignored so that the Ctrl-C meant for the foreground does not stop it (``kill -TERM``
    does). Once polars is imported, the ignore is put back over polars' hook too, which otherwise
    stopped such a collect at some instants (inside a query) and not at others.
    """
    global _stopping
    _stopping = 0
    if not isinstance(sys.unraisablehook, _QuietStops):
        sys.unraisablehook = _QuietStops(sys.unraisablehook)
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _raise_stop)
    if "polars" in sys.modules:
        _reclaim_sigint()
    elif not any(isinstance(f, _AfterPolars) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterPolars())


def stops_done() -> None:
    """Ignore SIGINT and SIGTERM from now on where :func:`catch_stop_signals` caught them: the
    command's exit code is decided (and a stop's line printed), so a further Ctrl-C or SIGTERM has
    nothing left to stop. Caught, it would be raised wherever the process is on its way out: in
    the interpreter's wait for a thread (printed as "Exception ignored in threading._shutdown" and
    a traceback) or in an atexit handler; and once the interpreter has put the default disposition
    back, late in its finalization, it would kill the process with another exit code.

    SIG_IGN, not a handler that does nothing: the interpreter leaves an ignored signal ignored to
    the end, and nothing is started after this that would inherit it. A disposition someone else
    set (pytest's, an embedding program's, a shell's SIG_IGN) is left alone; outside the main
    thread nothing changes (signals are set there only)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is _raise_stop:
            with contextlib.suppress(ValueError):  # not the main thread
                signal.signal(signum, signal.SIG_IGN)


def _reclaim_sigint() -> None:
    """Put the interpreter's SIGINT disposition (the handler Python code set, or SIG_IGN) back in
    place of a C one."""
    with contextlib.suppress(ValueError):  # not the main thread: polars' hook stays (it calls this one first)
        signal.signal(signal.SIGINT, signal.getsignal(signal.SIGINT))


class _AfterPolars:
    """A finder (of :data:`sys.meta_path`) of ``polars`` as the others find it, with a loader that
    :func:`_reclaim_sigint` after it; it leaves :data:`sys.meta_path` once polars is imported (a
    look-up alone, ``importlib.util.find_spec("polars")``, keeps it). Not an importlib.abc class:
    that import costs 25 ms at start."""

    def __init__(self) -> None:
        self._finding = False

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "polars" or self._finding:
            return None
        self._finding = True  # the look-up below asks every finder, this one too
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._finding = False
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenReclaim(spec.loader, self)  # type: ignore[assignment]
        return spec


class _ThenReclaim:
    """``loader``, then :func:`_reclaim_sigint`; the module keeps ``loader`` as its own."""

    def __init__(self, loader: Any, finder: _AfterPolars) -> None:
        self.loader = loader
        self.finder = finder

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        try:
            self.loader.exec_module(module)
        finally:
            _reclaim_sigint()
            with contextlib.suppress(ValueError):  # another import of polars took it out already
                sys.meta_path.remove(self.finder)


def stopped(exc: KeyboardInterrupt) -> tuple[str, int]:
    """What stopped the command, ``interrupted`` or ``interrupted by SIGTERM``, and its exit code."""
    if isinstance(exc, Terminated):
        return "interrupted by SIGTERM", EXIT_TERMINATED
    return "interrupted", EXIT_INTERRUPTED
