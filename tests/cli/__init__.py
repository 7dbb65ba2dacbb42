"""Tests of the commands (tierscope.cli)."""
