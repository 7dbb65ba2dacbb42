"""Tests of the collector's readers (tierscope.collector.readers)."""
