"""Workload loaders: files and built-in workloads resolved into WorkloadSpec dicts.

The WorkloadSpec is the engine's input, described in docs/engine-interface.md;
the accepted formats are described in docs/workloads.md.
"""

from hetsched.workloads.rtapp import load_rtapp, merge_workloads, periodic, workload

__all__ = ["load_rtapp", "periodic", "workload", "merge_workloads"]
