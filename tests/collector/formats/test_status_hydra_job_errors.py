"""Hydra's report that the job's task function raised fails the run, even after a fit that finished."""

from __future__ import annotations

from tests.support.formats_support import endings

# Quoted from PLBFischer/walk-jump-fork ``e`` @ b1fc8d75 (2025-03-05): a Lightning fit that finished, then a second
# command of the same file whose Hydra job raised.
FIT_THEN_ERROR = [
    "`Trainer.fit` stopped: `max_epochs=20` reached.",
    "[rank: 0] Global seed set to 15855310",
    "Error executing job with overrides: []",
    "Error in call to target 'walkjump.cmdline.utils.instantiate_model_for_sample_mode':",
    "TypeError(\"instantiate_model_for_sample_mode() got an unexpected keyword argument 'model_type'\")",
    "full_key: model",
    "",
    "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
]


def test_a_hydra_job_error_is_a_failure() -> None:
    got = endings(*FIT_THEN_ERROR)
    assert ("failed", "Error executing job with overrides: []") in got
    # the fit's own ending is read too: the later failure is what the run's status shows (see the status tests)
    assert got[0][0] == "finished"


def test_the_words_inside_another_message_are_no_failure() -> None:
    # near miss: a message that mentions Hydra's words, not Hydra's report (it opens its line)
    assert endings("WARNING: retried after 'Error executing job with overrides: []' in a previous attempt") == []
