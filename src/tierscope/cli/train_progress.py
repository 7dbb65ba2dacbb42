"""What ``tierscope train local`` shows while a run goes on: the launcher's
:class:`tierscope.trainer.progress.Progress` events drawn with rich on stderr.

A live table, one row per training task (its global step of the run's steps, steps/s, records),
titled with the time elapsed; a task's failure is printed above it, in red, the moment it is seen.
On a terminal the table redraws in place; into a file or a pipe only the failures and the last
table are written (rich draws a live display once, when it stops).
"""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.table import Table

from tierscope.trainer.progress import Progress


def progress_table(event: Progress, steps: int) -> Table:
    """The table of ``event``: task, global step (of ``steps``), steps/s, records; titled with the time elapsed."""
    table = Table(title=f"training, {event.elapsed_s:.0f} s elapsed", title_justify="left", box=None, pad_edge=False)
    table.add_column("task")
    table.add_column("global step", justify="right")
    table.add_column("steps/s", justify="right")
    table.add_column("records", justify="right")
    for task in event.tasks:
        table.add_row(task.task, f"{task.step:,} / {steps:,}", f"{task.steps_per_s:,.1f}", f"{task.records:,}")
    if not event.tasks:
        table.add_row("(starting)", "–", "–", "–")
    return table


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

    def __enter__(self) -> ProgressView:
        if self.enabled:
            self.live = Live(console=self.console, refresh_per_second=4, transient=False)
            self.live.start()
        return self

    def update(self, event: Progress) -> None:
        if self.live is None:
            return
        line = failure_line(event)
        if line is not None:
            self.live.console.print(line, highlight=False, soft_wrap=True)
        self.live.update(progress_table(event, self.steps))

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
            if not self.console.is_terminal:
                self.console.line()  # into a file or pipe the last table ends without one
