"""Modules imported on a thread of their own while the main thread works on something else.

A command that will need a heavy module only after a long computation (``tierscope report``: Altair,
jinja2 and scipy after the analysis pass) imports it meanwhile: the pass spends its time in polars,
which releases the GIL, so the import costs the command next to no wall time, where after the pass
it would add all of its own.
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

    thread = threading.Thread(target=run, name="tierscope-import-ahead")
    thread.start()
    return thread
