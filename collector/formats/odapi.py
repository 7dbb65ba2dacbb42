"""The TF2 Object Detection API's custom training loop (``model_lib_v2.train_loop``):
``Step 20900 per-step time 11.124s loss=1.705``.

``Step`` is the global step; ``per-step time`` is the duration of the last step only (not
an average over the logging interval). The loop runs every replica in lock-step
(``MirroredStrategy`` / ``TPUStrategy``), so the step time is the job's: it gives both the
global and the local steps/s. The platform's copy of the line behind a glog header is the
envelope's to strip (see the envelopes module).

A line cut right after ``Step N`` (a stored copy cut short: case03's ``Step 700``) is still
that step at the line's own time (its glog header's): a record without a rate. Where a
record prints no per-step time the global steps/s is derived from the times of the task's
consecutive records (steps gained / seconds between them, ``rate_derived``); a printed
per-step time is kept as it is.
"""

from __future__ import annotations

from typing import ClassVar

from tierscope.collector.formats.phrased import PhrasedFormat
from tierscope.collector.formats.vocabulary import SHARED, Meaning, phrase


class ODAPIv2(PhrasedFormat):
    name: ClassVar[str] = "od-api-tf2"
    example: ClassVar[str] = "Step 20900 per-step time 11.124s loss=1.705"
    meaning: ClassVar[str] = (
        "Step is the global step; per-step time is the last step's duration, the job's "
        "(replicas run in lock-step): 1 / it is the global steps/s; a line cut after 'Step N' is that step at "
        "its own (glog) time, and a rate not printed is derived from the times"
    )
    mark: ClassVar[str] = r"\bStep \d+ per-step time"
    pattern: ClassVar[str] = rf"{phrase('Step N')}\s+{phrase('per-step time Xs')}(?:\s+{phrase('loss = X')})?"
    scope: ClassVar[Meaning] = SHARED
    cut: ClassVar[str] = "a 'Step N per-step time Xs loss=Y' line cut off or with fields missing"
    lead: ClassVar[str | None] = phrase("Step N")
    derive: ClassVar[bool] = True
