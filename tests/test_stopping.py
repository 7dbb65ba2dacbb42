"""tierscope.stopping: SIGINT and SIGTERM become one exception each in the main thread."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from tierscope.exits import Terminated
from tierscope.stopping import _raise_stop, stopped


@pytest.fixture(autouse=True)
def _no_stop_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's signals are the process's first (the first stop decides, later ones are dropped)."""
    from tierscope import stopping

    monkeypatch.setattr(stopping, "_stopping", False)


def test_sigint_raises_keyboard_interrupt_and_sigterm_terminated_with_their_exit_codes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tierscope import stopping

    with pytest.raises(KeyboardInterrupt) as got:
        _raise_stop(signal.SIGINT, None)
    assert not isinstance(got.value, Terminated)
    assert stopped(got.value) == ("interrupted", 130)  # 128 + 2
    assert _raise_stop(signal.SIGTERM, None) is None  # after a stop: dropped, the first decides
    monkeypatch.setattr(stopping, "_stopping", False)
    with pytest.raises(Terminated) as term:
        _raise_stop(signal.SIGTERM, None)
    assert stopped(term.value) == ("interrupted by SIGTERM", 143)  # 128 + 15


def test_a_signal_while_a_keyboard_interrupt_is_being_handled_raises_nothing() -> None:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        assert _raise_stop(signal.SIGINT, None) is None
        try:
            raise OSError("a clean-up step failing while the interrupt unwinds")
        except OSError:
            assert _raise_stop(signal.SIGTERM, None) is None  # its __context__ is the interrupt
    try:
        raise ValueError("not an interrupt")
    except ValueError:
        with pytest.raises(KeyboardInterrupt):
            _raise_stop(signal.SIGINT, None)
    # once a stop was raised, a later signal raises nothing even where no interrupt is being handled (a
    # generator closed under GeneratorExit in the clean-up printed a traceback; SIGINT after SIGTERM said 130)
    try:
        raise GeneratorExit
    except GeneratorExit:
        assert _raise_stop(signal.SIGINT, None) is None


# polars hooks SIGINT when imported; kept, it aborted a query under way with a KeyboardInterrupt of
# its own, and the interpreter's handler raised a second one in the first one's clean-up.
ONE_INTERRUPT = """
import os, signal, threading
from tierscope.stopping import catch_stop_signals
catch_stop_signals()
import polars as pl
df = pl.DataFrame({"a": range(1_000_000)}).with_columns(pl.col("a").cast(pl.String))
threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    for _ in range(10_000):
        df.lazy().select(pl.col("a").str.contains("99").sum()).collect()
    print("no interrupt")
except KeyboardInterrupt:
    for n in range(200_000):  # bytecode, where a second interrupt would be raised
        str(n)
    print("one interrupt")
"""


def test_one_sigint_during_polars_queries_raises_one_keyboard_interrupt() -> None:
    done = subprocess.run([sys.executable, "-c", ONE_INTERRUPT], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "one interrupt\n", "")


# polars' hook sets SA_RESTART, so a read blocked on a pipe or a socket (collect cloud waiting on
# the API) went on waiting after Ctrl-C: here until the timer writes, 3 s later.
BLOCKED_READ = """
import os, signal, threading, time
from tierscope.stopping import catch_stop_signals
catch_stop_signals()
import polars
assert type(polars.__spec__.loader).__name__ == "SourceFileLoader"  # polars keeps its own loader
r, w = os.pipe()
threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
threading.Timer(3.0, os.write, (w, b"x")).start()
started = time.monotonic()
try:
    os.read(r, 1)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted" if time.monotonic() - started < 2.5 else "interrupted once the read returned")
"""


def test_after_polars_is_imported_sigint_interrupts_a_blocked_read() -> None:
    done = subprocess.run([sys.executable, "-c", BLOCKED_READ], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "interrupted\n"), done.stderr


IGNORED = """
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)   # a shell without job control, for `cmd &`
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a parent's deliberate choice
from tierscope.stopping import catch_stop_signals
catch_stop_signals()
import os, polars, time
os.kill(os.getpid(), signal.SIGINT)  # polars' hook would stop the query below; the ignore is back over it
time.sleep(0.1)
print(polars.DataFrame({"a": range(100_000)}).select(polars.col("a").sum()).item())
print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN, signal.getsignal(signal.SIGTERM) is signal.SIG_IGN)
"""


def test_an_ignored_sigint_or_sigterm_stays_ignored_after_polars_is_imported() -> None:
    # sum of 0..99999 = 99999 x 100000 / 2 = 4999950000
    done = subprocess.run([sys.executable, "-c", IGNORED], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "4999950000\nTrue True\n"), done.stderr


DONE = """
import os, signal, time
from tierscope.stopping import catch_stop_signals, stops_done
catch_stop_signals()
signal.signal(signal.SIGTERM, lambda signum, frame: print("its own handler"))  # set by someone else: kept
stops_done()
os.kill(os.getpid(), signal.SIGINT)
os.kill(os.getpid(), signal.SIGTERM)
time.sleep(0.1)
print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)
"""


def test_once_the_exit_is_decided_sigint_is_ignored_and_a_handler_set_by_another_is_kept() -> None:
    done = subprocess.run([sys.executable, "-c", DONE], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "its own handler\nTrue\n", "")


def test_once_a_stop_came_its_swallowed_interrupt_is_not_printed_and_another_error_is_the_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A SIGINT landing in a compiled extension's callback (polars extracting a scan's schema) was printed as
    # "Exception ignored in: 'String'" with a traceback, and the TypeError it left exited 1: the stop is what
    # happened, so the hook drops that one and the error maps to the stop's exit.
    from types import SimpleNamespace

    from tierscope import stopping

    seen: list[object] = []
    hook = stopping._QuietStops(seen.append)
    assert stopping.stop_requested() is None
    hook(SimpleNamespace(exc_value=KeyboardInterrupt()))
    assert len(seen) == 1  # no stop came: printed as before
    monkeypatch.setattr(stopping, "_stopping", signal.SIGTERM)
    hook(SimpleNamespace(exc_value=KeyboardInterrupt()))
    hook(SimpleNamespace(exc_value=ValueError("not ours")))
    assert len(seen) == 2 and isinstance(seen[1].exc_value, ValueError)  # type: ignore[attr-defined]
    assert isinstance(stopping.stop_requested(), Terminated)
