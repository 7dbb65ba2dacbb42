"""Tests of tierscope.trainer."""
