"""Modules imported on a thread of their own while the main thread works on something else.

A command that will need a heavy module only after a long computation (``tierscope report``: Altair,
and jinja2 after the analysis pass) imports it meanwhile: the pass spends its time in polars,
which releases the GIL, so the import costs the command next to no wall time, where after the pass
it would add all of its own.

The thread is a daemon: a command that ends while an import is under way (an error, Ctrl-C
during the analysis) exits at once instead of waiting up to a second for modules it will not use
(and a second Ctrl-C in that wait printed a traceback). Stopping it there is safe for what it
does: it writes nothing and holds no file, only the import locks of the modules it is importing,
which nothing asks for once the command has ended; the interpreter stops a daemon thread at
finalization, where it next waits for the GIL.
"""

from __future__ import annotations

import contextlib
import importlib
import threading


def import_ahead(*modules: str, until: threading.Event | None = None) -> threading.Thread:
    """Start importing ``modules``, in order, on a thread (returned, started). Once ``until`` is set (the
    work they were to overlap is done) the modules not begun are left to whoever imports them.

    Never raises: a module that fails to import here is left to the main thread's own import, which
    raises its error where the command expects it (the thread only warms ``sys.modules``)."""

    def run() -> None:
        for name in modules:
            if until is not None and until.is_set():
                return
            with contextlib.suppress(Exception):  # raised again by the importer that needs it
                importlib.import_module(name)

    thread = threading.Thread(target=run, name="tierscope-import-ahead", daemon=True)
    thread.start()
    return thread
