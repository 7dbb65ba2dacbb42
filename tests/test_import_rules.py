"""The rooms depend one way (trainer -> contract <- collector -> dataset <- analysis <- reports,
the CLI on top): every ``import`` of every module, read from its syntax tree, functions included.

A rule lists the modules it applies to (by import-name prefix) and the names they may not
import.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from tests.support import ROOT

#: Top-level names the rooms had before they moved under ``tierscope`` (commit 40c568f).
OLD_NAMES = ("collector", "analysis", "reports", "trainer", "dataset")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. "tierscope.trainer.steplog" or "tests.test_x"
    path: Path
    line: int
    target: str  # what it imports: "polars", "tierscope.collector.collect", "tierscope.tiertable"

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}: {self.module} imports {self.target}"


@dataclass(frozen=True)
class Rule:
    name: str
    applies_to: tuple[str, ...]  # module prefixes
    banned: tuple[str, ...]  # import prefixes
    exempt: tuple[str, ...] = ()  # module prefixes the rule leaves out

    def violations(self, imports: list[Import]) -> list[str]:
        return [
            str(i)
            for i in imports
            if _under(i.module, self.applies_to) and not _under(i.module, self.exempt) and _under(i.target, self.banned)
        ]


def _under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def package_dirs() -> dict[str, Path]:
    """The import name of each mapped folder, from pyproject.toml (``tierscope.collector`` -> ``collector/``)."""
    doc = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: ROOT / folder for name, folder in doc["tool"]["setuptools"]["package-dir"].items()}


def _modules() -> Iterator[tuple[str, Path]]:
    """Every module of every room (by its installed name), then the tests' and benchmarks'."""
    dirs = package_dirs()
    for package, folder in dirs.items():
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if any(part.startswith(".") for part in parts):
                continue
            names = parts[:-1] if parts[-1] == "__init__" else parts
            yield ".".join((package, *names)), path
    for folder in ("tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield ".".join(path.relative_to(ROOT).with_suffix("").parts), path


def _targets(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:  # relative: resolved against the importing module's package
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
        yield base
        # "from tierscope import tiertable" imports the module tierscope.tiertable.
        yield from (f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        yield node.args[0].value


def _string_imports(node: ast.AST) -> Iterator[str]:
    """The imports of code held in a string (a subprocess driver, ``python -c``): they count too."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and "import" in node.value:
        try:
            code = ast.parse(node.value)
        except SyntaxError:
            return  # prose, not code
        for inner in ast.walk(code):
            yield from _targets(inner, "", False)


@cache
def all_imports() -> tuple[Import, ...]:
    found: list[Import] = []
    for module, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for target in (*_targets(node, module, is_package), *_string_imports(node)):
                found.append(Import(module, path, getattr(node, "lineno", 0), target))
    return tuple(found)


ROOMS = tuple(package_dirs())
#: The stdlib-only modules beside the rooms that every room may import, the trainer included.
SHARED = (
    "tierscope.contract",
    "tierscope.atomic",
    "tierscope.tiertable",
    "tierscope.errors",
    "tierscope.exits",
    "tierscope.reexport",
)

RULES = [
    Rule("analysis reads the dataset, never the collector", ("tierscope.analysis",), ("tierscope.collector",)),
    Rule("reports draw the analysis, never the collector", ("tierscope.reports",), ("tierscope.collector",)),
    Rule("reports draw the Analysis object, never the dataset", ("tierscope.reports",), ("tierscope.dataset",)),
    Rule("the dataset room imports no ingest code", ("tierscope.dataset",), ("tierscope.collector",)),
    Rule(
        "a TensorFlow task loads no polars, pyarrow or other room",
        ("tierscope.trainer",),
        ("polars", "pyarrow", "tierscope.collector", "tierscope.dataset", "tierscope.analysis", "tierscope.reports"),
    ),
    Rule("only the command room imports typer or rich", ROOMS, ("typer", "rich"), exempt=("tierscope.cli",)),
    Rule("nothing imports the rooms' old top-level names", (*ROOMS, "tests", "benchmarks"), OLD_NAMES),
]


def test_the_walk_sees_every_room_and_imports_inside_functions() -> None:
    modules = {i.module for i in all_imports()}
    assert {
        "tierscope.trainer.steplog",
        "tierscope.dataset.doctor",
        "tierscope.cli",
        "tierscope.reports.i18n",
    } <= modules
    # launch.py imports task_command's module inside a function; the driver string of the kill test counts too.
    assert any(i.module == "tierscope.trainer.launch" and i.target == "tierscope.trainer.task" for i in all_imports())
    assert any(i.module == "tests.dataset.test_kill_safety" and i.target == "tierscope.atomic" for i in all_imports())


def _rule_id(rule: Rule) -> str:
    return rule.name


def _violations(rule: Rule) -> list[str]:
    return rule.violations(list(all_imports()))


@pytest.mark.parametrize("rule", RULES, ids=_rule_id)
def test_import_rule(rule: Rule) -> None:
    assert _violations(rule) == []


def test_the_trainer_imports_only_the_contract_from_other_rooms() -> None:
    outside = [
        str(i)
        for i in all_imports()
        if _under(i.module, ("tierscope.trainer",)) and _under(i.target, ("tierscope",)) and i.target != "tierscope"
        if not _under(i.target, ("tierscope.trainer", *SHARED))
    ]
    assert outside == []


def test_the_shared_modules_import_only_the_standard_library() -> None:
    # Every TensorFlow task imports them: anything more would be paid for in each task.
    heavy = [
        str(i)
        for i in all_imports()
        if i.module in SHARED
        and i.target.split(".")[0] not in sys.stdlib_module_names
        and not _under(i.target, ("tierscope.errors", "__future__"))
    ]
    assert heavy == []
