"""Tests of tierscope.collector."""
