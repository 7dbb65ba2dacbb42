"""TF-slim's training loop (``tf.contrib.slim.learning.train``, the Object Detection API's
legacy ``train.py``): ``global step 52335: loss = 6.2518 (0.464 sec/step)``.

``global step`` is the job's shared global step; ``sec/step`` is the duration of this
task's own last step, so it gives the task's *local* steps/s only. Between-graph replicas
(workers with parameter servers) all advance the one global step: the job's global
steps/s is not in the line (case01: four workers, each its own sec/step). ``loss`` may be
``nan``. ``INFO:tensorflow:`` before the phrase is ignored.
"""

from __future__ import annotations

from typing import ClassVar

from tierscope.collector.formats.phrased import PhrasedFormat
from tierscope.collector.formats.vocabulary import LOCAL, Meaning, phrase


class TFSlim(PhrasedFormat):
    name: ClassVar[str] = "slim"
    example: ClassVar[str] = "INFO:tensorflow:global step 822: loss = 1.9421 (18.507 sec/step)"
    meaning: ClassVar[str] = (
        "step is the global step; sec/step is this task's own step time (its local steps/s, not the job's global "
        "rate); where the log has no clock it times the task's lines, one step a line"
    )
    mark: ClassVar[str] = r"global step \d+: loss"
    pattern: ClassVar[str] = rf"{phrase('global step N')}:\s*{phrase('loss = X')}\s*{phrase('(X sec/step)')}"
    scope: ClassVar[Meaning] = LOCAL
    cut: ClassVar[str] = "a TF-slim 'global step N: loss = X (S sec/step)' line cut off or with fields missing"
