"""The minimum-energy lower bound's reference solver: the least energy any schedule could
have spent on the platform delivering the work a run delivered, window by window.

The engine solves this program itself, window by window as a run goes (lower_bound.rs, by
the dual simplex method on each window's small program); this module solves the same
program from the run's recorded per-window work table (``Simulation(lower_bound="lp")``)
with HiGHS, and the tests hold the two to 1e-9.

This is Formulation (6) of Learning EAS (Han & Lee 2020): minimise the summed power
of the CPUs subject to their throughput covering the tasks' workload, made into a linear
program per time window and solved with HiGHS (scipy.optimize.linprog). The engine records,
per window of ``lower_bound.window_ms`` (100 ms by default), the invariant work each task did
(and its memory-bound ``memrun`` work and ``runtime`` time); the program chooses, per cluster,
how much CPU time to spend at each OPP and how much idle, so that every task's work is
delivered within the window at least cost. docs/lower-bound.md states what is relaxed and
why the result is a true lower bound on the energy the meter measures.

Variables of one window of length L, per cluster c with n_c CPUs and OPP k:

* X[c,k]: CPU time at OPP k, summed over the cluster's CPUs (sum_k X[c,k] <= n_c L);
* Z[c,k]: time the cluster is active at OPP k (Z[c,k] >= X[c,k] / n_c, sum_k Z[c,k] <= L);
* T[g,c,k]: the part of X[c,k] that runs the pooled work of speed class g;
* Y[i,c,k]: the part of X[c,k] that runs task i, for the tasks large enough that "no task
  uses more than one CPU at a time" (sum_{c,k} Y[i,c,k] <= L) can bind.

Energy (fJ = µW x ns): sum X[c,k] (P_busy[c,k] - P_idle[c]) + n_c L P_idle[c]
+ sum Z[c,k] (P_cluster[c,k] - P_cluster_idle[c]) + L P_cluster_idle[c], with the idle
powers the smallest of the cluster's idle states.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix

__all__ = ["energy_lower_bound", "LowerBound"]

# The LP's optimum is computed in floating point; shaving this relative margin keeps the
# reported bound at or below the exact optimum (HiGHS's feasibility tolerance is 1e-7).
_SAFETY = 1e-6


@dataclass
class LowerBound:
    energy_j: float
    windows: int
    distinct_windows: int


def _speeds(platform: dict, perf: dict | None) -> np.ndarray:
    """Work per ns of a task on each cluster and OPP, flattened in (cluster, OPP) order,
    by the engine's performance model (docs/engine-interface.md)."""
    clusters = platform["clusters"]
    # the engine's reference: the last of the clusters of the largest capacity_orig
    big = max(reversed(clusters), key=lambda c: c["capacity_orig"])
    fbig = max(o["khz"] for o in big["opps"])
    out = []
    for ci, c in enumerate(clusters):
        fmax = max(o["khz"] for o in c["opps"])
        uarch = c["capacity_orig"] * fbig / (1024.0 * fmax)
        for o in c["opps"]:
            if perf is None:
                # the engine's integer path: cap * f / (1024 * fmax)
                out.append(c["capacity_orig"] * o["khz"] / (1024.0 * fmax))
                continue
            ipc = perf.get("ipc")
            u = ipc[ci] if ipc else uarch ** perf.get("ipc_exp", 1.0)
            m = perf.get("mem_frac", 0.0)
            out.append(1.0 / ((1.0 - m) * fbig / (u * o["khz"]) + m))
    return np.array(out)


def _task_perf(workload: dict, names: list[str]) -> list[dict | None]:
    """The perf model of each task of the result, forked copies (``<template>-nnnn``)
    taking their template's."""
    by_name = {t["name"]: t.get("perf") for t in workload["tasks"]}
    out = []
    for i, name in enumerate(names):
        if i < len(workload["tasks"]):
            out.append(workload["tasks"][i].get("perf"))
        else:
            out.append(by_name.get(re.sub(r"-\d{4}$", "", name)))
    return out


class _Program:
    """The windows' programs side by side as one block-diagonal LP (they share no variable,
    so its optimum is the sum of theirs), solved by one HiGHS call."""

    def __init__(self, platform: dict):
        self.clusters = platform["clusters"]
        self.ck = [(ci, k) for ci, c in enumerate(self.clusters) for k in range(len(c["opps"]))]
        self.m = len(self.ck)
        self.cl_of = np.array([ci for ci, _ in self.ck])
        p_idle = np.array([min(s["power_uw"] for s in c["idle_states"]) for c in self.clusters], dtype=float)
        p_cl_idle = np.array([min(s.get("cluster_power_uw", 0) for s in c["idle_states"])
                              for c in self.clusters], dtype=float)
        # switcher mode (Kim et al.): each virtual CPU is backed by one core of either
        # cluster at a time, the other core off: per cluster at most as many busy cores as
        # virtual CPUs, and together too; idle, a virtual CPU draws at least the cheaper
        # cluster's idle power, and a cluster backing nothing draws nothing
        self.switcher = bool(platform.get("switcher"))
        self.ncpu = [len(c["cpus"]) for c in self.clusters]
        if self.switcher:
            nv = sum(self.ncpu)
            self.ncpu = [nv] * len(self.clusters)
            p_idle = np.full(len(self.clusters), p_idle.min())
            p_cl_idle = np.zeros(len(self.clusters))
        self.n = np.array([self.ncpu[ci] for ci, _ in self.ck], dtype=float)
        p_busy = np.array([self.clusters[ci]["opps"][k]["power_uw"] for ci, k in self.ck], dtype=float)
        p_cl = np.array([self.clusters[ci]["opps"][k].get("cluster_power_uw", 0) for ci, k in self.ck],
                        dtype=float)
        # costs in units of the platform's largest power, so that the solver sees numbers
        # near 1 whether a CPU draws 100 mW or 60 W
        self.p_unit = float(max(p_busy.max(), p_cl.max(), 1.0))
        self.cost_x = (p_busy - p_idle[self.cl_of]) / self.p_unit
        self.cost_z = (p_cl - p_cl_idle[self.cl_of]) / self.p_unit
        # energy of a window with every CPU and cluster in its cheapest idle state, per ns
        if self.switcher:
            self.idle_per_ns = float(self.ncpu[0] * p_idle[0])
        else:
            self.idle_per_ns = float(sum(n * pi + pc for n, pi, pc in zip(self.ncpu, p_idle, p_cl_idle)))
        self.cost, self.rows, self.cols, self.vals, self.rhs = [], [], [], [], []
        self.nv = self.nr = 0
        self.base = 0.0
        self.L_unit = 1e8  # ns: costs per 100 ms

    def add_window(self, length_ns: float, weight: int, parts: list[tuple[np.ndarray, float, int]]) -> None:
        """One window, counted ``weight`` times: deliver each part's work at its speeds; a
        part of k > 0 tasks gets at most k L of CPU time (each of its tasks runs on at most
        one CPU at a time)."""
        # times are in units of the window (HiGHS's presolve misjudges feasibility with ns
        # right-hand sides of 1e8 beside speeds of 1e-2), costs per window
        L, m = float(length_ns), self.m
        self.base += weight * L * self.idle_per_ns
        if not parts:
            return
        v0, r0 = self.nv, self.nr
        nparts = len(parts)
        self.cost.append(np.concatenate([self.cost_x, self.cost_z, np.zeros(nparts * m)]) * (weight * L / self.L_unit))
        X, Z = v0 + np.arange(m), v0 + m + np.arange(m)
        R, C, V, B = [], [], [], []
        r = r0
        for ci, c in enumerate(self.clusters):
            js = np.flatnonzero(self.cl_of == ci)
            R += [np.full(len(js), r), np.full(len(js), r + 1)]
            C += [X[js], Z[js]]
            V += [np.ones(len(js)), np.ones(len(js))]
            B += [self.ncpu[ci], 1.0]                         # sum_k X <= n L, sum_k Z <= L
            r += 2
        if self.switcher:                                     # one core per virtual CPU
            R.append(np.full(m, r))
            C.append(X)
            V.append(np.ones(m))
            B.append(self.ncpu[0])
            r += 1
        rr = r + np.arange(m)                                 # X / n - Z <= 0
        R += [rr, rr]
        C += [X, Z]
        V += [1.0 / self.n, -np.ones(m)]
        B += [0.0] * m
        r += m
        rr = r + np.arange(m)                                 # sum_p T_p - X <= 0
        R.append(rr)
        C.append(X)
        V.append(-np.ones(m))
        for p in range(nparts):
            R.append(rr)
            C.append(v0 + 2 * m + p * m + np.arange(m))
            V.append(np.ones(m))
        B += [0.0] * m
        r += m
        for p, (speed, work, ntasks) in enumerate(parts):
            T = v0 + 2 * m + p * m + np.arange(m)
            R.append(np.full(m, r))
            C.append(T)
            V.append(-speed)
            B.append(-work / L)                               # delivered >= work
            r += 1
            if ntasks:
                R.append(np.full(m, r))
                C.append(T)
                V.append(np.ones(m))
                B.append(float(ntasks))                       # one CPU at a time each
                r += 1
        self.rows += R
        self.cols += C
        self.vals += V
        self.rhs += B
        self.nv = v0 + (2 + nparts) * m
        self.nr = r

    def solve(self) -> float:
        """Least energy in fJ."""
        if self.nv == 0:
            return self.base
        a = coo_matrix((np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
                       shape=(self.nr, self.nv)).tocsr()
        c, b = np.concatenate(self.cost), np.array(self.rhs)
        res = linprog(c, A_ub=a, b_ub=b, bounds=(0, None), method="highs",
                      options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
        if res.status != 0:
            # the run is a feasible point, so a failure is numerical: retry with the
            # interior-point solver, without presolve
            res = linprog(c, A_ub=a, b_ub=b, bounds=(0, None), method="highs-ipm",
                          options={"presolve": False})
        if res.status != 0:
            raise RuntimeError(f"lower-bound LP: {res.message}")
        return self.base + res.fun * self.L_unit * self.p_unit


# The large tasks of a class, largest first, in groups of these sizes (the rest in one
# last group): a group of k tasks shares a k L limit on its CPU time, which the k limits of
# L each imply, so grouping only relaxes the program; the largest tasks, whose limit binds
# hardest, keep their own.
_GROUP_SIZES = (1, 1, 2)


def _groups(singles: list[tuple[str, float]]) -> tuple:
    out = []
    for key in sorted({k for k, _ in singles}):
        works = sorted((w for k, w in singles if k == key), reverse=True)
        i = 0
        for size in _GROUP_SIZES + (len(works),):
            if i >= len(works):
                break
            grp = works[i:i + size]
            out.append((key, float(sum(grp)), len(grp)))
            i += size
    return tuple(out)


def _perf_key(p: dict | None) -> str:
    """A performance model's identity, its defaults filled in (as the engine parses it)."""
    if p is None:
        return "null"
    return json.dumps({"ipc_exp": float(p.get("ipc_exp", 1.0)), "ipc": p.get("ipc"),
                       "mem_frac": float(p.get("mem_frac", 0.0)), "cache_ns": int(p.get("cache_ns", 0)),
                       "cache_slowdown": float(p.get("cache_slowdown", 0.0))})


def energy_lower_bound(rec: dict, platform_spec: dict, workload_spec: dict, names: list[str]) -> LowerBound:
    """The bound from a run's recorded work table (``ends_ns`` and ``rows``, the engine's
    ``_lower_bound`` in record mode); ``names``: the result's task names."""
    ends = rec["ends_ns"]
    perfs = _task_perf(workload_spec, names)
    prog = _Program(platform_spec)
    # speed classes: one per distinct perf model, one for time-bound work (memrun work
    # and runtime time both go at 1 per ns on any CPU and OPP)
    classes: dict[str, np.ndarray] = {}
    task_class = []
    for p in perfs:
        key = _perf_key(p)
        if key not in classes:
            classes[key] = _speeds(platform_spec, p)
        task_class.append(key)
    unit = np.ones(prog.m)
    by_window: dict[int, list] = {}
    for w, ti, work, mem, rt in rec["rows"]:
        by_window.setdefault(w, []).append((ti, work, mem + rt))
    unique: dict[tuple, int] = {}
    for w, end in enumerate(ends):
        start = ends[w - 1] if w else 0
        L = end - start
        if L <= 0:
            continue
        pools: dict[str, float] = {}
        singles = []
        for ti, work, timed in by_window.get(w, []):
            key = task_class[ti]
            # a task that could be done on the slowest CPU at its lowest OPP within the
            # window never meets the one-CPU limit: pooling it drops a constraint that
            # cannot bind (and pooling any task only relaxes the program)
            if work > L * classes[key].min():
                singles.append((key, float(work)))
            elif work > 0:
                pools[key] = pools.get(key, 0.0) + work
            if timed > 0:
                pools["time"] = pools.get("time", 0.0) + timed
        k = (L, tuple(sorted(pools.items())), _groups(singles))
        unique[k] = unique.get(k, 0) + 1
    for (L, pools, groups), weight in unique.items():
        parts = [(unit if key == "time" else classes[key], v, 0) for key, v in pools]
        parts += [(classes[key], v, n) for key, v, n in groups]
        prog.add_window(L, weight, parts)
    total = prog.solve()
    solved = len(unique)
    return LowerBound(energy_j=total * 1e-15 * (1.0 - _SAFETY), windows=len(ends), distinct_windows=solved)
