"""Tests of tierscope.reports."""
