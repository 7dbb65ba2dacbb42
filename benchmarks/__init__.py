"""Benchmarks: ``python -m benchmarks.run`` (see the README section "Benchmarks")."""
