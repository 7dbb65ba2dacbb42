"""``tierscope machines``: what tierscope knows of machine types, accelerators and TPU slices
(:mod:`tierscope.analysis.machines`), with the accelerators or chips each has."""

from __future__ import annotations

from typing import Annotated

import typer

from tierscope.cli.common import App, FormatChoice, FormatOpt, JsonOpt, WideOpt, output_format

KIND_WORDS = {
    "machine": "machine type",
    "legacy": "legacy machine type",
    "gpu": "GPU",
    "tpu": "TPU generation",
    "tpu_slice": "TPU slice",
}


def machines_cmd(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Machine types, accelerators or TPU slices to show (default: all).", metavar="[NAME]..."),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option("--kind", help="Only this kind: machine, legacy, gpu, tpu or tpu_slice.", metavar="KIND"),
    ] = None,
    fmt: FormatOpt = FormatChoice.table,
    as_json: JsonOpt = False,
    wide: WideOpt = False,
) -> None:
    """List the machine types, accelerators and TPU slices tierscope knows, with their accelerators and chips.

    A name it does not know is a usage error that lists the nearest known ones. --wide adds the source of each row.
    """
    from tierscope.analysis import machines as m
    from tierscope.cli import numbers as n
    from tierscope.cli.tables import Column, Grid, emit
    from tierscope.errors import UsageError

    fmt = output_format(fmt, as_json)
    if kind is not None and kind not in m.KINDS:
        raise typer.BadParameter(f"{kind!r}; give one of {', '.join(m.KINDS)}", param_hint="--kind")
    if names:
        specs = []
        for name in names:
            found = m.catalog().get(name) or m.catalog().get(name.lower()) or m.catalog().get(name.upper())
            if found is None:
                try:
                    found = m.tpu_slice(name) if name.lower().startswith("v") else m.machine(name)
                except UsageError:
                    raise m._unknown("machine type, accelerator or TPU slice", name, m.KINDS) from None
            specs.append(found)
    else:
        specs = [s for s in m.catalog().values() if kind is None or s.kind == kind]
    grid = Grid(
        [Column("name", "name"), Column("kind", "label"), Column("vCPUs"), Column("memory GB"),
         Column("accelerators", "label"), Column("chips"), Column("topology", "label"),
         Column("on Vertex AI", "label"), Column("source", "text", wide=True)],
        title="machine types, accelerators and TPU slices",
    )  # fmt: skip
    for s in specs:
        accel = f"{s.accelerator_count or s.chips or ''} x {s.accelerator}".strip() if s.accelerator else n.MISSING
        grid.add(
            s.name, KIND_WORDS[s.kind], n.count(s.vcpus), n.fixed(s.memory_gb, 0) if s.memory_gb else n.MISSING,
            accel, n.count(s.chips), s.topology or n.MISSING, s.host or n.MISSING, s.source,
        )  # fmt: skip
    emit(fmt, grid, [m.as_rows(s) for s in specs], wide=wide)


def register(app: App) -> None:
    app.command("machines")(machines_cmd)
