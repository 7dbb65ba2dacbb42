"""The front doors: ``tierscope`` and each room's package re-export their public API by name,
every name in an ``__all__`` is there, and ``import tierscope`` stays as light as it was."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import tierscope

#: The packages that re-export a public API (the collector's front door is its own room's business).
FRONT_DOORS = ("tierscope", "tierscope.dataset", "tierscope.analysis", "tierscope.reports", "tierscope.trainer")


@pytest.mark.parametrize("package", FRONT_DOORS)
def test_every_name_of_all_resolves_to_what_it_names(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, package
    for name in module.__all__:
        value = getattr(module, name)
        # a function or a class, never a submodule that happens to share the name
        assert not isinstance(value, ModuleType), f"{package}.{name} is a module"
        assert getattr(value, "__name__", name) == name, f"{package}.{name} is {value!r}"
        assert name in dir(module)


@pytest.mark.parametrize("package", [p for p in FRONT_DOORS if p != "tierscope.analysis"])
def test_the_lazy_names_are_the_ones_the_type_checker_sees(package: str) -> None:
    # Three listings of one API: the names imported for type checkers, __all__, and where each is
    # imported from at run time. They must agree name for name and module for module.
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    seen: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for inner in node.body:
                if isinstance(inner, ast.ImportFrom) and inner.module and inner.module.startswith("tierscope"):
                    seen |= {alias.name: inner.module for alias in inner.names}
    assert seen == module._ORIGINS
    assert sorted(module.__all__) == sorted(module._ORIGINS)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'tierscope' has no attribute 'analyse'"):
        _ = tierscope.analyse  # type: ignore[attr-defined]
    assert not hasattr(tierscope.trainer, "tensorflow")


def test_the_public_api_is_printed_by_name() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import tierscope; print(tierscope.__all__)"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    listed = ast.literal_eval(done.stdout.strip())
    for name in ("Dataset", "collect_runs", "collect_cloud", "analyze", "write_report", "TierscopeError"):
        assert name in listed


@pytest.mark.parametrize(
    ("statement", "absent"),
    [
        ("import tierscope", ("polars", "pyarrow", "typer", "tierscope.dataset", "importlib.metadata")),
        ("import tierscope.dataset, tierscope.reports", ("polars", "pyarrow", "altair")),
        ("import tierscope.trainer", ("polars", "tensorflow", "tierscope.trainer.train")),
    ],
)
def test_a_front_door_imports_nothing_until_a_name_is_used(statement: str, absent: tuple[str, ...]) -> None:
    code = f"import sys\n{statement}\nprint(' '.join(m for m in {absent!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
