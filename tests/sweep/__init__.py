"""Tests of the sweep."""
