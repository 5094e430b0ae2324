"""The metrics of balanced core assignment (Fedorova, Vengerov, Doucette, §2.2 and §4):
core assignment balance (CAB), response-time fairness (RTF, from slowdown), system-wide
IPC and completion-time jitter, computed from ``result.json``.

* per job J (a task): the fraction of its run time on each CPU (``cpu_time_s``), and
  ``CAB_J`` = the standard deviation of those fractions over all the platform's CPUs
  (§4.2); system-wide CAB = percent of jobs with ``CAB_J <= eps`` (Definitions 1-2).
* slowdown S = T(x) / x = (wait + run) / run (eq. 1, §4.3).  The paper measures it per
  sub-job (one timeslice); the result has per-task totals only, so each job's slowdown
  here is the ratio of its sums, sum(wait + run) / sum(run), the run-time-weighted mean
  of its sub-jobs' slowdowns.  RTF = percent of jobs with S <= F (Definitions 3-4).
* system-wide IPC (§4.1): instructions retired per cycle by all jobs, relative to the
  reference core (capacity 1024) running at its f_max (= 1.0): the invariant work done
  (ns at that core and frequency, memory stalls included) times f_ref, over the cycles
  the CPUs were busy (busy time at each OPP times its frequency).  A memory-bound job
  scores above 1 on a slower clock (its stalls cost fewer cycles) and below 1 while its
  cache is cold after a migration (the task perf model, docs/engine-interface.md).
* completion-time jitter (§2.2): per benchmark, the coefficient of variation of its
  runs' completion times (start mark to end mark); the mean over benchmarks.

The ``spec-repeat`` and ``job-stream`` workload metrics report them as ``hcs.*`` keys
(``metrics["spec-repeat"]["hcs.cab_mean"]``, ...; per job under ``hcs_jobs``), so
``hetsched compare`` shows them; :func:`core_assignment_metrics` computes them from any result.

``eps`` and ``F`` are the paper's open constants ("determined experimentally"). Defaults
(assumptions): ``eps = 0.05`` (a two-core job split no worse than 45/55), and
``F = 1.1 x jobs / CPUs`` (the slowdown a fair time-sharing scheduler gives when all jobs
are runnable, plus 10 %).
"""

from __future__ import annotations

import math
from typing import Iterable, Optional

import numpy as np


__all__ = ["core_assignment_metrics", "DEFAULT_EPS", "F_MARGIN"]

DEFAULT_EPS = 0.05
F_MARGIN = 1.1


def _job_fractions(task: dict, ncpu: int) -> list[float]:
    per = task.get("cpu_time_s") or {}
    tot = sum(per.values())
    if tot <= 0:
        return []
    return [per.get(str(c), 0.0) / tot for c in range(ncpu)]


def core_assignment_metrics(doc: dict, tasks: Optional[Iterable[str]] = None, eps: float = DEFAULT_EPS,
                F: Optional[float] = None, groups: Optional[dict[str, str]] = None,
                runs: Optional[dict[str, list[float]]] = None) -> dict:
    """The balanced-core-assignment metrics (Fedorova et al.) of a result document (``Result.doc``).

    ``tasks``: the jobs (task names; default: every fair task that ran). ``groups``: task
    name -> benchmark and ``runs``: task name -> its runs' completion times (s), for the
    completion-time jitter; without them the spec-repeat workload's ``mean_cv`` is used
    if the result has it.
    """
    ncpu = len(doc["cpus"])
    by_name = {t["name"]: t for t in doc["tasks"]}
    names = list(tasks) if tasks is not None else [
        t["name"] for t in doc["tasks"] if t.get("policy") == "other" and t.get("runtime_s", 0) > 0]
    names = [n for n in names if n in by_name and by_name[n].get("runtime_s", 0) > 0]
    if F is None:
        F = F_MARGIN * len(names) / ncpu if names else math.inf
    jobs: dict[str, dict] = {}
    cabs, slows = [], []
    for n in names:
        t = by_name[n]
        fr = _job_fractions(t, ncpu)
        cab = float(np.std(fr)) if fr else 0.0
        run = t["runtime_s"]
        slow = (t["wait_s"] + run) / run
        cabs.append(cab)
        slows.append(slow)
        jobs[n] = {"fractions": [round(x, 6) for x in fr], "cab": cab, "slowdown": slow}
    out: dict = {
        "jobs_n": len(names),
        "eps": eps,
        "F": F,
        "cab_mean": float(np.mean(cabs)) if cabs else None,
        "cab_max": float(np.max(cabs)) if cabs else None,
        "cab_system_pct": 100.0 * sum(c <= eps for c in cabs) / len(cabs) if cabs else None,
        "slowdown_mean": float(np.mean(slows)) if slows else None,
        "slowdown_max": float(np.max(slows)) if slows else None,
        "rtf_pct": 100.0 * sum(s <= F for s in slows) / len(slows) if slows else None,
    }
    # system-wide IPC relative to the reference core at f_max
    fref = max(max(int(k) for k in c["freq_residency_s"]) for c in doc["cpus"] if c["capacity"] == 1024) \
        if any(c["capacity"] == 1024 for c in doc["cpus"]) else None
    cycles = sum(float(k) * s for c in doc["cpus"] for k, s in c["freq_residency_s"].items())  # kHz x s
    work_s = sum(by_name[n].get("work_completed_us", 0.0) for n in names) / 1e6
    out["system_ipc"] = (work_s * fref / cycles) if fref and cycles > 0 else None
    # completion-time jitter
    if groups and runs is not None:
        cvs = []
        for g in sorted(set(groups.values())):
            xs = [x for n in names if groups.get(n) == g for x in runs.get(n, [])]
            if len(xs) >= 2:
                mu = float(np.mean(xs))
                cvs.append(float(np.std(xs)) / mu)
        out["jitter_cv_mean"] = float(np.mean(cvs)) if cvs else None
    else:
        sr = (doc.get("metrics") or {}).get("spec-repeat") or {}
        out["jitter_cv_mean"] = sr.get("mean_cv")
    out["jobs"] = jobs
    return out
