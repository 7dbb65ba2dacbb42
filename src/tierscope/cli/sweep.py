"""``tierscope sweep``: a thin wrapper over :mod:`tierscope.sweep` (plan, estimate, ledger, launchers, loop)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tierscope.cli.common import App, err_console, out_console

if TYPE_CHECKING:
    from tierscope.sweep.estimate import Estimate
    from tierscope.sweep.ledger import Ledger
    from tierscope.sweep.plan import Plan
    from tierscope.sweep.run import Line

#: What installs the Vertex AI client (the optional extra).
VERTEX_INSTALL = "pip install 'tierscope[vertex]'"


class OnInterrupt(StrEnum):
    cancel = "cancel"
    leave = "leave"


def sweep_cmd(
    plan_path: Annotated[
        Path | None, typer.Argument(metavar="PLAN", help="The sweep's plan.toml (docs/sweep.md lists its keys).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print each configuration's estimated cost and the total; submit nothing.")
    ] = False,
    local: Annotated[
        bool,
        typer.Option(
            "--local", help="Run each configuration as a local cluster of the reference trainer, one at a time."
        ),
    ] = False,
    budget: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="USD: submit no configuration whose estimate would pass it (default: the plan's).",
            metavar="USD",
        ),
    ] = None,
    allow_unpriced: Annotated[
        bool, typer.Option("--allow-unpriced", help="Submit configurations the price table cannot estimate.")
    ] = False,
    on_interrupt: Annotated[
        OnInterrupt | None,
        typer.Option(help="On Ctrl-C: cancel the jobs, or leave them running (default: ask; leave when not a tty)."),
    ] = None,
    queue_timeout: Annotated[
        float | None,
        typer.Option(
            min=0, help="Cancel a job still queued after this many seconds, recorded as failed.", metavar="SECONDS"
        ),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option("--status", help="Show the sweep SWEEP_ID's configurations and exit.", metavar="SWEEP_ID"),
    ] = None,
    cancel: Annotated[
        str | None,
        typer.Option("--cancel", help="Cancel the sweep SWEEP_ID's jobs; submit nothing more.", metavar="SWEEP_ID"),
    ] = None,
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset",
            "-d",
            help="The dataset of --status/--cancel (default: the plan's, else ./dataset).",
            metavar="DIR",
        ),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report", help="Where the report goes (default: report.html in the sweep's work folder).", metavar="FILE"
        ),
    ] = None,
) -> None:
    """Run the same training on several machine configurations (Vertex AI, or --local) and collect speed and
    price side by side.

    Each configuration of the plan is submitted once (a killed sweep resumes where it stopped and finds its jobs
    by label), followed in a live table, collected into the dataset as a run named after it, and the sweep ends
    with the summary and a report. Exit codes: 0 every configuration ended (failures are recorded, not errors),
    1 error, 2 bad plan or options, 130 interrupted.
    """
    import math

    from tierscope.errors import UsageError

    # typer's min=0 lets nan through (nan >= 0 is false, so is nan < 0); a plan's budget is checked the same way
    if budget is not None and not (math.isfinite(budget) and budget >= 0):
        raise UsageError(f"--budget must be a finite number of USD, 0 or more, got {budget!r}")
    if queue_timeout is not None and math.isnan(queue_timeout):
        raise UsageError("--queue-timeout must be a number of seconds, got nan")
    if status is not None or cancel is not None:
        if dry_run or local or (status and cancel):
            raise UsageError("--status and --cancel act on their own; leave out --dry-run, --local and each other")
        _status_or_cancel(plan_path, status or cancel or "", dataset, cancelling=cancel is not None)
        return
    if plan_path is None:
        raise UsageError("give the plan: tierscope sweep plan.toml (docs/sweep.md), or --status/--cancel SWEEP_ID")
    from tierscope.sweep import estimate as estimating
    from tierscope.sweep.plan import load_plan

    plan = load_plan(plan_path)
    if dataset is not None:
        from dataclasses import replace

        plan = replace(plan, dataset=dataset)
    _outside_the_dataset(plan, report)
    found = estimating.estimates(plan)
    if dry_run:
        print_estimates(plan, found, budget if budget is not None else plan.budget)
        if not local:
            estimating.check(found, budget if budget is not None else plan.budget, allow_unpriced)
        return
    if report is not None:
        from tierscope.reports.outfile import check_replaceable

        check_replaceable(report)  # before any job runs, not after the last
    launcher = _launcher(plan, local)
    _run(plan, launcher, budget, allow_unpriced, local, on_interrupt, queue_timeout, report)


def _outside_the_dataset(plan: Plan, report: Path | None) -> None:
    """Refuse, before any job runs, a work folder or report inside the dataset (found only at the report)."""
    from tierscope.errors import UsageError
    from tierscope.sweep.plan import inside

    for what, path in (("work_dir", plan.work_dir), ("--report", report)):
        if path is not None and inside(path, plan.dataset):
            raise UsageError(
                f"{what} {path} lies inside the dataset {plan.dataset}; give it a folder outside the dataset"
            )


def print_estimates(plan: Plan, found: list[Estimate], budget: float | None) -> None:
    """The dry run: one line per configuration (machines, USD an hour, hours, estimate, the price rows by number),
    the total, the budget, then each price row used, numbered."""
    from rich.table import Table
    from rich.text import Text

    from tierscope.sweep.estimate import total

    rows: list[str] = []
    title = f"sweep {plan.sweep_id}: estimated cost ({plan.region}, each run at most {_hours(plan)})"
    table = Table(box=None, pad_edge=False, title_justify="left", title=title)
    for column in ("configuration", "machines", "USD/hour", "hours", "estimate USD", "price rows"):
        table.add_column(column, justify="right" if column in ("USD/hour", "hours", "estimate USD") else "left")
    for c, e in zip(plan.configurations, found, strict=True):
        used = []
        for count, label in e.rows:
            if label not in rows:
                rows.append(label)
            used.append(f"{count} x [{rows.index(label) + 1}]")
        table.add_row(
            c.name,
            c.hardware.describe(),
            "-" if e.usd_per_hour is None else f"{e.usd_per_hour:.6f}",
            "-" if e.hours is None else f"{e.hours:.4g}",
            "unpriced" if e.usd is None else f"{e.usd:.4f}",
            Text(", ".join(used) + (f" (unpriced: {e.why_unknown})" if e.usd is None else "")),
        )
    console = out_console()
    console.print(table)
    whole = total(found)
    known = sum(e.usd or 0.0 for e in found)
    said = f"total: ${whole:.4f}" if whole is not None else f"total: at least ${known:.4f} (some unpriced)"
    if budget is not None:
        said += f"; budget ${budget:.2f}"
    console.print(Text(said), soft_wrap=True)
    console.print(Text("price rows (resource, region, pricing, USD an hour, valid from, source):"))
    for n, label in enumerate(rows, 1):
        console.print(Text(f"  [{n}] {label}"), soft_wrap=True)
    for e in found:
        if e.stale:
            err_console().print(Text(f"note: {e.configuration}: {e.stale}"), soft_wrap=True)


def _hours(plan: Plan) -> str:
    return "(no time cap)" if plan.minutes is None else f"{plan.minutes:g} minutes"


def _launcher(plan: Plan, local: bool) -> Any:
    if local:
        from tierscope.sweep.local import LocalLauncher

        if not plan.reference_trainer:
            from tierscope.errors import UsageError

            raise UsageError(f"{plan.path}: --local runs the reference trainer only; this plan runs a container image")
        return LocalLauncher(plan.work_dir / "local-jobs")
    return _vertex(plan)


def _vertex(plan: Plan | None, ledger: Ledger | None = None) -> Any:
    """The Vertex AI launcher (``tierscope.sweep.vertex``), made from the plan or from a sweep's ledger."""
    from tierscope.sweep.errors import SweepError

    try:
        from tierscope.sweep import vertex  # type: ignore[attr-defined]
    except ImportError as exc:
        if "aiplatform" in str(exc) or "google.cloud" in str(exc):
            raise SweepError(f"the sweep on Vertex AI needs its client: {VERTEX_INSTALL} (or try --local)") from None
        raise SweepError("this build of tierscope has no Vertex AI launcher; run the sweep with --local") from None
    return vertex.from_plan(plan) if plan is not None else vertex.from_ledger(ledger)


class _Table:
    """The live table on stderr: one line per configuration, redrawn in place on a terminal, silent elsewhere."""

    def __init__(self) -> None:
        self.live: Any = None
        self.last: list[Line] = []
        if sys.stderr.isatty():
            from rich.live import Live

            self.live = Live(console=err_console(), auto_refresh=False, transient=False)
            self.live.start()

    def __call__(self, lines: list[Line]) -> None:
        self.last = lines
        if self.live is not None:
            self.live.update(render_lines(lines), refresh=True)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()


def render_lines(lines: list[Line]) -> Any:
    """The sweep's table: configuration, state, its estimate (the upper bound priced before it ran), what it cost
    as it ran (its price an hour times its job's start to end: for a local run, what the machines it names would
    have cost for as long), and what to say (steps/s, a reason)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False)
    for column in ("configuration", "state", "estimate USD", "ran USD", ""):
        table.add_column(column, justify="right" if column.endswith("USD") else "left")
    for line in lines:
        usd = ["-" if v is None else f"{v:.4f}" for v in (line.estimate_usd, line.ran_usd)]
        table.add_row(line.configuration, line.state, *usd, Text(line.detail))
    return table


def _run(
    plan: Plan, launcher: Any, budget: float | None, allow_unpriced: bool, local: bool,
    on_interrupt: OnInterrupt | None, queue_timeout: float | None, report: Path | None,
) -> None:  # fmt: skip
    from tierscope.sweep.ledger import LedgerStore
    from tierscope.sweep.run import Options, cancel, run_sweep

    options = Options(budget=budget, allow_unpriced=allow_unpriced, spends=not local, queue_timeout_s=queue_timeout)
    table = _Table()
    try:
        ledger = run_sweep(plan, launcher, launcher, options, on_update=table)
    except KeyboardInterrupt:
        table.stop()
        choice = on_interrupt or _ask()
        if choice == OnInterrupt.cancel:
            cancel(LedgerStore(plan.dataset), plan.sweep_id, launcher, "the sweep was interrupted")
            said = "the jobs were asked to cancel; run the same command to record how they ended"
        else:
            said = f"the jobs go on; run the same command to follow and collect them (tierscope sweep --status {plan.sweep_id})"  # noqa: E501
        err_console().print(f"sweep {plan.sweep_id}: {said}", soft_wrap=True, highlight=False)
        raise
    finally:
        table.stop()
    _finish(plan, ledger, report)


def _ask() -> OnInterrupt:
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return OnInterrupt.leave
    from tierscope.stopping import stops_done

    stops_done()  # a second Ctrl-C at the question is an answer of "no"
    try:
        return (
            OnInterrupt.cancel
            if typer.confirm("Cancel the sweep's running jobs?", default=False)
            else OnInterrupt.leave
        )
    except (KeyboardInterrupt, EOFError, typer.Abort):
        return OnInterrupt.leave


def _finish(plan: Plan, ledger: Ledger, report: Path | None) -> None:
    """The sweep's end: each configuration's line, the summary of its runs, the report."""
    from rich.text import Text

    from tierscope.cli.analysis import summary_cmd
    from tierscope.cli.report import report_cmd
    from tierscope.sweep.launchers import swept_run_id
    from tierscope.sweep.ledger import SKIPPED
    from tierscope.sweep.run import line

    console = out_console()
    console.print(f"sweep {plan.sweep_id}:", highlight=False)
    console.print(render_lines([line(name, entry) for name, entry in ledger.entries.items()]))
    ran = {swept_run_id(plan.sweep_id, n): n for n, e in ledger.entries.items() if e.state != SKIPPED and e.collected}
    if not ran:
        return
    said = ", ".join(f"{run} ({name})" for run, name in ran.items())
    console.print(Text(f"runs in {plan.dataset} (run id, configuration): {said}"), soft_wrap=True)
    chosen = ",".join(ran)
    summary_cmd(dataset=plan.dataset, runs=chosen, region=plan.region, prices=list(plan.prices) or None)
    out = report or plan.work_dir / f"{plan.sweep_id}-report.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    report_cmd(dataset=plan.dataset, out=out, runs=chosen, region=plan.region, prices=list(plan.prices) or None)


def _status_or_cancel(plan_path: Path | None, sweep_id: str, dataset: Path | None, cancelling: bool) -> None:
    from tierscope.cli.common import DEFAULT_DATASET
    from tierscope.sweep.ledger import LedgerStore
    from tierscope.sweep.run import cancel, load, refresh

    if dataset is None and plan_path is not None:
        from tierscope.sweep.plan import load_plan

        dataset = load_plan(plan_path).dataset
    store = LedgerStore(dataset or Path(DEFAULT_DATASET))
    ledger = load(store, sweep_id)
    launcher = _ledger_launcher(ledger)
    if cancelling:
        ledger = cancel(store, sweep_id, launcher, "the sweep was cancelled (--cancel)")
        err_console().print(f"sweep {sweep_id}: cancelling its jobs", highlight=False)
    lines = refresh(store, ledger, launcher)
    console = out_console()
    console.print(f"sweep {sweep_id} ({ledger.launcher}; plan {ledger.plan}):", highlight=False)
    console.print(render_lines(lines))


def _ledger_launcher(ledger: Ledger) -> Any:
    if ledger.launcher == "local":
        from tierscope.sweep.local import LocalLauncher

        return LocalLauncher(Path(ledger.where or "."))
    return _vertex(None, ledger)


def register(app: App) -> None:
    app.command("sweep")(sweep_cmd)
