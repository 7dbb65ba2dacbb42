"""One reader per input kind (:mod:`tierscope.collector.reading` says what a reader is); the
registry (:mod:`tierscope.collector.registry`) lists them. No reader imports another.
"""
