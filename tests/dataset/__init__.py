"""Tests of tierscope.dataset."""
