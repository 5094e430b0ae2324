"""Learning EAS (Han & Lee 2020): policy-gradient agents that tune schedutil's
TARGET_LOAD per cluster (Algorithm 1, eq. 12) and sched_migration_cost (Algorithm 2,
eq. 13) while the simulation runs. See docs/learning.md.

>>> from hetsched import Simulation
>>> sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas")
>>> res = sim.run(1.0)
>>> sorted(res.doc["learning"]["target_load"])
['big', 'little', 'mid']
"""

from hetsched.learning.agents import (MigrationCostAgent, MigrationCostConfig, TargetLoadAgent, TargetLoadConfig,
                                      eq12_error, eq13_error, migration_error)
from hetsched.learning.controller import LearningConfig, LearningEAS, split_learning_knobs
from hetsched.learning.network import PolicyNetwork

__all__ = ["PolicyNetwork", "TargetLoadConfig", "MigrationCostConfig", "TargetLoadAgent", "MigrationCostAgent",
           "LearningConfig", "LearningEAS", "split_learning_knobs", "eq12_error", "eq13_error", "migration_error"]
