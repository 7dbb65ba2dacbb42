"""Start-up of the command room: ``--help`` loads no data library and no room, the command
modules keep to themselves, and the constants the help spells out agree with the rooms'."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tierscope.cli
from tierscope.cli import app

CLI = Path(tierscope.cli.__file__).parent
#: What ``tierscope --help`` used to load (0.4 s and more) and must not any more.
HEAVY = ("polars", "numpy", "pyarrow", "scipy", "altair", "google.cloud", "vl_convert", "jinja2", "tensorflow")
ROOMS = ("tierscope.analysis", "tierscope.collector", "tierscope.dataset", "tierscope.reports")
#: The command modules of tierscope/cli; the rest (common, output, durations) is what they share.
COMMAND_MODULES = ("analysis", "collect", "dataset", "demo", "report", "train")


def at_interpreter_start(cwd: Path) -> set[str]:
    """The modules a bare interpreter has before it runs a line: what site's ``.pth`` files import (the
    ``-nspkg.pth`` of google-cloud-aiplatform imports the ``google.cloud`` namespace, empty, in every
    process of the environment). They are the environment's, not tierscope's doing."""
    code = "import json, sys; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, check=True)
    return set(json.loads(done.stdout))


HELP_EVERYWHERE = """
import contextlib, io, json, sys
import typer.main
from tierscope.cli import app

def paths(command, prefix):
    yield prefix
    for name, sub in getattr(command, "commands", {}).items():
        yield from paths(sub, [*prefix, name])

asked = []
for argv in list(paths(typer.main.get_command(app), [])):
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
        app([*argv, "--help"], prog_name="tierscope")
    assert "Usage" in out.getvalue(), (argv, out.getvalue())
    asked.append(argv)
print(json.dumps({"asked": asked, "modules": sorted(sys.modules)}))
"""


def test_help_of_every_command_loads_no_data_library_and_no_room(tmp_path: Path) -> None:
    # A fresh interpreter (this one has loaded everything), started outside the checkout so it
    # imports the installed package.
    done = subprocess.run(
        [sys.executable, "-c", HELP_EVERYWHERE], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # the top level, the 10 commands under it, the groups collect (files, cloud) and train (local): 16
    asked = {" ".join(argv) for argv in report["asked"]}
    assert {"", "collect", "collect files", "collect cloud", "train", "train local", "summary", "report"} <= asked
    assert len(asked) >= 16
    ours = [m for m in report["modules"] if m not in at_interpreter_start(tmp_path)]
    loaded = [m for m in ours if m.startswith(tuple(p + "." for p in HEAVY + ROOMS)) or m in HEAVY + ROOMS]
    assert loaded == []


COLLECT_AGAIN = """
import contextlib, io, json, sys
from tierscope.cli import app

with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):
    app(sys.argv[1:], prog_name="tierscope")
print(json.dumps({"out": out.getvalue(), "modules": sorted(sys.modules)}))
"""
#: What a collect that finds nothing new (a cron job's usual run) must not load: it reads the
#: offsets and writes nothing, so no data library (polars, pyarrow, numpy: 0.5 s of imports),
#: no parser and no store (tierscope.collector.unchanged tells it from the state alone).
NOT_FOR_COLLECT = (
    "polars", "pyarrow", "numpy", "scipy", "altair", "google.cloud", "vl_convert", "jinja2", "tensorflow",
    "tensorboard", "tierscope.collector.formats", "tierscope.collector.collect", "tierscope.dataset.store",
)  # fmt: skip


def _collect_twice(argv: list[str], cwd: Path) -> tuple[str, list[str]]:
    """Run the collect ``argv`` here, then again in a fresh interpreter: its output and the modules
    of :data:`NOT_FOR_COLLECT` (or the analysis and reports rooms) it loaded."""
    assert CliRunner().invoke(app, argv).exit_code == 0
    done = subprocess.run(
        [sys.executable, "-c", COLLECT_AGAIN, *argv], capture_output=True, text=True, cwd=cwd, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    heavy = (*NOT_FOR_COLLECT, "tierscope.analysis", "tierscope.reports")
    ours = [m for m in report["modules"] if m not in at_interpreter_start(cwd)]
    return report["out"], [m for m in ours if m in heavy or m.startswith(tuple(p + "." for p in heavy))]


LINE = "Train [master/0], step 100:loss:2.3, accuracy:0.1 (4.0 sec) 25.0 global_steps/s, 25.0 local_steps/s\n"


def test_a_collect_with_nothing_new_loads_no_parquet_writer_and_no_analysis(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text(LINE)
    out, loaded = _collect_twice(
        ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--tier", "BASIC"], tmp_path
    )
    assert "read 0 lines: stored 0 step records" in " ".join(out.split())
    assert loaded == []


def test_a_quiet_collect_with_nothing_new_loads_no_rich(tmp_path: Path) -> None:
    # cron's form (-q): nothing to print, so none of rich's tables (0.1 s of its start-up); a known
    # --tier loaded rich's Text for a warning it did not print
    log = tmp_path / "a.log"
    log.write_text(LINE)
    argv = ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--tier", "basic", "-q"]
    assert CliRunner().invoke(app, argv).exit_code == 0
    done = subprocess.run([sys.executable, "-c", COLLECT_AGAIN, *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["out"] == "" and [m for m in report["modules"] if m == "rich" or m.startswith("rich.")] == []


def test_a_manifest_collect_with_nothing_new_loads_no_data_library(tmp_path: Path) -> None:
    # The cron form of docs/running-unattended.md: a manifest without a formats key imported the declared-formats module
    # (and with it polars, ~0.5 s of CPU) to read no formats file.
    (tmp_path / "a.log").write_text(LINE)
    manifest = tmp_path / "runs.toml"
    manifest.write_text('[[run]]\nid = "a"\ntier = "BASIC"\nfiles = ["a.log"]\n')
    out, loaded = _collect_twice(
        ["collect", "files", "--manifest", str(manifest), "-d", str(tmp_path / "ds")], tmp_path
    )
    # one file of one line, already read: the second collect reads 0 lines
    assert "read 0 lines: stored 0 step records" in " ".join(out.split())
    assert loaded == []


def test_version_prints_the_package_version() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"tierscope {version('tierscope')}\n"


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth of its code (function bodies included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_no_command_module_imports_another(module: str) -> None:
    others = {f"tierscope.cli.{m}" for m in COMMAND_MODULES if m != module}
    assert _imports(CLI / f"{module}.py") & others == set()


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_no_command_catches_errors_itself(module: str) -> None:
    # tierscope.cli.common.App is the one place an error becomes a message and an exit code.
    tree = ast.parse((CLI / f"{module}.py").read_text(encoding="utf-8"))
    caught = {
        ast.unparse(node.type)
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler) and node.type is not None
    }
    assert not {c for c in caught if "TierscopeError" in c or "OSError" in c or "KeyboardInterrupt" in c}


def test_the_constants_the_help_spells_out_agree_with_the_rooms() -> None:
    from tierscope.cli import collect, formats, report, train
    from tierscope.collector.collect import DEFAULT_SETTLE_S
    from tierscope.collector.explain import DEFAULT_LINES
    from tierscope.collector.limits import DEFAULT_EXPAND_RATIO
    from tierscope.reports.i18n import LANGS
    from tierscope.trainer.data import DATASETS
    from tierscope.trainer.steplog import LOG_FORMATS

    assert collect.DEFAULT_SETTLE_S == DEFAULT_SETTLE_S
    assert collect.DEFAULT_EXPAND_RATIO == DEFAULT_EXPAND_RATIO
    assert report.LANGS == LANGS
    assert formats.DEFAULT_LINES == DEFAULT_LINES
    assert train.DATASETS == DATASETS
    assert train.LOG_FORMATS == LOG_FORMATS


def test_the_command_table_lists_every_command_with_its_own_summary() -> None:
    # tierscope.cli.COMMANDS spells out each command's module and help for the top-level
    # --help; built from the modules themselves, they must say the same.
    import typer.main

    from tierscope.cli import COMMANDS
    from tierscope.cli.common import App
    from tierscope.cli.lazy import summary

    built = {}
    for module in sorted({module for module, _ in COMMANDS.values()}):
        sub = App()
        importlib.import_module(f"tierscope.cli.{module}").register(sub)
        built.update({name: (module, summary(c.help)) for name, c in typer.main.get_group(sub).commands.items()})
    assert built == COMMANDS
    assert set(built) == set(COMMANDS)


def test_top_level_help_lists_every_command_whole_without_importing_one(tmp_path: Path) -> None:
    script = (
        "import contextlib, io, json, sys\n"
        "from tierscope.cli import app\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
        "    app(['--help'], prog_name='tierscope')\n"
        "print(json.dumps({'out': out.getvalue(), 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    said = " ".join(report["out"].split())
    from tierscope.cli import COMMANDS

    for name, (_, text) in COMMANDS.items():
        assert f"{name} {text}" in said  # the whole first paragraph, wrapped, not cut at the width
    modules = {module for module, _ in COMMANDS.values()}
    assert [m for m in report["modules"] if m.startswith("tierscope.cli.") and m.split(".")[2] in modules] == []
    # rich renders nothing of --help any more (its import and layout were 0.2 s of 0.3)
    assert [m for m in report["modules"] if m == "rich" or m.startswith("rich.")] == []


def test_a_collect_of_a_text_log_loads_no_event_file_reader(tmp_path: Path) -> None:
    # Event files are read through tensorboard's protos: a text log needs none of it.
    log = tmp_path / "a.log"
    log.write_text(
        "Train [master/0], step 100:loss:2.3, accuracy:0.1 (4.0 sec) 25.0 global_steps/s, 25.0 local_steps/s\n"
    )
    argv = ["collect", "files", str(log), "-d", str(tmp_path / "ds"), "--tier", "BASIC"]
    done = subprocess.run(
        [sys.executable, "-c", COLLECT_AGAIN, *argv], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert "read 1 line: stored 1 step record " in " ".join(report["out"].split())
    unused = ("tensorboard", "tierscope.collector.sources.tfevents", "tierscope.analysis", "tierscope.reports")
    assert [m for m in report["modules"] if m in unused or m.startswith(tuple(p + "." for p in unused))] == []
