"""The plan several sweep tests share: BASIC, STANDARD_1 and a custom three-worker configuration with a T4 each."""

from __future__ import annotations


def three_configurations(head: str, steps: int = 60, minutes: int = 10, spot: bool = False) -> str:
    """A plan.toml: ``head`` (top-level keys), ``[run]`` and the three configurations."""
    return f"""\
{head}
[run]
steps = {steps}
minutes = {minutes}

[[configuration]]
tier = "BASIC"

[[configuration]]
tier = "STANDARD_1"

[[configuration]]
name = "three-workers"
workers = 3
machine_type = "n1-standard-8"
accelerator = "NVIDIA_TESLA_T4:1"
{"spot = true" if spot else ""}
"""
