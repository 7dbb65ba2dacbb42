"""What every command shares: exit codes, consoles, the options several commands take, the
dataset opener, and the one place an error becomes a message and an exit code (:class:`App`).

Cheap to import (typer and the standard library only): ``tierscope --help`` imports every
command module, so nothing here may load polars, numpy or a room of tierscope. Commands
import what they use inside their bodies.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from tierscope.errors import TierscopeError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from tierscope.analysis.options import AnalysisOptions
    from tierscope.dataset.store import Dataset

#: Success, an error (one line on stderr), a usage error (typer's, or :class:`UsageError`), the
#: dataset locked by another command (EX_TEMPFAIL: try again later), interrupted by Ctrl-C.
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_BUSY = 75
EXIT_INTERRUPTED = 130

#: What Ctrl-C during a collect prints. Every write is atomic and offsets are saved after the
#: data they cover, so nothing stored is lost and the next collect resumes.
INTERRUPTED = "interrupted: what was stored so far is kept; run the same collect again to carry on"

F = TypeVar("F", bound=Callable[..., Any])


def out_console() -> Console:
    """A console for stdout; cron and pipes have no terminal width, so tables get a wide one."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 200)


def err_console() -> Console:
    """A console for stderr (errors, warnings, notes, progress)."""
    from rich.console import Console

    return Console(stderr=True)


def print_error(exc: BaseException) -> int:
    """Print ``exc`` as one line ``error: ...`` on stderr; return its exit code.

    :class:`~tierscope.dataset.errors.DatasetBusyError` is 75, :class:`UsageError` 2, any other
    :class:`TierscopeError` 1; an ``OSError`` (disk full, permissions) names its file, exit 1.
    """
    from rich.text import Text

    from tierscope.dataset.errors import DatasetBusyError
    from tierscope.text import printable

    if isinstance(exc, OSError) and not isinstance(exc, TierscopeError):
        where = f" {exc.filename}" if exc.filename else ""
        message = f"cannot write or read{where}: {exc.strerror or exc}"
    else:
        message = str(exc)
    # Text, not markup: a message may quote a log line such as "Train [worker/3]" or 'tierscope[trainer]'.
    shown = printable(" ".join(message.split()))  # a run id's escape sequence must not reach the terminal
    err_console().print(Text.assemble(("error: ", "bold red"), shown), soft_wrap=True)
    if isinstance(exc, DatasetBusyError):
        return EXIT_BUSY
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR


def guarded(func: F, *, interruptible: bool = False) -> F:
    """``func`` with tierscope's and the system's errors turned into one line and an exit code
    (:func:`print_error`); with ``interruptible`` (a collect), Ctrl-C prints :data:`INTERRUPTED`
    and exits 130. Anything else (a bug) keeps its traceback."""

    @functools.wraps(func)  # typer reads the options from the wrapped signature
    def command(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (TierscopeError, OSError) as exc:
            raise typer.Exit(print_error(exc)) from None
        except KeyboardInterrupt:
            if not interruptible:
                raise
            err_console().print(INTERRUPTED, soft_wrap=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None

    return command  # type: ignore[return-value]


class App(typer.Typer):
    """A typer app whose every command runs :func:`guarded`, so no command catches errors itself.

    ``@app.command(..., interruptible=True)`` marks a collect: Ctrl-C there exits 130.
    """

    def command(self, *args: Any, interruptible: bool = False, **kwargs: Any) -> Callable[[F], F]:  # type: ignore[override]
        register = super().command(*args, **kwargs)

        def decorator(func: F) -> F:
            register(guarded(func, interruptible=interruptible))
            return func

        return decorator


# The options several commands share. The dataset's help differs: a collect creates it, every
# other command needs one that exists (and creates nothing).
NewDatasetOpt = Annotated[Path, typer.Option("--dataset", "-d", help="Dataset directory (created if missing).")]
DatasetOpt = Annotated[
    Path, typer.Option("--dataset", "-d", help="Dataset directory, as written by `tierscope collect`.")
]
LockTimeoutOpt = Annotated[
    float,
    typer.Option(min=0, help="Seconds to wait for another collect to finish, then exit 75 (0: do not wait)."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success (for cron).")]
BaselineOpt = Annotated[
    str | None, typer.Option("--baseline", help="Run id to compare against (default: the BASIC run).")
]
PriceDateOpt = Annotated[
    datetime | None,
    typer.Option(
        "--price-date", formats=["%Y-%m-%d"], help="Price table date for runs of unknown date (default: today)."
    ),
]


def _known_region(region: str) -> str:
    """``region`` if the price table has rows for it; a usage error otherwise (an unknown one priced nothing)."""
    from tierscope.analysis.cost import load_prices

    known = sorted(load_prices().get_column("region").unique())
    if region not in known:
        raise typer.BadParameter(f"{region!r} is not a region of the price table; use one of {', '.join(known)}")
    return region


RegionOpt = Annotated[str, typer.Option("--region", callback=_known_region, help="Price region: us, europe or asia.")]


def summary_options(
    baseline: str | None, price_date: datetime | None, region: str, steps: int | None = None
) -> AnalysisOptions:
    """The analysis options of ``--baseline``, ``--price-date``, ``--region`` and ``--steps``."""
    from tierscope.analysis.options import AnalysisOptions

    return AnalysisOptions(
        baseline=baseline, price_date=price_date.date() if price_date else None, region=region, steps=steps
    )


def open_dataset(path: Path) -> Dataset:
    """The dataset at ``path``; raises :class:`~tierscope.dataset.errors.DatasetError` when there is
    none (nothing is created: a typo must not leave an empty dataset behind)."""
    from tierscope.dataset.errors import DatasetError
    from tierscope.dataset.store import Dataset

    dataset = Dataset(path)
    if not dataset.exists():
        raise DatasetError(f"{path} holds no tierscope dataset; run `tierscope collect files` first")
    return dataset
