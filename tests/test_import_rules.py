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


COLLECTOR = "tierscope.collector"


def module_graph(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` and the modules of ``package`` it imports (functions included).

    An import names a module where one exists (``from tierscope.collector.formats import base``
    is the module ``...formats.base``; ``from ...formats import parse_lines`` is ``...formats``);
    the package a module sits in is not counted as imported (Python runs it first, but it is
    not what the module asked for).
    """
    imports = [i for i in all_imports() if _under(i.module, (package,))]
    modules = {i.module for i in imports}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for i in imports:
        if _under(i.target, (package,)) and i.target in modules and i.target != i.module:
            graph[i.module].add(i.target)
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    # a -> b -> c -> a is one circle; d -> a hangs off it and is not part of it.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_circles(graph) == [["a", "b", "c"]]


def test_no_import_circle_inside_the_collector() -> None:
    assert import_circles(module_graph(COLLECTOR)) == []


#: The collector's ways into the dataset: the sink (records, run facts, the lock), the positions
#: (their state documents), the no-work check (which must not load polars to say "nothing new"), the small
#: append's collect (which stores a 2016-format append without polars: :mod:`tierscope.collector.small_collect`),
#: and the two loops, which hand a sink its ``Dataset``. Every other collector module may use the
#: dataset's column contract (``tierscope.dataset.schema``) and nothing else of it.
INTO_THE_DATASET = (
    f"{COLLECTOR}.sink",
    f"{COLLECTOR}.positions",
    f"{COLLECTOR}.unchanged",
    f"{COLLECTOR}.small_collect",
    f"{COLLECTOR}.collect",
    f"{COLLECTOR}.cloud",
)
READERS = f"{COLLECTOR}.readers"


def test_only_the_sink_writes_the_dataset() -> None:
    # A reader, a format or a source holds no Dataset, lock or state store: it hands batches to the sink.
    found = [
        str(i)
        for i in all_imports()
        if _under(i.module, (COLLECTOR,))
        and not _under(i.module, INTO_THE_DATASET)
        and _under(i.target, ("tierscope.dataset",))
        and not _under(i.target, ("tierscope.dataset.schema",))
    ]
    assert found == []


def test_readers_are_reached_through_the_registry_and_import_no_other_reader() -> None:
    # The cloud loop builds the Cloud Logging reader's query (its source) and names its result type.
    allowed = (f"{COLLECTOR}.registry", f"{COLLECTOR}.cloud")
    outside = [
        str(i)
        for i in all_imports()
        if _under(i.module, (COLLECTOR,))
        and not _under(i.module, (READERS, *allowed))
        and _under(i.target, (READERS,))
        and i.target != READERS
    ]
    assert outside == []
    loops = (f"{COLLECTOR}.collect", f"{COLLECTOR}.cloud", f"{COLLECTOR}.sink", f"{COLLECTOR}.registry")
    crossing = [
        str(i)
        for i in all_imports()
        if _under(i.module, (READERS,))
        and (
            _under(i.target, loops)
            or (_under(i.target, (READERS,)) and i.target.split(".")[:4] != i.module.split(".")[:4])
        )
    ]
    assert crossing == []
