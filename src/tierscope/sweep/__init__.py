"""The sweep: one training job run on several machine configurations, on Vertex AI or locally.

:mod:`.plan` reads the plan file, :mod:`.ledger` keeps what was submitted and collected in the
dataset, :mod:`.launchers` is the one interface every launcher (local clusters, Vertex AI)
implements, and :mod:`.run` drives them.
"""
