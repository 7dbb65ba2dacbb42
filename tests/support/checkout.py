"""Whether the ``tierscope`` the tests import is this checkout's code.

The README's test command installs a copy (``pip install '.[test]'``, what CI runs on a clean clone,
so the tests check what a user installs). A copy does not follow the working tree: after an edit,
the tests would import the code as it was at the last install. So before anything imports
tierscope, ``tests/conftest.py`` compares each package pyproject.toml maps (``tierscope.collector``
-> ``collector/``) with where it is imported from: the checkout's own folder (an editable install,
``pip install -e '.[test]'``) passes; a copy passes when every module and data file in it has this
checkout's bytes and no module of the checkout is missing from it. Standard library only, and it
imports no part of tierscope but the package roots' specs.
"""

from __future__ import annotations

import importlib.util
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path

#: What to run when the copy is stale, from the checkout's root (the README's test command's install).
REINSTALL = "python -m pip install '.[test]'"
EDITABLE = "python -m pip install -e '.[test]'"
#: At most this many differing files are named.
SHOWN = 5


def package_dirs(root: Path) -> dict[str, Path]:
    """Each mapped package's import name and its folder in the checkout, from ``pyproject.toml``."""
    doc = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: root / folder for name, folder in doc["tool"]["setuptools"]["package-dir"].items()}


def imported_dir(package: str) -> Path | None:
    """The folder ``package`` is imported from (None: not importable)."""
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:  # its parent package is not there
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _files(folder: Path, nested: set[str]) -> dict[Path, Path]:
    """Every file under ``folder`` by its relative path, leaving out caches and the folders of
    packages mapped on their own (``tierscope/collector/`` inside ``tierscope/``)."""
    found = {}
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        if "__pycache__" in rel.parts or rel.parts[0] in nested or not path.is_file() or path.suffix == ".pyc":
            continue
        found[rel] = path
    return found


def differences(root: Path, locate: Callable[[str], Path | None] = imported_dir) -> list[str]:
    """How the imported packages differ from the checkout at ``root``, one phrase each (empty: they
    are the checkout's). ``locate`` finds where a package is imported from."""
    dirs = package_dirs(root)
    found: list[str] = []
    for package, folder in dirs.items():
        where = locate(package)
        if where is None:
            found.append(f"{package} is not installed")
            continue
        if where.resolve() == folder.resolve():
            continue  # an editable install: the checkout itself
        nested = {name.rsplit(".", 1)[1] for name in dirs if name.startswith(package + ".")}
        source, copy = _files(folder, nested), _files(where, nested)
        shown = folder.relative_to(root)
        for rel in sorted(copy):
            if rel not in source:
                found.append(f"{shown / rel} is installed but not in the checkout")
            elif copy[rel].read_bytes() != source[rel].read_bytes():
                found.append(f"{shown / rel} differs")
        found += [
            f"{shown / rel} is not installed" for rel in sorted(source) if rel.suffix == ".py" and rel not in copy
        ]
    return found


def stale_message(root: Path, installed: Mapping[str, Path | None], found: list[str]) -> str:
    """The one message saying the tests would not test this checkout, and what to run."""
    where = installed.get("tierscope")
    named = "; ".join(found[:SHOWN]) + (f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else "")
    return (
        f"the tests would import tierscope from {where or 'nowhere'}, not this checkout ({root}): {named}. "
        f"Reinstall it from {root}: {REINSTALL} (or once, editable, so that every edit is tested: {EDITABLE})"
    )
