"""Gymnasium environments over the simulator (needs the ``gym`` extra: ``pip install
'hetsched[gym]'``). Importing this module registers:

* ``hetsched/SchedTuning-v0``: gs101, phone-mix, EAS + schedutil; the agent sets
  ``schedutil.target_load`` and ``sched_migration_cost_ns`` every 100 ms for 5 s;
  reward = -power (W) - missed-activation fraction per step.
* ``hetsched/SchedTuningTargetLoad-v0``: the same with the one knob
  ``schedutil.target_load`` (a 1-D action).
* ``hetsched/SchedTuningGame-v0``: the 60 fps game (``game:fps=60``) for 5 s; the last step
  adds ``-0.1 * frame_drops`` of the whole run.

>>> import gymnasium, hetsched.gym
>>> env = gymnasium.make("hetsched/SchedTuning-v0", episode_steps=3)
>>> obs, info = env.reset(seed=1)
>>> info["observation_names"][:2]
('cpu0.cpu_util_cfs', 'cpu0.freq_scale')

The observation is a float32 ``Box`` vector, each element named in
``env.unwrapped.observation_names``; ``observation="dict"`` gives the same values as a
``spaces.Dict`` keyed by those names.

Every constructor argument of :class:`SchedTuningEnv` can be given to ``gymnasium.make``.
See docs/gym.md.
"""

from __future__ import annotations

import gymnasium

from hetsched.gym.env import (COUNTERS, CPU_FEATURES, DEFAULT_KNOB_RANGES, DEFAULT_KNOBS, OBSERVATION_MODES,
                              SchedTuningEnv)

__all__ = ["SchedTuningEnv", "DEFAULT_KNOBS", "DEFAULT_KNOB_RANGES", "COUNTERS", "CPU_FEATURES", "OBSERVATION_MODES",
           "ENV_IDS"]

_ENTRY = "hetsched.gym.env:SchedTuningEnv"
ENV_IDS: dict[str, dict] = {
    "hetsched/SchedTuning-v0": {},
    "hetsched/SchedTuningTargetLoad-v0": {"knobs": ["schedutil.target_load"]},
    "hetsched/SchedTuningGame-v0": {"workload": "game:fps=60",
                                    "metric_weights": {"game.frame_drops": -0.1}},
}

for _id, _kw in ENV_IDS.items():
    if _id not in gymnasium.registry:
        # the episode ends by itself (terminated) after episode_steps: no TimeLimit wrapper
        gymnasium.register(id=_id, entry_point=_ENTRY, kwargs=dict(_kw))
