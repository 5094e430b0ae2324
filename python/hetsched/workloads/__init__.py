"""Workload loaders: files and built-in workloads resolved into WorkloadSpec dicts.

The WorkloadSpec is the engine's input, described in docs/engine-interface.md;
the accepted formats are described in docs/workloads.md.
"""

from hetsched.workloads.metrics import RunView, register
from hetsched.workloads.rtapp import format_phase_log, load_rtapp, periodic, phase_log
from hetsched.workloads.spec import SpecBuilder, merge_workloads, task, workload

__all__ = ["load_rtapp", "periodic", "workload", "merge_workloads", "phase_log", "format_phase_log",
           "SpecBuilder", "task", "RunView", "register"]
