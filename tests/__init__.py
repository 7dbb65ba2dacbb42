"""The tests, laid out as the package's rooms (tests/collector/ for tierscope.collector, ...)."""
