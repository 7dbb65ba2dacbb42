"""Tests of the collector's sources (tierscope.collector.sources)."""
