"""What ``tierscope train local`` shows while a run goes on: the launcher's
:class:`tierscope.trainer.progress.Progress` events drawn with rich on stderr.

On a terminal, a live table redrawn in place: one row per training task (its global step of the run's
steps, steps/s, records), titled with the time elapsed, and while a cluster starts each process with its
state (starting, running, logging); a task's failure is printed above it, in red, the moment it is seen.
Into a file or a pipe (CI, ``nohup``, ``| tee``), plain lines instead: one when a process changes state
and one every :data:`PLAIN_EVERY_S` seconds, each saying every task's step and every process's state,
and the failures as they come (a live display there wrote only its last frame, when it stopped).
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from tierscope.trainer.progress import Progress

#: Seconds between two plain progress lines while no process changes state.
PLAIN_EVERY_S = 10.0


def progress_table(event: Progress, steps: int) -> Table:
    """The table of ``event``: task, global step (of ``steps``), steps/s, records; titled with the time elapsed."""
    table = Table(title=f"training, {event.elapsed_s:.0f} s elapsed", title_justify="left", box=None, pad_edge=False)
    table.add_column("task")
    table.add_column("global step", justify="right")
    table.add_column("steps/s", justify="right")
    table.add_column("records", justify="right")
    for task in event.tasks:
        table.add_row(task.task, f"{task.step:,} / {steps:,}", f"{task.steps_per_s:,.1f}", f"{task.records:,}")
    logging = {task.task for task in event.tasks}
    for name, state in event.processes:  # the processes no step row stands for: starting, a ps, a coordinator's
        if name not in logging and state != "logging":
            table.add_row(name, f"({state})", "–", "–")
    if not event.tasks and not event.processes:
        table.add_row("(starting)", "–", "–", "–")
    return table


def progress_line(event: Progress, steps: int) -> str:
    """``12 s  chief-0 300 / 1,000 at 20.1 steps/s (3 records); processes: chief-0 logging, ps-0 running``:
    one plain line of ``event`` for a file or a pipe."""
    from tierscope.cli.numbers import plural

    parts = [f"{t.task} {t.step:,} / {steps:,} at {t.steps_per_s:,.1f} steps/s ({plural(t.records, 'record')})"
             for t in event.tasks]  # fmt: skip
    said = "; ".join(parts) if parts else "no step logged yet"
    if event.processes:
        said += "; processes: " + ", ".join(f"{name} {state}" for name, state in event.processes)
    return f"{event.elapsed_s:.0f} s  {said}"


def failure_line(event: Progress) -> str | None:
    """``12 s  worker-1 failed: <its first line>`` (rich markup escaped), or None if ``event`` reports none."""
    if event.failure is None:
        return None
    from rich.markup import escape

    task, line = event.failure
    return f"[red]{event.elapsed_s:.0f} s  {escape(task)} failed:[/] {escape(line)}"


class ProgressView:
    """A context manager around a run: :meth:`update` is the launcher's ``on_progress`` callback.
    ``enabled=False`` (``--quiet``) draws nothing."""

    def __init__(self, console: Console, steps: int, enabled: bool = True) -> None:
        self.console = console
        self.steps = steps
        self.enabled = enabled
        self.live: Live | None = None
        self._said: tuple[float, tuple[tuple[str, str], ...]] | None = None  # the last plain line's time, states
        self._last: Progress | None = None

    def __enter__(self) -> ProgressView:
        if self.enabled and self.console.is_terminal:
            self.live = Live(console=self.console, refresh_per_second=4, transient=False)
            self.live.start()
        return self

    def update(self, event: Progress) -> None:
        if not self.enabled:
            return
        line = failure_line(event)
        if self.live is not None:
            if line is not None:
                self.live.console.print(line, highlight=False, soft_wrap=True)
            self.live.update(progress_table(event, self.steps))
            return
        if line is not None:
            self.console.print(line, highlight=False, soft_wrap=True)
        self._last = event
        if self._said is None or self._said[1] != event.processes or event.elapsed_s - self._said[0] >= PLAIN_EVERY_S:
            self._plain(event)

    def _plain(self, event: Progress) -> None:
        self.console.print(Text(progress_line(event, self.steps)), soft_wrap=True)
        self._said = (event.elapsed_s, event.processes)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
        elif self._last is not None and self._said is not None and self._said[0] != self._last.elapsed_s:
            self._plain(self._last)  # where the run ended, unless the last line said it
