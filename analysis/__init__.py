"""Analysis over a tierscope dataset: throughput, speedup, scaling efficiency, cost."""
