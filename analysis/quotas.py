"""Quotas a plan must fit in: how many GPUs, TPU chips, vCPUs or ML units a project may use at once.

A quota is ``NAME=LIMIT``: ``<ACCELERATOR>_GPUS`` (``NVIDIA_TESLA_A100_GPUS``, or without ``TESLA_`` as
Vertex AI's quota names have it: ``NVIDIA_A100_GPUS``, ``NVIDIA_T4_GPUS``), ``<TPU>_CHIPS``
(``TPU_V5_LITEPOD_CHIPS``), ``CPUS`` (vCPUs of today's machine types), ``ML_UNITS`` (``ml-units``: the
ML units an hour of a legacy tier or machine type, as AI Platform counted them). Names are read
case-insensitively, ``-`` as ``_``. A candidate using more of any than its limit is refused, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

from tierscope.analysis import machines
from tierscope.analysis.errors import AnalysisError
from tierscope.errors import UsageError

ML_UNITS, CPUS = "ML_UNITS", "CPUS"


class QuotaError(AnalysisError, UsageError, ValueError):
    """A quota that is not ``NAME=LIMIT`` with a known name and a limit >= 0."""


def _names() -> dict[str, str]:
    """Every accepted quota name -> the canonical one (the accelerator's full name + _GPUS/_CHIPS)."""
    out = {ML_UNITS: ML_UNITS, CPUS: CPUS}
    for spec in machines.catalog().values():
        if spec.kind == "gpu":
            out[f"{spec.name}_GPUS"] = f"{spec.name}_GPUS"
            out[f"{spec.name.replace('_TESLA_', '_')}_GPUS"] = f"{spec.name}_GPUS"
        elif spec.kind == "tpu":
            out[f"{spec.name}_CHIPS"] = f"{spec.name}_CHIPS"
    return out


def parse(items: Iterable[str] | Mapping[str, object], where: str = "--quota") -> dict[str, float]:
    """``NAME=LIMIT`` strings (or a table ``{NAME: LIMIT}``, a manifest's ``quotas``) -> ``{canonical name: limit}``.
    Raises :class:`QuotaError` naming ``where``."""
    pairs: list[tuple[str, object]] = []
    if isinstance(items, Mapping):
        pairs = list(items.items())
    else:
        for item in items:
            name, sep, value = item.partition("=")
            if not sep:
                raise QuotaError(f"{where} {item!r}: give NAME=LIMIT, e.g. NVIDIA_A100_GPUS=8 or ml-units=25")
            pairs.append((name, value))
    known = _names()
    out: dict[str, float] = {}
    for name, value in pairs:
        key = str(name).strip().upper().replace("-", "_")
        if key not in known:
            near = [k for k in known if key.split("_")[-1] in k and any(p in k for p in key.split("_")[:-1] if p)]
            hint = (
                f"nearest known: {', '.join(sorted(near)[:4])}"
                if near
                else "e.g. NVIDIA_A100_GPUS, TPU_V5_LITEPOD_CHIPS"
            )
            raise QuotaError(f"{where} {name!r}: not a quota tierscope knows; {hint}, CPUS, ML_UNITS")
        if isinstance(value, bool):  # TOML's true is no limit, though Python reads it as 1
            raise QuotaError(f"{where} {name}={str(value).lower()}: the limit is not a number; give a count like 8")
        try:
            limit = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise QuotaError(f"{where} {name}={value!r}: the limit is not a number") from None
        if not (limit >= 0 and math.isfinite(limit)):
            raise QuotaError(f"{where} {name}={value!r}: give a limit >= 0")
        out[known[key]] = limit
    return out


def usage(hardware: machines.Hardware | None, ml_units_per_hour: float | None) -> dict[str, float]:
    """What a configuration uses of each quota at once: its GPUs or TPU chips by type (every pool), its vCPUs
    where its machine types say, its ML units an hour."""
    used: dict[str, float] = {}
    if hardware is not None:
        for p in hardware.pools:
            if p.accelerator and p.devices:
                kind = machines.catalog()[p.accelerator].kind
                key = f"{p.accelerator}_{'GPUS' if kind == 'gpu' else 'CHIPS'}"
                used[key] = used.get(key, 0) + p.devices
            vcpus = machines.catalog()[p.machine_type].vcpus
            if vcpus:
                used[CPUS] = used.get(CPUS, 0) + vcpus * p.replicas
    if ml_units_per_hour is not None:
        used[ML_UNITS] = ml_units_per_hour
    return used


def refusal(used: Mapping[str, float], quotas: Mapping[str, float]) -> str | None:
    """Why a configuration using ``used`` does not fit ``quotas`` (every quota it exceeds); None: it fits."""
    over = [f"needs {used[k]:g} {k}, above the quota of {quotas[k]:g}" for k in quotas if used.get(k, 0) > quotas[k]]
    return "; ".join(over) or None


def manifest_extras(path: Path) -> tuple[dict[str, object], list[Path], tuple]:
    """A run manifest's planning keys: ``quotas`` (a table ``{NAME = LIMIT}``) and ``prices`` (a price file
    or a list of them, relative to the manifest, or inline ``[[prices]]`` tables with the price columns):
    ``(quotas, price files, price rows)``. Raises :class:`TierscopeError` for a manifest that cannot be read."""
    import tomllib

    from tierscope.analysis.prices import rows_of

    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise QuotaError(f"cannot read the manifest {path}: {exc}") from None
    quotas = doc.get("quotas", {})
    if not isinstance(quotas, dict):
        raise QuotaError(f"{path}: 'quotas' must be a table like quotas = {{NVIDIA_A100_GPUS = 8}}")
    given = doc.get("prices", [])
    given = [given] if isinstance(given, str | dict) else given
    if not isinstance(given, list) or not all(isinstance(g, str | dict) for g in given):
        raise QuotaError(
            f"{path}: 'prices' must be a price file's path, a list of them, or [[prices]] tables with "
            "resource, region, pricing, usd_per_hour, valid_from, source"
        )
    files = [path.parent / f for f in given if isinstance(f, str)]
    tables = [t for t in given if isinstance(t, dict)]
    return quotas, files, tuple(rows_of(tables, f"{path}: prices")) if tables else ()
