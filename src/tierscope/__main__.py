"""The ``tierscope`` console script and ``python -m tierscope``.

Ctrl-C and SIGTERM are caught before anything else is imported (typer alone takes 0.1 s), so a
signal from the very start stops the command (:mod:`tierscope.stopping`). A cron job's quiet collect is
done before the command line is built, where it can be (:mod:`tierscope.cron`).
"""

from __future__ import annotations

import sys


def main() -> None:
    """Catch the stop signals, then run the command line (:func:`tierscope.cli.main`)."""
    from tierscope.stopping import catch_stop_signals, stopped, stops_done

    catch_stop_signals()
    try:
        from tierscope.cron import collect_quietly

        done = collect_quietly(sys.argv)
    except KeyboardInterrupt as exc:  # a collect's line, as the command line says it
        from tierscope.cli.common import interrupted

        raise SystemExit(interrupted(exc, collect=True)) from None
    if done:
        stops_done()
        return
    try:
        from tierscope.cli import main as run
    except KeyboardInterrupt as exc:  # before the command line exists: its line, plainly
        line, code = stopped(exc)
        stops_done()
        sys.stderr.write(line + "\n")
        raise SystemExit(code) from None
    run()


if __name__ == "__main__":
    main()
