"""What a run ran on: its worker pools, and what every machine type, accelerator and TPU slice is.

A run's hardware is a tuple of :class:`Pool` (one per role: Vertex AI's worker pools, the legacy
tiers' master/worker/ps): a machine type times replicas, each replica with a number of accelerators
of one type (GPUs, or the TPU chips of a TPU VM), spot or on-demand, in a region.

What each name means is one table shipped as data, ``data/machines.csv`` (columns ``name, kind,
vcpus, memory_gb, accelerator, accelerator_count, chips, topology, host, source``), every row citing
where its facts come from. ``kind``:

- ``machine``: a Vertex AI / Compute Engine machine type; ``accelerator`` and ``accelerator_count``
  are the GPUs it bundles (a2, a3, g2) or, for a TPU VM (ct5lp-...), its TPU generation and chips.
- ``legacy``: an AI Platform machine type of the scale-tier era (``standard``, ``complex_model_s``...).
- ``gpu`` / ``tpu``: an accelerator by its Vertex AI ``AcceleratorType`` name; ``memory_gb`` per device.
- ``tpu_slice``: a TPU slice by its Cloud TPU name (``v5litepod-8``): its chips, topology and the machine
  type that hosts it on Vertex AI (``host``); ``accelerator_count`` what Vertex AI's acceleratorCount is
  for it (TensorCores for v2/v3), empty where the machine type says it all.

A device is a GPU or a TPU chip. Vertex AI counts TPU v2 and v3 in TensorCores, two a chip
(:data:`CORES_PER_CHIP`): ``acceleratorCount: 8`` on ``cloud-tpu`` is a v2-8, four chips.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import re
from dataclasses import asdict, dataclass, replace
from functools import cache
from importlib.resources import files

from tierscope.analysis.errors import AnalysisError
from tierscope.dataset.schema import TRAINING_ROLES
from tierscope.errors import UsageError

#: The machines table (module doc).
MACHINES_CSV = files("tierscope.analysis") / "data" / "machines.csv"
KINDS = ("machine", "legacy", "gpu", "tpu", "tpu_slice")
#: TPU generations Vertex AI counts in TensorCores (acceleratorCount), two a chip.
CORES_PER_CHIP = {"TPU_V2": 2, "TPU_V3": 2}
#: The most replicas a pool may have here: far above any real Vertex AI job, low enough that every count
#: derived from it stays a 64-bit integer in the dataset.
MAX_REPLICAS = 10_000
#: The most GPUs one replica takes (a2-megagpu-16g's 16) and the most TPU accelerators Vertex AI counts on
#: one (TensorCores of the largest v2/v3 pod slice on ``cloud-tpu``): the bounds of ``acceleratorCount``.
MAX_GPUS_PER_REPLICA = 16
MAX_TPU_COUNT = 2048
#: The GPUs an N1 machine type takes, and how many a VM: Compute Engine's "GPU machine types" page
#: (https://cloud.google.com/compute/docs/gpus, read 2026-12-06: "for N1 general-purpose machine types ...
#: you can attach a select set of GPU models", T4, V100, P100, P4, and K80 at its end of support; the A and
#: G series come with theirs). Every other machine type without bundled GPUs (e2, n2, c2) takes none.
N1_GPU_COUNTS = {
    "NVIDIA_TESLA_T4": (1, 2, 4),
    "NVIDIA_TESLA_P4": (1, 2, 4),
    "NVIDIA_TESLA_P100": (1, 2, 4),
    "NVIDIA_TESLA_V100": (1, 2, 4, 8),
    "NVIDIA_TESLA_K80": (1, 2, 4, 8),
}


class UnknownMachineError(AnalysisError, UsageError, ValueError):
    """A machine type, accelerator or TPU slice the machines table does not know; the message lists the
    nearest known names."""


class HardwareError(AnalysisError, UsageError, ValueError):
    """A pool that cannot be: a negative count, an accelerator count without a type, a TPU generation
    given as a GPU."""


@dataclass(frozen=True)
class Spec:
    """One row of the machines table (see the module doc)."""

    name: str
    kind: str
    vcpus: int | None
    memory_gb: float | None
    accelerator: str | None
    accelerator_count: int | None
    chips: int | None
    topology: str | None
    host: str | None
    source: str


def _number(text: str, kind: type) -> int | float | None:
    return kind(text) if text.strip() else None


@cache
def catalog() -> dict[str, Spec]:
    """Every row of the machines table by name (machine types lower case, accelerators upper case)."""
    rows = csv.DictReader(io.StringIO(MACHINES_CSV.read_text(encoding="utf-8")))
    out: dict[str, Spec] = {}
    for row in rows:
        out[row["name"]] = Spec(
            name=row["name"],
            kind=row["kind"],
            vcpus=_number(row["vcpus"], int),  # type: ignore[arg-type]
            memory_gb=_number(row["memory_gb"], float),
            accelerator=row["accelerator"] or None,
            accelerator_count=_number(row["accelerator_count"], int),  # type: ignore[arg-type]
            chips=_number(row["chips"], int),  # type: ignore[arg-type]
            topology=row["topology"] or None,
            host=row["host"] or None,
            source=row["source"],
        )
    return out


def names(*kinds: str) -> list[str]:
    """The known names of these kinds (all kinds: none given), in table order."""
    return [s.name for s in catalog().values() if not kinds or s.kind in kinds]


def _unknown(what: str, name: str, kinds: tuple[str, ...]) -> UnknownMachineError:
    known = names(*kinds)
    by_lower = {k.lower(): k for k in known}
    said = name.strip().lower()
    # a substring of a name first (``A100`` -> NVIDIA_TESLA_A100), then of the accelerator a machine type comes
    # with (``--machine A100`` -> a2-highgpu-1g ..., which bundle NVIDIA_TESLA_A100), then spelling
    # (from the start of a part of the name: ``T4`` is no part of ``ct4p-hightpu-4t``)
    part = re.compile(rf"(?:^|[-_]){re.escape(said)}") if said else None

    def has(text: str) -> bool:
        return part is not None and part.search(text.lower()) is not None

    bundled = {k: catalog()[k].accelerator for k in known if catalog()[k].accelerator}
    with_it = [k for k, a in bundled.items() if has(a)][:4]
    near = (
        [k for k in known if has(k)][:4]
        or with_it
        or [by_lower[k] for k in difflib.get_close_matches(said, list(by_lower), n=4, cutoff=0.5)]
    )
    comes = sorted({bundled[k] for k in near if k in with_it})
    hint = f"nearest known: {', '.join(near)}" if near else f"known: {', '.join(known[:12])}, ..."
    hint += f" (with {', '.join(comes)})" if comes else ""
    # a GPU no machine type bundles is attached to one (an N1 machine with T4s): say how to give it
    attached = [g for g in names("gpu") if has(g) and g not in bundled.values()] if "gpu" not in kinds else []
    if attached and not with_it:
        hint = (
            f"{attached[0]} is a GPU attached to a machine type: give the machine type and --accelerator "
            f"{attached[0]}:COUNT (e.g. --machine n1-standard-8 --accelerator {attached[0]}:1)"
        )
    return UnknownMachineError(f"unknown {what} {name!r}; {hint} (`tierscope machines` lists them all)")


def machine(name: str) -> Spec:
    """The machine type ``name`` (a Vertex AI one or a legacy one). Raises :class:`UnknownMachineError`."""
    spec = catalog().get(name.strip().lower()) or catalog().get(name.strip())
    if spec is None or spec.kind not in ("machine", "legacy"):
        raise _unknown("machine type", name, ("machine", "legacy"))
    return spec


def accelerator(name: str) -> Spec:
    """The accelerator ``name`` (Vertex AI's AcceleratorType, e.g. ``NVIDIA_TESLA_T4``; case and ``-`` are
    forgiven). Raises :class:`UnknownMachineError`."""
    key = name.strip().upper().replace("-", "_")
    spec = catalog().get(key)
    if spec is None or spec.kind not in ("gpu", "tpu"):
        raise _unknown("accelerator", name, ("gpu", "tpu"))
    return spec


def tpu_slice(name: str) -> Spec:
    """The TPU slice ``name`` (``v5litepod-8``; ``v5e-8`` is taken for it). Raises :class:`UnknownMachineError`."""
    key = name.strip().lower().replace("v5e-", "v5litepod-")
    spec = catalog().get(key)
    if spec is None or spec.kind != "tpu_slice":
        raise _unknown("TPU slice", name, ("tpu_slice",))
    return spec


@dataclass(frozen=True)
class Pool:
    """``replicas`` machines of ``machine_type`` in ``role`` (chief/master, worker, ps, evaluator), each with
    ``accelerator_count`` accelerators of type ``accelerator`` (Vertex AI's count: TensorCores for TPU v2/v3,
    chips for a TPU VM), TPU ``tpu_topology`` (``2x4``), ``spot`` or on-demand, in ``region`` (None: the
    analysis' region)."""

    role: str
    machine_type: str
    replicas: int = 1
    accelerator: str | None = None
    accelerator_count: int = 0
    tpu_topology: str | None = None
    spot: bool = False
    region: str | None = None

    @property
    def devices_per_replica(self) -> int:
        """GPUs or TPU chips on one replica."""
        if self.accelerator is None:
            return 0
        return self.accelerator_count // CORES_PER_CHIP.get(self.accelerator, 1)

    @property
    def devices(self) -> int:
        """GPUs or TPU chips of the pool."""
        return self.replicas * self.devices_per_replica

    @property
    def legacy(self) -> bool:
        return catalog()[self.machine_type].kind == "legacy"


def topology_chips(topology: str, role: str = "chief") -> int:
    """The TPU chips of a topology (``2x4``: 8; ``2x2x2``: 8), the product of its sides. Raises
    :class:`HardwareError` for text that is not sides joined by ``x``."""
    sides = topology.strip().lower().split("x")
    if not 2 <= len(sides) <= 3 or not all(s.isdigit() and s.isascii() and int(s) > 0 for s in sides):
        raise HardwareError(f'{role}: TPU topology {topology!r} is not sides joined by x, like "2x4" or "2x2x2"')
    chips = 1
    for side in sides:
        chips *= int(side)
    return chips


def pool(
    role: str,
    machine_type: str,
    replicas: int = 1,
    accelerator_type: str | None = None,
    accelerator_count: int | None = None,
    tpu_topology: str | None = None,
    spot: bool = False,
    region: str | None = None,
) -> Pool:
    """A checked :class:`Pool`: the machine type and accelerator known, a machine's bundled accelerators
    filled in when not given (``a2-highgpu-8g``: 8 x NVIDIA_TESLA_A100; ``ct5lp-hightpu-8t``: 8 TPU v5e
    chips, topology 2x4). Raises :class:`UnknownMachineError` or :class:`HardwareError`."""
    spec = machine(machine_type)
    if replicas < 0 or (accelerator_count is not None and accelerator_count < 0):
        raise HardwareError(f"{role}: replica and accelerator counts must be >= 0, got {replicas}, {accelerator_count}")
    if accelerator_type is None and accelerator_count:
        raise HardwareError(f"{role}: {accelerator_count} accelerators of no type; give their type too")
    kind = accelerator(accelerator_type).name if accelerator_type else None
    if kind is not None and spec.accelerator and kind != spec.accelerator:
        raise HardwareError(f"{role}: {spec.name} comes with {spec.accelerator_count} x {spec.accelerator}, not {kind}")
    if spec.accelerator and (kind is None or accelerator_count is None):
        kind = spec.accelerator
        tpu_topology = tpu_topology or spec.topology
        # a TPU VM's topology says how many chips the slice has, over as many hosts as it takes
        tpu_vm = spec.kind == "machine" and spec.chips is not None and tpu_topology is not None
        accelerator_count = topology_chips(tpu_topology, role) if tpu_vm else spec.accelerator_count
    count = accelerator_count if accelerator_count is not None else (1 if kind else 0)
    return Pool(role, spec.name, replicas, kind, count, tpu_topology, spot, region)


def whole_count(value: object, what: str, low: int, high: int) -> int:
    """``value`` (a JSON number, a digit string as the API writes int64, or an int) as an int in
    ``[low, high]``. Raises :class:`HardwareError` naming ``what`` otherwise (booleans, fractions, NaN,
    infinities and numbers out of bounds included)."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().isdigit() and value.strip().isascii():
        number = int(value.strip())
    if number is None:
        raise HardwareError(f"{what} {value!r} is not a whole number; give one from {low} to {high:,}")
    if not low <= number <= high:
        shown = f"{number:.3g}" if abs(number) >= 10**12 else str(number)
        raise HardwareError(f"{what} {shown} is out of bounds; give one from {low} to {high:,}")
    return number


def check_pool(p: Pool) -> Pool:
    """``p`` when the hardware can be: replicas 1..:data:`MAX_REPLICAS`; a machine type's bundled
    accelerators as many as it carries; GPUs attached only to N1 machine types, of a type and count N1
    takes (:data:`N1_GPU_COUNTS`); TPU accelerators only on ``cloud-tpu`` or a TPU VM. Legacy machine
    types are not checked beyond the counts. Raises :class:`HardwareError` saying what the machine type
    carries or takes."""
    whole_count(p.replicas, f"{p.role}: replicas", 1, MAX_REPLICAS)
    if p.accelerator is None:
        return p
    kind = catalog()[p.accelerator].kind
    top = MAX_GPUS_PER_REPLICA if kind == "gpu" else MAX_TPU_COUNT
    whole_count(p.accelerator_count, f"{p.role}: {p.accelerator} count", 1, top)
    spec = catalog()[p.machine_type]
    if spec.kind == "legacy":
        return p
    if spec.accelerator is not None and spec.chips is not None and p.tpu_topology is not None:
        # a TPU VM slice: its chips are the topology's, on one host or on whole hosts of the machine type
        chips = topology_chips(p.tpu_topology, p.role)
        hosts_fit = chips == spec.chips or (spec.chips > 1 and chips % spec.chips == 0)
        if p.accelerator_count != chips or not hosts_fit:
            raise HardwareError(
                f"{p.role}: {spec.name} carries {spec.chips} x {spec.accelerator} a host; topology {p.tpu_topology} "
                f"is {chips} chips{'' if hosts_fit else ', not whole hosts of it'}"
                f"{'' if p.accelerator_count == chips else f', not {p.accelerator_count}'}; "
                "give --tpu SLICE (`tierscope machines --kind tpu_slice` lists them)"
            )
        return p
    if spec.accelerator is not None:
        if p.accelerator_count != spec.accelerator_count:
            raise HardwareError(
                f"{p.role}: {spec.name} carries {spec.accelerator_count} x {spec.accelerator}, not "
                f"{p.accelerator_count}; give the machine type with {p.accelerator_count} (or leave --accelerator out)"
            )
        return p
    if kind == "tpu":
        if spec.name != "cloud-tpu":
            raise HardwareError(
                f"{p.role}: {spec.name} takes no TPU; a TPU runs on cloud-tpu (TPU_V2, TPU_V3) or a TPU VM: "
                "give --tpu SLICE"
            )
        return p
    if spec.name == "cloud-tpu":
        raise HardwareError(f"{p.role}: cloud-tpu takes TPU_V2 or TPU_V3, not {p.accelerator}")
    if not spec.name.startswith("n1-"):
        raise HardwareError(
            f"{p.role}: {spec.name} takes no GPU (GPUs attach to N1 machine types; a2, a3 and g2 come with theirs)"
        )
    counts = N1_GPU_COUNTS.get(p.accelerator)
    if counts is None:
        raise HardwareError(
            f"{p.role}: {p.accelerator} does not attach to {spec.name}: N1 takes "
            f"{', '.join(N1_GPU_COUNTS)}; for {p.accelerator} give the machine type that comes with it "
            "(`tierscope machines` lists them)"
        )
    if p.accelerator_count not in counts:
        raise HardwareError(
            f"{p.role}: {spec.name} takes {' or '.join(map(str, counts))} x {p.accelerator}, not {p.accelerator_count}"
        )
    return p


def slice_pool(name: str, spot: bool = False, region: str | None = None, role: str = "chief") -> Pool:
    """The pool a TPU slice runs on in Vertex AI (``v5litepod-8``: one ct5lp-hightpu-8t, 8 chips, 2x4)."""
    spec = tpu_slice(name)
    assert spec.host is not None and spec.accelerator is not None  # every slice row names both
    count = spec.accelerator_count or spec.chips or 0
    return pool(role, spec.host, 1, spec.accelerator, count, spec.topology, spot, region)


@dataclass(frozen=True)
class Hardware:
    """A run's worker pools, chief first."""

    pools: tuple[Pool, ...]

    @property
    def training(self) -> tuple[Pool, ...]:
        """The pools that compute steps (chief/master and workers)."""
        return tuple(p for p in self.pools if p.role in TRAINING_ROLES)

    @property
    def device_type(self) -> str | None:
        """The accelerator type of the training pools; ``mixed`` for more than one; None: CPUs only."""
        kinds = {p.accelerator for p in self.training if p.devices}
        return None if not kinds else kinds.pop() if len(kinds) == 1 else "mixed"

    @property
    def devices(self) -> int:
        """GPUs or TPU chips of the training pools (0: CPUs only)."""
        return sum(p.devices for p in self.training)

    @property
    def legacy(self) -> bool:
        """Every pool is of the scale-tier era's machine types (priced in ML units)."""
        return bool(self.pools) and all(p.legacy for p in self.pools)

    @property
    def spot(self) -> bool:
        return any(p.spot for p in self.pools)

    def describe(self) -> str:
        """One line: ``1 x n1-standard-8 + 1 x NVIDIA_TESLA_T4`` per pool, pools joined by ``; ``."""
        parts = []
        for p in self.pools:
            text = f"{p.replicas} x {p.machine_type}"
            if p.accelerator:
                text += f" ({p.accelerator_count} x {p.accelerator}"
                text += f", {p.tpu_topology})" if p.tpu_topology else ")"
            if p.spot:
                text += " spot"
            parts.append(f"{p.role} {text}" if len(self.pools) > 1 else text)
        return "; ".join(parts)

    def to_json(self) -> str:
        """The runs table's ``topology`` JSON: ``{role: {"machine_type", "count", ...}}`` (only what is set)."""
        doc: dict[str, dict[str, object]] = {}
        for p in self.pools:
            entry: dict[str, object] = {"machine_type": p.machine_type, "count": p.replicas}
            if p.accelerator:
                entry |= {"accelerator_type": p.accelerator, "accelerator_count": p.accelerator_count}
            if p.tpu_topology:
                entry["tpu_topology"] = p.tpu_topology
            if p.spot:
                entry["spot"] = True
            if p.region:
                entry["region"] = p.region
            doc[p.role] = entry
        return json.dumps(doc, sort_keys=False)


def from_topology(text: str) -> Hardware:
    """The hardware of a runs-table ``topology`` JSON (:meth:`Hardware.to_json`; the older form with only
    ``machine_type`` and ``count`` too). Raises :class:`UnknownMachineError`, :class:`HardwareError`."""
    pools = []
    for role, entry in json.loads(text).items():
        pools.append(
            pool(
                role,
                entry["machine_type"],
                int(entry.get("count", 1)),
                entry.get("accelerator_type"),
                entry.get("accelerator_count"),
                entry.get("tpu_topology"),
                bool(entry.get("spot", False)),
                entry.get("region"),
            )
        )
    return Hardware(tuple(pools))


def from_tier(rows: list[tuple[str, int, str]]) -> Hardware:
    """A legacy tier's pools from its composition rows ``(role, count, machine_type)`` (:mod:`tierscope.tiertable`)."""
    return Hardware(tuple(pool(role, machine_type, count) for role, count, machine_type in rows if count))


def with_region(hardware: Hardware, region: str | None, spot: bool | None = None) -> Hardware:
    """``hardware`` with every pool's region (where it has none) and spot flag (where given) set."""
    pools = tuple(replace(p, region=p.region or region, spot=p.spot if spot is None else spot) for p in hardware.pools)
    return Hardware(pools)


def as_rows(spec: Spec) -> dict[str, object]:
    """A spec as a plain dict (JSON output)."""
    return asdict(spec)


def parse_accelerator(text: str) -> tuple[str, int]:
    """``--accelerator TYPE[:COUNT]`` (``NVIDIA_TESLA_T4:1``; count 1 when left out) -> ``(type, count)``.
    Raises :class:`UnknownMachineError`, :class:`HardwareError`."""
    name, colon, count = text.partition(":")
    if not colon:
        return accelerator(name).name, 1
    try:
        number = whole_count(count, f"--accelerator {text!r}: the count after ':'", 1, MAX_GPUS_PER_REPLICA)
    except HardwareError as exc:
        raise HardwareError(f"{exc}, e.g. NVIDIA_TESLA_T4:1") from None
    return accelerator(name).name, number


def from_options(
    machine_type: str | None = None,
    accelerator_text: str | None = None,
    tpu: str | None = None,
    spot: bool = False,
    region: str | None = None,
) -> Hardware | None:
    """The one-pool hardware of ``--machine``, ``--accelerator TYPE:COUNT``, ``--tpu SLICE``, ``--spot`` and
    ``--region`` (None: none of the first three given). Raises :class:`UnknownMachineError`, :class:`HardwareError`."""
    if tpu is not None:
        if accelerator_text is not None:
            raise HardwareError("--tpu names its chips already; leave --accelerator out")
        chosen = slice_pool(tpu, spot, region)
        if machine_type is not None and machine(machine_type).name != chosen.machine_type:
            raise HardwareError(f"--tpu {tpu} runs on {chosen.machine_type}, not --machine {machine_type}")
        return Hardware((chosen,))
    if machine_type is None:
        if accelerator_text is not None:
            raise HardwareError("--accelerator needs --machine, the machine type it is attached to (n1-standard-8)")
        return None
    kind, count = parse_accelerator(accelerator_text) if accelerator_text is not None else (None, None)
    chosen = pool("chief", machine_type, 1, kind, count, spot=spot, region=region)
    try:
        return Hardware((check_pool(chosen),))
    except HardwareError as exc:
        given = f"--machine {machine_type}" + (f" --accelerator {accelerator_text}" if accelerator_text else "")
        raise HardwareError(f"{given}: {str(exc).removeprefix('chief: ')}") from None


def machine_spec(p: Pool) -> dict[str, object]:
    """Vertex AI's ``machineSpec`` of a pool: ``machineType``, and ``acceleratorType``/``acceleratorCount`` for
    GPUs (bundled ones too: Vertex AI asks for them) and TPU v2/v3, ``tpuTopology`` for a TPU VM."""
    spec: dict[str, object] = {"machineType": p.machine_type}
    tpu_vm = catalog()[p.machine_type].chips is not None
    if p.accelerator and not tpu_vm:
        spec |= {"acceleratorType": p.accelerator, "acceleratorCount": p.accelerator_count}
    if p.tpu_topology and tpu_vm:
        spec["tpuTopology"] = p.tpu_topology
    return spec
