"""A cron job's ``tierscope collect files [PATH...] [--manifest TOML] -d DIR [--run-id ID] [--tier TIER]
[--lock-timeout SECONDS] -q``, before the command line.

Such a collect mostly finds nothing new, or a few thousand lines; then importing typer and building the
command line (~0.045 CPU-s) is half of what it costs. :func:`collect_quietly` takes exactly that form of
the command, as ``tierscope collect files`` reads it (:func:`tierscope.cli.collect.collect_files_cmd`),
and answers it from the dataset's state (:func:`tierscope.collector.unchanged.collect_unchanged`) or as a
small append (:func:`tierscope.collector.small_collect.collect_small_append`). Anything else returns None
before anything is written, and the command line runs as it always did: another option or spelling,
a path that is missing or a URL, a tier the tier table does not spell so, a run directory or manifest naming
its machines, the dataset's lock held (this path does not wait for it: the command line does), any error.
"""

from __future__ import annotations

from pathlib import Path

#: The options taken, each with a value but ``--quiet``; each at most once.
_VALUED = {"--dataset": "dataset", "-d": "dataset", "--run-id": "run_id", "--tier": "tier", "--manifest": "manifest",
           "--lock-timeout": "lock_timeout"}  # fmt: skip
_QUIET = ("--quiet", "-q")


def _options(args: list[str]) -> tuple[list[str], dict[str, str]] | None:
    """The paths and the options of ``collect files``' arguments ``args``; None for any other form."""
    paths: list[str] = []
    given: dict[str, str] = {}
    rest = iter(args)
    for arg in rest:
        if arg in _QUIET:
            if "quiet" in given:
                return None
            given["quiet"] = arg
        elif arg in _VALUED:
            value = next(rest, None)
            name = _VALUED[arg]
            if value is None or value.startswith("-") or name in given:
                return None
            given[name] = value
        elif arg.startswith("-") or not arg:
            return None  # another option, ``--``, ``--name=value``, flags run together
        else:
            paths.append(arg)
    if not (paths or "manifest" in given) or "quiet" not in given or "dataset" not in given:
        return None
    return paths, given


def _tier(tier: str | None) -> str | bool | None:
    """``--tier`` as :func:`tierscope.cli.collect.checked_tier` returns it where it says nothing; False where it
    would warn or refuse."""
    from tierscope.contract import is_local_tier

    if tier is None or is_local_tier(tier):
        return tier if tier is None or tier.strip() else False
    from tierscope import tiertable

    upper = tier.upper()
    return upper if upper != "CUSTOM" and upper in tiertable.by_tier(tiertable.load()) else False


def collect_quietly(argv: list[str]) -> bool:
    """Run the collect ``argv`` (``sys.argv``) asks for if it is a cron job's (see the module's docstring);
    True if it was done (nothing to print, exit code 0), False if the command line must run it."""
    if argv[1:3] != ["collect", "files"]:
        return False
    parsed = _options(argv[3:])
    if parsed is None:
        return False
    paths, given = parsed
    run_id = given.get("run_id")
    tier = _tier(given.get("tier"))
    if tier is False or (run_id is not None and not run_id.strip()) or not _seconds(given.get("lock_timeout", "0")):
        return False
    try:
        return _collect(paths, given.get("manifest"), Path(given["dataset"]), run_id, tier)  # type: ignore[arg-type]
    except Exception:  # the command line does it again, and says what is wrong
        return False


def _seconds(text: str) -> bool:
    """Whether ``--lock-timeout``'s ``text`` is one the command line takes as it is (a number of at least 0)."""
    try:
        return 0 <= float(text) < float("inf")
    except ValueError:
        return False


def _collect(paths: list[str], manifest: str | None, dataset: Path, run_id: str | None, tier: str | None) -> bool:
    from dataclasses import replace

    from tierscope.collector.manifest import load_manifest
    from tierscope.collector.runs import runs_from_paths
    from tierscope.collector.unchanged import collect_unchanged
    from tierscope.gcs import is_url

    if any(is_url(p) for p in paths):
        return False
    runs = load_manifest(manifest) if manifest is not None else []
    if paths:
        inputs: list[Path | str] = [Path(p) for p in paths]
        if any(not p.exists() for p in inputs):  # type: ignore[union-attr]
            return False
        found = runs_from_paths(inputs, run_id, tier, None)
        runs += [replace(r, run_id_given=run_id is not None, tier_given=tier is not None) for r in found]
    if any(r.hardware for r in runs):
        return False  # a manifest or run.json naming machines: the command line makes them the topology
    # A lock timeout of 0: a collect that would wait for the lock is the command line's, which waits.
    if collect_unchanged(dataset, runs, 0) is not None:
        return True
    from tierscope.collector.small_collect import collect_small_append

    return collect_small_append(dataset, runs, 0, without_numpy=True) is not None
