"""What every command shares: consoles, the options several commands take, the
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
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from tierscope.errors import TierscopeError, UsageError
from tierscope.exits import EXIT_BUSY, EXIT_ERROR, EXIT_USAGE

if TYPE_CHECKING:
    from rich.console import Console

    from tierscope.analysis.options import AnalysisOptions
    from tierscope.dataset.store import Dataset


#: What Ctrl-C or SIGTERM during a collect adds to "interrupted". Every write is atomic and offsets
#: are saved after the data they cover, so nothing stored is lost and the next collect resumes.
KEPT = "what was stored so far is kept; run the same collect again to carry on"

F = TypeVar("F", bound=Callable[..., Any])


def out_console() -> Console:
    """A console for stdout as wide as the terminal, or ``COLUMNS``; cron and pipes have no
    terminal width, so their tables get a wide one (200)."""
    import os

    from rich.console import Console

    given = os.environ.get("COLUMNS", "")
    return Console(width=None if sys.stdout.isatty() or given.isdigit() else 200)


def err_console() -> Console:
    """A console for stderr (errors, warnings, notes, progress)."""
    from rich.console import Console

    return Console(stderr=True)


def _os_remedy(exc: OSError) -> str:
    """What to do about a system error, by its errno. Every write of the dataset and the report is
    atomic, so a failed one left nothing half-written and running the command again is safe. (The
    writers raise pyarrow's errors again with their errno and file: :func:`tierscope.atomic.writing`.)"""
    import errno

    code = exc.errno
    again = "then run the command again (nothing half-written was kept)"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"free space on that disk (or write elsewhere), {again}"
    if code == errno.EFBIG:  # a file system's largest file (FAT's 4 GiB), or a shell's `ulimit -f`
        limit = "a file size limit stopped the write (the file system's largest file, or `ulimit -f`)"
        return f"{limit}: raise it or write elsewhere, {again}"
    if code in (errno.EACCES, errno.EPERM):
        return f"check that you may read and write there, {again}"
    if code == errno.EROFS:
        return "that file system is read-only: use a dataset or an output on a writable one"
    if code in (errno.EEXIST, errno.ENOTDIR):
        return "a file stands where a folder is needed: choose another path"
    if code == errno.ENOENT:
        return "check the path (a folder of it may be gone)"
    return f"check the path and the disk, {again}"


def _too_many_files(exc: BaseException) -> bool:
    """Whether ``exc`` says the process (or the system) ran out of open files: an ``OSError``'s
    errno, or the words of polars' and pyarrow's errors, which carry none."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.EMFILE, errno.ENFILE):
        return True
    text = str(exc)
    return "Too many open files" in text or "os error 24" in text


def _too_many_files_message(exc: BaseException) -> str:
    """The cause (out of open files, not the file being opened then) and the remedy."""
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    limit = "no limit" if soft == resource.RLIM_INFINITY else f"{soft:,}"
    opening = f" (while opening {exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
    return (
        f"too many open files: this process may hold {limit} (`ulimit -n`){opening}; merge the dataset's "
        "small data files with `tierscope compact -d DATASET`, or raise the limit (`ulimit -n 4096`), "
        "then run the command again"
    )


def print_error(exc: BaseException) -> int:
    """Print ``exc`` as one line ``error: ...`` on stderr; return its exit code.

    :class:`~tierscope.dataset.errors.DatasetBusyError` is 75, :class:`UsageError` 2, any other
    :class:`TierscopeError` 1; an ``OSError`` (disk full, permissions) names its file, exit 1.
    """
    from rich.text import Text

    from tierscope.dataset.errors import DatasetBusyError
    from tierscope.text import printable

    if _too_many_files(exc):
        message = _too_many_files_message(exc)
    elif isinstance(exc, OSError) and not isinstance(exc, TierscopeError):
        where = f" {exc.filename}" if exc.filename else ""
        message = f"cannot write or read{where}: {exc.strerror or exc}: {_os_remedy(exc)}"
    else:
        message = str(exc)
    # Text, not markup: a message may quote a log line such as "Train [worker/3]" or 'tierscope[trainer]'.
    shown = printable(" ".join(message.split()))  # a run id's escape sequence must not reach the terminal
    err_console().print(Text.assemble(("error: ", "bold red"), shown), soft_wrap=True)
    if isinstance(exc, DatasetBusyError):
        return EXIT_BUSY
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR


def interrupted(exc: KeyboardInterrupt, collect: bool = False) -> int:
    """Print that Ctrl-C or SIGTERM (:class:`~tierscope.stopping.Terminated`) stopped the command,
    one line on stderr (a collect's says what became of its records, :data:`KEPT`); return the
    exit code, 130 or 143. A further signal is ignored from here on (:func:`~tierscope.stopping.stops_done`)."""
    from tierscope.stopping import stopped, stops_done

    line, code = stopped(exc)
    stops_done()
    err_console().print(f"{line}: {KEPT}" if collect else line, soft_wrap=True)
    return code


def _silence_stdout() -> None:
    """Point the process's stdout at /dev/null (where it has a file descriptor)."""
    import os

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, ValueError):  # a test's captured stream: nothing left to flush
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)


def _stdout_fails(exc: OSError) -> bool:
    """Whether ``exc`` (a system error naming no file: the dataset's and the report's writers name theirs)
    is most likely the command's printing failing: "no space" where standard output is /dev/full or a file
    on a file system with no space left (or a file size limit)."""
    import errno
    import os
    import stat

    if exc.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return False
    try:
        fd = sys.stdout.fileno()
        mode = os.fstat(fd)
        if stat.S_ISCHR(mode.st_mode):
            return (os.major(mode.st_rdev), os.minor(mode.st_rdev)) == (1, 7)  # /dev/full
        return stat.S_ISREG(mode.st_mode) and (exc.errno == errno.EFBIG or os.fstatvfs(fd).f_bavail == 0)
    except (AttributeError, ValueError, OSError):  # a test's captured stream, a closed descriptor
        return False


def _stdout_lost(exc: OSError) -> int:
    """Say that standard output could not be written, one line on stderr; return the exit code (1). What the
    command stored (a collect's records, a report's file) is kept, so "nothing half-written was kept, run it
    again" would mislead: a collect run again finds nothing new. Stdout goes to /dev/null so the
    interpreter's last flush does not fail once more."""
    _silence_stdout()
    err_console().print(
        f"error: cannot write to standard output: {exc.strerror or exc}: what the command printed is lost "
        "(what it stored is kept); send its output where it can be written",
        soft_wrap=True,
    )
    return EXIT_ERROR


def _stopped_first(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)``, stdout flushed; an error raised once a stop signal came is the stop
    (:func:`tierscope.stopping.stop_requested`): a polars thread whose read the signal interrupted
    panics or fails ("Interrupted system call") and that error could reach here before the interrupt."""
    try:
        result = func(*args, **kwargs)
        sys.stdout.flush()  # output still buffered meets a closed pipe here, not at exit
        return result
    except (KeyboardInterrupt, typer.Exit, SystemExit):
        raise
    except BaseException as exc:  # polars' PanicException is a BaseException
        from tierscope.stopping import stop_requested

        stop = stop_requested()
        if stop is None:
            raise
        raise stop from exc


def guarded(func: F, *, interruptible: bool = False) -> F:
    """``func`` with tierscope's and the system's errors turned into one line and an exit code
    (:func:`print_error`), and Ctrl-C or SIGTERM into :func:`interrupted`'s (a collect's line with
    ``interruptible``). Anything else (a bug) keeps its traceback."""

    @functools.wraps(func)  # typer reads the options from the wrapped signature
    def command(*args: Any, **kwargs: Any) -> Any:
        try:
            return _stopped_first(func, *args, **kwargs)
        except BrokenPipeError:
            # The reader went away (`| head`): quiet, exit 1, as rich does for its own output;
            # stdout goes to /dev/null so the interpreter's last flush does not fail once more.
            _silence_stdout()
            raise typer.Exit(EXIT_ERROR) from None
        except OSError as exc:
            if exc.filename is None and _stdout_fails(exc):
                raise typer.Exit(_stdout_lost(exc)) from None
            raise typer.Exit(print_error(exc)) from None
        except TierscopeError as exc:
            raise typer.Exit(print_error(exc)) from None
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (tierscope.stopping)
            raise typer.Exit(interrupted(exc, interruptible)) from None
        except Exception as exc:  # polars' error for a file it could not open carries no errno
            if _too_many_files(exc):
                raise typer.Exit(print_error(exc)) from None
            raise

    return command  # type: ignore[return-value]


#: ``-h`` as well as ``--help``, on every group and command (click offers ``--help`` alone).
HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}


def _with_help_options(kwargs: dict[str, Any]) -> None:
    settings = dict(kwargs.get("context_settings") or {})
    settings.setdefault("help_option_names", HELP_OPTIONS["help_option_names"])
    kwargs["context_settings"] = settings


class App(typer.Typer):
    """A typer app whose every command runs :func:`guarded`, so no command catches errors itself.

    ``@app.command(..., interruptible=True)`` marks a collect: Ctrl-C there says what was kept. Help and
    usage errors are click's plain text, not rich's panels: importing rich's help layout and
    drawing it took 0.2 s of every ``--help`` (the words are the same; a group lists its
    commands' whole first paragraphs, :class:`tierscope.cli.lazy.Group`). ``-h`` is ``--help`` everywhere."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from tierscope.cli.lazy import Group

        kwargs.setdefault("rich_markup_mode", None)
        kwargs.setdefault("cls", Group)
        _with_help_options(kwargs)
        super().__init__(*args, **kwargs)

    def command(self, *args: Any, interruptible: bool = False, **kwargs: Any) -> Callable[[F], F]:  # type: ignore[override]
        _with_help_options(kwargs)
        register = super().command(*args, **kwargs)

        def decorator(func: F) -> F:
            register(guarded(func, interruptible=interruptible))
            return func

        return decorator


# The options several commands share. The dataset's help differs: a collect creates it, every
# other command needs one that exists (and creates nothing).
NewDatasetOpt = Annotated[
    Path,
    typer.Option(
        "--dataset",
        "-d",
        help="The dataset directory (or gs://bucket/prefix) to add to; it is created if missing.",
        metavar="DIR",
    ),
]
DatasetOpt = Annotated[
    Path,
    typer.Option(
        "--dataset",
        "-d",
        help="The dataset directory (or gs://bucket/prefix) written by `tierscope collect`; it must exist.",
        metavar="DIR",
    ),
]


def finite(param: typer.CallbackParam, value: float | None) -> float | None:
    """A float option's ``value`` if it is a number: ``nan`` and ``inf`` parse as floats but are no
    seconds, ratio, price or loss (a lock's ``nan`` timeout reached filelock as a traceback), so they are
    a usage error (exit 2) naming the option and what to give instead."""
    import math

    if value is None or math.isfinite(value):
        return value
    default = param.default if isinstance(param.default, int | float) else None
    example = f", like its default {default:g}" if default is not None else ""
    raise typer.BadParameter(f"{value} is not a finite number; give one{example} (see --help)")


#: The longest time a seconds option takes (31 years): no wait, settle or time limit is longer, and past it a
#: number reaches what the clock's calls refuse (a lock's wait: threading.TIMEOUT_MAX, 292 years).
MAX_SECONDS = 1_000_000_000


def seconds_option(help_text: str, *names: str) -> Any:
    """A typer option of seconds (``SECONDS``, 0 to :data:`MAX_SECONDS`, finite): a wait, settle time or limit."""
    return typer.Option(*names, min=0, max=MAX_SECONDS, callback=finite, help=help_text, metavar="SECONDS")


LockTimeoutOpt = Annotated[
    float, seconds_option("Seconds to wait for another collect to finish, then exit 75 (0: do not wait).")
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success (for cron).")]
BaselineOpt = Annotated[
    str | None, typer.Option("--baseline", help="Run id to compare against (default: the BASIC run).", metavar="RUN_ID")
]


def _price_date(help_text: str) -> Any:
    """``--price-date YYYY-MM-DD`` with ``help_text``: the commands differ in what the date prices."""
    return typer.Option("--price-date", formats=["%Y-%m-%d"], metavar="YYYY-MM-DD", help=help_text)


PriceDateOpt = Annotated[datetime | None, _price_date("Price table date for runs of unknown date (default: today).")]
#: ``recommend`` prices every candidate on one date, measured runs too (tierscope.analysis.forecast.recommend).
PlanPriceDateOpt = Annotated[
    datetime | None, _price_date("Price table date every candidate is priced on, measured runs too (default: today).")
]


def run_list(text: str | None) -> tuple[str, ...]:
    """``--runs a,b``: the run ids, blanks dropped."""
    return tuple(r.strip() for r in (text or "").split(",") if r.strip())


RunsOpt = Annotated[
    str | None,
    typer.Option(
        "--runs", help="Only these runs: run ids separated by commas, e.g. --runs basic,standard_1.", metavar="RUN_IDS"
    ),
]
TierSelectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--tier", metavar="TIER", help="Only the runs of this scale tier (any case; repeat for several tiers)."
    ),
]
FormatsFileOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--formats",
        metavar="FILE",
        help="A TOML file of formats you declare (see docs/reading-logs.md, 'My log is not read').",
    ),
]
WideOpt = Annotated[bool, typer.Option("--wide", "-w", help="Show every column in full, however wide the terminal is.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="The same as --format json.")]


class FormatChoice(StrEnum):
    """``--format`` of the commands that print a result (written by :func:`tierscope.cli.tables.emit`)."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


FormatOpt = Annotated[
    FormatChoice,
    typer.Option(
        "--format",
        "-f",
        help="A table for the terminal, JSON for a program, CSV for a spreadsheet, Markdown for a PR or a notebook.",
    ),
]


def output_format(fmt: FormatChoice, as_json: bool) -> FormatChoice:
    """``--format``, with ``--json`` meaning ``--format json``; both, disagreeing, is a usage error."""
    if as_json and fmt not in (FormatChoice.table, FormatChoice.json):
        raise typer.BadParameter(f"--json and --format {fmt.value} disagree; give one", param_hint="--format")
    return FormatChoice.json if as_json else fmt


def _known_region(region: str) -> str:
    """``region`` if the legacy price table has rows for it (``us``, ``europe``, ``asia``), the price rows do,
    or it is a Google Cloud region (``us-central1``: today's machines are priced there, legacy tiers in its
    area); a usage error naming the nearest known ones otherwise (a typo priced nothing)."""
    from tierscope.analysis.regions import UnknownRegionError, checked_region

    try:
        return checked_region(region)
    except UnknownRegionError as exc:
        raise typer.BadParameter(str(exc)) from None


RegionOpt = Annotated[
    str,
    typer.Option(
        "--region",
        callback=_known_region,
        help="Price region: a Google Cloud region (us-central1), or us, europe, asia (legacy tiers' areas; us: "
        "us-central1 for today's machines).",
        metavar="REGION",
    ),
]


PricesOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--prices",
        help="A price file (CSV, or TOML [[price]] tables: resource, region, pricing, usd_per_hour, valid_from, "
        "source) over the shipped rows; repeat for more.",
        metavar="FILE",
    ),
]


TargetLossOpt = Annotated[
    float | None,
    typer.Option(
        "--target-loss",
        callback=finite,
        help="Time and price to a training loss at or below this (held for 3 records in a row); see docs/figures.md.",
        metavar="LOSS",
    ),
]
TargetAccuracyOpt = Annotated[
    float | None,
    typer.Option(
        "--target-accuracy",
        callback=finite,
        help="Time and price to an accuracy at or above this (eval accuracy where logged, else training accuracy).",
        metavar="ACCURACY",
    ),
]


def summary_options(
    baseline: str | None,
    price_date: datetime | None,
    region: str,
    steps: int | None = None,
    runs: str | None = None,
    tiers: list[str] | None = None,
    target_loss: float | None = None,
    target_accuracy: float | None = None,
    prices: list[Path] | None = None,
) -> AnalysisOptions:
    """The analysis options of ``--baseline``, ``--price-date``, ``--region``, ``--steps``,
    ``--runs``, ``--tier``, ``--target-loss`` and ``--target-accuracy`` (both at once: a usage error)."""
    import math

    from tierscope.analysis.options import AnalysisOptions

    if target_loss is not None and target_accuracy is not None:
        raise typer.BadParameter(
            "give one of --target-loss and --target-accuracy, not both", param_hint="--target-loss"
        )
    for name, value in (("--target-loss", target_loss), ("--target-accuracy", target_accuracy)):
        if value is not None and not math.isfinite(value):
            raise typer.BadParameter(f"{value} is not a finite number", param_hint=name)
    # accuracy is stored as a fraction (a record outside [0, 1] is a reject): 2 could never be
    # reached and 0 always is; a percentage is the likely slip
    if target_accuracy is not None and not 0 < target_accuracy <= 1:
        hint = f" ({target_accuracy:g} % is {target_accuracy / 100:g})" if 1 < target_accuracy <= 100 else ""
        raise typer.BadParameter(
            f"{target_accuracy:g} is not an accuracy: give a fraction above 0 and at most 1{hint}",
            param_hint="--target-accuracy",
        )
    return AnalysisOptions(
        target_loss=target_loss,
        target_accuracy=target_accuracy,
        baseline=baseline,
        price_date=price_date.date() if price_date else None,
        region=region,
        steps=steps,
        runs=run_list(runs),
        tiers=tuple(tiers or ()),
        prices=tuple(prices or ()),
    )


#: Where ``--dataset`` points when it is not given, and where ``tierscope demo`` writes by default.
DEFAULT_DATASET = "dataset"
DEMO_OUT = "tierscope-demo"


def open_dataset(path: Path) -> Dataset:
    """The dataset at ``path``; raises :class:`~tierscope.dataset.errors.DatasetError` when there is
    none (nothing is created: a typo must not leave an empty dataset behind)."""
    from tierscope.dataset.errors import DatasetError
    from tierscope.dataset.store import Dataset

    dataset = Dataset(path)
    if not dataset.exists():
        raise DatasetError(no_dataset(dataset, path))
    return dataset


def new_dataset(path: Path) -> Dataset:
    """The dataset at ``path`` for a collect, made on its first append.

    Raises :class:`~tierscope.dataset.errors.DatasetError` when ``path`` is the default ``--dataset``
    and names a folder that holds other files but no dataset: run from a checkout of tierscope, the
    default ``dataset`` is the package's own source folder, and a collect must not scatter its
    tables among files it does not own. A folder the user names is theirs to choose.
    """
    from tierscope.dataset.errors import DatasetError
    from tierscope.dataset.store import Dataset

    dataset = Dataset(path)
    root = Path(str(dataset.root))
    if str(path) == DEFAULT_DATASET and root.is_dir() and not dataset.exists():
        # A first collect killed before its first table leaves only the dataset's own names.
        others = sorted(p.name for p in root.iterdir() if p.name not in {".lock", "state", "quarantine"})
        if others:
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise DatasetError(
                f"{root} (the default --dataset) is a folder of other files ({shown}), "
                "not a tierscope dataset; name a new folder with --dataset DIR"
            )
    return dataset


def no_dataset(dataset: Dataset, path: Path) -> str:
    """The one line saying ``dataset`` (opened from ``path``) holds no tierscope dataset, and what to do:
    a path that does not exist is most likely mistyped; a folder without the tables, never collected into."""
    # Without --dataset, "dataset holds no tierscope dataset" reads as a riddle: name the option, and the
    # demo's dataset when the demo ran here (its first users type `tierscope summary` next).
    default = " (the default --dataset; name yours with --dataset DIR)" if str(path) == DEFAULT_DATASET else ""
    demo = Path(DEMO_OUT) / "dataset"
    if default and demo.is_dir() and not Path(str(dataset.root)).exists():
        return (
            f"{dataset.root} (the default --dataset) does not exist; the demo wrote its dataset to {demo}: "
            f"add --dataset {demo}"
        )
    if not str(dataset.root).startswith("gs://") and not Path(str(dataset.root)).exists():
        return f"{dataset.root}{default} does not exist; check the path, or run `tierscope collect files` to make it"
    if not str(dataset.root).startswith("gs://") and Path(str(dataset.root)).is_file():
        from tierscope.dataset.errors import a_file_not_a_dataset

        return a_file_not_a_dataset(dataset.root)  # as a collect into it says
    if not str(dataset.root).startswith("gs://") and (Path(str(dataset.root)) / "state" / "files.json").is_file():
        # collected into (its files' positions are kept) with nothing stored: empty logs, followed until they grow
        return (
            f"{dataset.root}{default} holds no runs yet: the logs collected into it had no lines to store (an empty "
            "log is followed); collect again once they have"
        )
    return f"{dataset.root}{default} holds no tierscope dataset; run `tierscope collect files` first"


LogFormatOpt = Annotated[
    str | None,
    typer.Option(
        "--log-format",
        help="Read with this log format alone, without sniffing (`tierscope formats` lists them, declared ones too).",
        metavar="FORMAT",
    ),
]
#: ``--format`` named the log format here before it named the output's (``--format csv``) elsewhere.
OldLogFormatOpt = Annotated[
    str | None, typer.Option("--format", hidden=True, help="Deprecated: the same as --log-format.")
]


def log_format(new: str | None, old: str | None) -> str | None:
    """``--log-format``, or the deprecated ``--format NAME`` of collect and formats, with a note on stderr."""
    if old is None:
        return new
    from rich.text import Text

    err_console().print(
        Text(
            f"note: --format {old} is now --log-format {old} (--format chooses the output, e.g. csv, "
            "in the commands that print results); the old name goes in the next release"
        ),
        soft_wrap=True,
    )
    return old


def check_out_dir(path: Path, option: str) -> None:
    """A usage error (exit 2) when ``path``, a directory to write into, is a file."""
    if path.exists() and not path.is_dir():
        raise typer.BadParameter(f"{path} is a file; give a directory to write into", param_hint=option)


#: The report's languages, :data:`tierscope.reports.i18n.LANGS`: spelled out so ``--help`` need
#: not import the reports (tests/cli/test_startup.py checks they agree).
LANGS = ("en", "ja")


def check_lang(lang: str | None) -> None:
    """A usage error (exit 2) for a report language tierscope has no words for."""
    if lang is not None and lang not in LANGS:
        raise typer.BadParameter(f"{lang!r} is not a report language; choose {' or '.join(LANGS)}", param_hint="--lang")
