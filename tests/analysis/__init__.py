"""Tests of tierscope.analysis."""
