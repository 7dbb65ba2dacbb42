"""Tests of tierscope.collector.formats."""
