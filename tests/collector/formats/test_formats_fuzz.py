"""No parser raises on any input, and every line ends up exactly one of record / event / reject / skipped."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.collector.formats.test_formats_chain import CLOUDML, TRACEBACK
from tests.collector.formats.test_formats_keras import KERAS2, KERAS3
from tests.collector.formats.test_formats_mlperf import MLPERF
from tests.collector.formats.test_formats_tfhooks import ABSL, ESTIMATOR
from tests.support.formats_support import frame
from tierscope.collector.formats import FORMATS, ParseContext, parse_lines
from tierscope.dataset.schema import EVENT_SCHEMA, REJECT_SCHEMA, STEP_SCHEMA, conform

SEEDS = [*CLOUDML, *TRACEBACK, *KERAS2, *KERAS3, *MLPERF, *ESTIMATOR, *ABSL]
PIECES = [
    "[worker-1] ",
    "worker-replica-0: ",
    "0: ",
    "I0412 08:15:02.339120 1 f.py:2] ",
    "INFO:tensorflow:",
    "Train [",
    "loss = ",
    "step = ",
    " (",
    "sec)",
    "Eval, step ",
    "- on train set ",
    "Epoch ",
    "/",
    "[=====>",
    "] - ",
    "━",
    "ETA: ",
    "ms/step",
    " - loss: ",
    ":::MLLOG ",
    '{"key": "throughput"',
    "Traceback (most recent call last):",
    "  ",
    "\r",
    "\x08",
    "\x1b[1m",
    "nan",
    "-1",
    "1e309",
    ",",
    ":",
]


def mutated(seed: str, cut: int, insert: str) -> str:
    cut = cut % (len(seed) + 1)
    return seed[:cut] + insert + seed[cut:]


line = st.one_of(
    st.text(max_size=80),
    st.sampled_from(SEEDS),
    st.builds(mutated, st.sampled_from(SEEDS), st.integers(0, 400), st.sampled_from(PIECES)),
    st.builds(lambda s, n: s[: n % (len(s) + 1)], st.sampled_from(SEEDS), st.integers(0, 400)),
    st.lists(st.sampled_from([*PIECES, "1", "0.5", "100/100 "]), max_size=8).map("".join),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(line, max_size=25), only=st.sampled_from([None, *FORMATS]), final=st.booleans())
def test_every_line_has_exactly_one_outcome(lines: list[str], only: str | None, final: bool) -> None:
    lines = [text.replace("\n", " ") for text in lines]  # a line never holds a newline
    got = parse_lines(frame(lines), only=only, context=ParseContext(year=2024), final=final)
    steps = conform(got.steps, STEP_SCHEMA)
    events = conform(got.events, EVENT_SCHEMA)
    rejects = conform(got.rejects, REJECT_SCHEMA)
    outputs = [f.get_column("source_offset").to_list() for f in (steps, events, rejects)]
    pending = [] if got.pending is None else got.pending.get_column("source_offset").to_list()
    window = [n for n in range(1, len(lines) + 1) if n not in pending]
    produced = set().union(*map(set, outputs))
    assert produced <= set(window)
    # A line's rows are all of one kind, except a glued Keras line, which may hold records and a reject.
    assert not set(outputs[0]) & set(outputs[1]) and not set(outputs[1]) & set(outputs[2])
    assert got.skipped == len(window) - len(produced)
    assert got.skipped >= 0
    assert (steps.get_column("step") >= 0).all()
    assert rejects.get_column("reason").null_count() == 0
