"""Ray Tune's result printed as YAML (RLlib's ``pretty_print(result)``, Tune's ``Result for <trial>:``): one key a
line, its position last (``training_iteration: 6``), its iteration's seconds among the keys (``time_this_iter_s``).
The block from the lines of keys before the position's line to it is one report, read from its first occurrence;
an excerpt that starts inside a dump reads that dump's tail as its first report."""

from __future__ import annotations

import pytest

from tests.support.formats_support import read
from tierscope.collector.formats.statements import statements

# Quoted from ray-project/ray issue 3908 (MariusDanner, 2019-01-31): RLlib PPO results printed with
# ``print(pretty_print(result))``, from the tail of iteration 5's dump through iteration 6's (the nested ``info:`` keys
# of iteration 6 left out here: lines of keys like the others).
_PPO = [
    "time_this_iter_s: 2.784257650375366",
    "time_total_s: 33.571396589279175",
    "timestamp: 1548971782",
    "timesteps_since_restore: 20000",
    "timesteps_this_iter: 4000",
    "timesteps_total: 20000",
    "training_iteration: 5",
    "",
    "custom_metrics: {}",
    "date: 2019-01-31_21-56-24",
    "done: false",
    "episode_len_mean: 46.31",
    "episode_reward_mean: -2928.05",
    "iterations_since_restore: 6",
    "node_ip: 192.168.166.180",
    "pid: 123",
    "policy_reward_mean: {}",
    "time_since_restore: 36.456223011016846",
    "time_this_iter_s: 2.884826421737671",
    "time_total_s: 36.456223011016846",
    "timestamp: 1548971784",
    "timesteps_since_restore: 24000",
    "timesteps_this_iter: 4000",
    "timesteps_total: 24000",
    "training_iteration: 6",
]
# Quoted from ray-project/ray PR 3498 (richardliaw, 2018-12-11): Tune's DDPG trial result, indented under its header,
# then Tune's status block.
_DDPG = [
    "  policy_reward_mean: {}",
    "  time_since_restore: 1053.5495109558105",
    "  time_this_iter_s: 53.29929995536804",
    "  time_total_s: 1053.5495109558105",
    "  timestamp: 1544525069",
    "  timesteps_this_iter: 1000",
    "  timesteps_total: 20000",
    "  training_iteration: 20",
    "  ",
    "== Status ==",
    "Using FIFO scheduling algorithm.",
    " - DDPG_Pendulum-v0_0:\tRUNNING [pid=86], 1053 s, 20 iter, 20000 ts, -483 rew",
]


def test_each_result_dump_is_one_report_at_its_training_iteration() -> None:
    got = read(*_PPO)
    assert got.get_column("step").to_list() == [5, 6]
    # 1 / time_this_iter_s: 1 / 2.784257650375366 = 0.359162, 1 / 2.884826421737671 = 0.346641
    assert got.get_column("global_steps_per_s").to_list() == pytest.approx(
        [1 / 2.784257650375366, 1 / 2.884826421737671]
    )
    assert got.get_column("elapsed_s").to_list() == pytest.approx([33.571396589279175, 36.456223011016846])


def test_a_dump_under_tune_s_trial_header_ends_at_its_blank_line() -> None:
    got = read(*_DDPG)
    assert got.get_column("step").to_list() == [20]
    assert got.get_column("global_steps_per_s").to_list() == pytest.approx([1 / 53.29929995536804])


def test_a_result_line_as_json_is_one_report() -> None:
    # a trial's result.json: one result a line
    got = statements('{"training_iteration": 6, "time_this_iter_s": 2.88, "time_total_s": 36.4}')
    assert got["step"][0] == "6"
    assert got["per_s"][0] == pytest.approx(1 / 2.88)


@pytest.mark.parametrize(
    "lines",
    [
        # Tune's stopping criteria in a script: an iteration and no time
        ['"stop": {"training_iteration": 3, "episode_reward_max": -0.02},'],
        # a settings dump that ends with a step, its only time keyed ``time``
        ["lr: 0.1", "batch_size: 32", "time: 3", "step: 5"],
        # ... or under a settings header
        ["Hyperparameters:", "lr: 0.1", "time_this_iter_s: 3", "training_iteration: 5"],
        # the position's line alone, with no keys before it
        ["training_iteration: 6"],
    ],
)
def test_dumps_that_are_no_report(lines: list[str]) -> None:
    assert read(*lines).height == 0
