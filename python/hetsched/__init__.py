"""hetsched: a laboratory for CPU scheduling on heterogeneous multicore SoCs.

A deterministic simulator of real SoCs (clusters, OPPs, idle states, Energy Model from
published device trees) running a Linux-like scheduler (CFS, RT, PELT, schedutil) against
workloads, reporting energy and performance. See README.md and docs/.
"""

from hetsched.errors import (ClusterError, EngineError, HetschedError, InputError, OutputError, PolicyError,
                             UnknownNameError)

__version__ = "0.1.0"

__all__ = [
    "Simulation",
    "Policy",
    "EnergyModel",
    "Result",
    "run",
    "knob_table",
    "list_platforms",
    "load_platform",
    "HetschedError",
    "InputError",
    "UnknownNameError",
    "OutputError",
    "ClusterError",
    "EngineError",
    "PolicyError",
    "core_assignment_metrics",
    "__version__",
]


def __getattr__(name: str):
    # Everything but the errors is imported on first use: the native engine, so that
    # platform and workload loading work (and are testable) without it, and the platform
    # loader and policy base, so that `hetsched --help` loads only the command line.
    if name in ("list_platforms", "load_platform"):
        from hetsched import platforms

        return getattr(platforms, name)
    if name == "Policy":
        from hetsched.policy import Policy

        return Policy
    if name == "EnergyModel":
        from hetsched.energy_model import EnergyModel

        return EnergyModel
    if name == "core_assignment_metrics":  # balanced core assignment's CAB / RTF / IPC / jitter
        from hetsched.core_assignment import core_assignment_metrics

        return core_assignment_metrics
    if name == "metrics_004":  # the name it had before; kept for one release
        import warnings

        warnings.warn("hetsched.metrics_004 is now hetsched.core_assignment_metrics", DeprecationWarning,
                      stacklevel=2)
        from hetsched.core_assignment import core_assignment_metrics

        return core_assignment_metrics
    if name in ("Simulation", "Result", "run", "knob_table"):
        from hetsched import sim

        return getattr(sim, name)
    raise AttributeError(name)
