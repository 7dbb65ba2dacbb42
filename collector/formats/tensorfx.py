"""TensorFX's training hook (Cloud ML, 2017), two spellings::

    INFO: Global steps: 1000; Duration: 1 sec; Throughput: 3643.1 instances/sec; Loss: 0.492
    I  Run: 0.00 sec; Steps: 19100; Duration: 194 sec; Throughput: 491.5 instances/sec

``Global steps`` is the global step; ``Steps`` is a worker's *local* counter (it restarts
at 0 with the worker), stored as ``local_step`` with a null global step. Throughput is
instances/sec (``examples_per_s``); no steps/s can be had from it without the batch size.
``Duration`` is not read: it is cumulative on the cloud lines and a constant 1 s on the
local ones, neither a step time; nor is ``Run: X sec`` (one ``session.run``). A line cut
before its throughput therefore has no figure and is no record. ``Evaluation metric``
lines carry no rate and are skipped.
"""

from __future__ import annotations

from typing import ClassVar

from tierscope.collector.formats.phrased import PhrasedFormat
from tierscope.collector.formats.vocabulary import NUMBER, phrase


class TensorFX(PhrasedFormat):
    name: ClassVar[str] = "tensorfx"
    example: ClassVar[str] = "INFO: Global steps: 1000; Duration: 1 sec; Throughput: 3643.1 instances/sec; Loss: 0.492"
    meaning: ClassVar[str] = "Global steps is the global step, Steps a worker's local counter; Throughput is examples/s"
    mark: ClassVar[str] = r"(?:Global steps|Run: [\d.]+ sec; Steps): \d+; (?:Duration|Dura|D|$)"
    pattern: ClassVar[str] = (
        rf"(?:Run: {NUMBER} sec; {phrase('Steps: N')}|{phrase('Global steps: N')})"
        rf"(?:; Duration: [^;]*; Throughput: {phrase('X instances/sec')}(?:; {phrase('Loss: X')})?)?"
    )
