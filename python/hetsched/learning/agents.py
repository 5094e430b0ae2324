"""The two agents of Learning EAS (Han & Lee 2020, §III.D-F): Algorithm 1 (TARGET_LOAD, one
agent per cluster) and Algorithm 2 (sched_migration_cost, one agent for the system).

Each agent is driven by the controller (:mod:`hetsched.learning.controller`) at its own
period, from ``Simulation.observe()``; every constant is a field of its config dataclass
(a named, overridable default). Signs follow the algorithms and eq. 12/13 as written; the
``error_sign`` field (+1, the paper) lets a study flip them (docs/learning.md).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from hetsched import _input
from hetsched._input import Range
from hetsched.errors import InputError
from hetsched.learning.network import Forward, PolicyNetwork

__all__ = ["TL_INPUTS", "TargetLoadConfig", "MigrationCostConfig", "TargetLoadAgent", "MigrationCostAgent",
           "eq12_error", "eq13_error", "migration_error", "TARGET_LOAD_RANGES", "MIGRATION_COST_RANGES",
           "PERIOD_RANGE", "check_config"]


TL_INPUTS = ("util", "eq8")  # what "Get ith CPU load" reads (TargetLoadConfig.input)


@dataclass
class TargetLoadConfig:
    """Algorithm 1's constants (Learning EAS §III.D)."""

    period_ms: float = 100.0          # "t is set to 100 milliseconds"
    out_max: float = 100_000.0        # "an output value between 0 and 100000"
    threshold: float = 12_000.0       # "greater than the threshold 12000 ... decreases TARGET_LOAD"
    step: float = 0.0023              # "changes TARGET_LOAD by 0.0023 every 100 milliseconds"
    initial: float = 0.8              # the kernel's 1.25 headroom (eq. 10)
    # The paper states no bounds: TARGET_LOAD moves within what the knob it writes takes,
    # schedutil.target_load.clusterN (features.rs): at least 0.05, which schedutil raises a
    # smaller target load to (0 would divide the util by zero, and the knob's 0 selects the
    # global schedutil.target_load), at most 1, the frequency whose capacity equals the util
    min_target_load: float = 0.05
    max_target_load: float = 1.0
    # alpha of eq. 1 by the paper's criterion, "adjusted so that the policy neural network stabilizes
    # within 5 minutes when the workload pattern of the running tasks changes" (§III.D): on sm8150
    # (msm-4.14), Train Sim's low setting then its high one, the smallest rate of a log grid whose
    # networks learn and settle within 300 s (benchmarks/learning/settle.py, docs/learning.md)
    lr: float = 1e-9
    freq_unit_khz: float = 1.0        # freq_t of eq. 12 in kHz, cpufreq's unit (cur_CPU_freq)
    error_sign: float = 1.0           # +1: eq. 12 as written
    init_input: float = 64.0          # the fresh network outputs init_output at utils of this
    init_output: float = 12_000.0     # ... i.e. at the threshold (the paper does not say)
    seed: int = 0                     # numpy seed of the initial weights (+ cluster index)
    input: str = "util"               # "util": cpu_util_cfs; "eq8": busy fraction x capacity_orig
    init_load: float = 0.8            # eq8: the fresh network is at the threshold at this busy fraction


@dataclass
class MigrationCostConfig:
    """Algorithm 2's constants (Learning EAS §III.F)."""

    period_ms: float = 7000.0         # "executed every 7000 milliseconds"
    sample_ms: float = 40.0           # "stored in one slot every 40ms" (175 slots per period)
    out_max: float = 800_000.0        # "an output value between 0 and 800000"
    threshold: float = 160_000.0      # "greater than the threshold 160000 ... decreases"
    step: float = 17_027.0            # "changes sched_migration_cost by 17027"
    initial: float = 500_000.0        # sysctl_sched_migration_cost
    # The paper states no bounds: the cost moves within the knob's range,
    # sched_migration_cost_ns (features.rs): 0 (kernel/sched/fair.c's
    # sysctl_sched_migration_cost is unsigned) to 1 s
    min_cost_ns: float = 0.0
    max_cost_ns: float = 1e9
    lr: float = 1e-12                 # ours: settles within 5 min (docs)
    error_sign: float = 1.0           # +1: eq. 13 as written
    init_input: float = 1000.0        # fresh network outputs init_output for inputs of this
    init_output: float = 160_000.0    # ... i.e. at the threshold
    seed: int = 100

    @property
    def slots(self) -> int:
        return int(round(self.period_ms / self.sample_ms))


def _knob_range(name: str) -> Range:
    """The range of the engine's knob an agent writes (its value goes there unchecked)."""
    from hetsched.sim import knob_table

    k = next(k for k in knob_table() if k["name"] == name)
    return Range(k["min"], k["max"], unit=k["unit"])


#: An agent's period steps the simulation: zero or a negative one would never advance it
#: (the controller would loop at one instant), so at least 1 ms, the kernel's shortest
#: tick (HZ=1000), and at most the longest run (_input.MAX_SIM_S).
PERIOD_RANGE = Range(1.0, _input.MAX_SIM_S * 1000.0, unit="ms",
                     text=f"a number of ms in [1, {_input.MAX_SIM_S * 1000}] (1 ms to 30 days)")
_SEED = Range(0, _input.MAX_SEED, integer=True, text="a non-negative integer, at most 2**63 - 1")
_TL_KNOB = _knob_range("schedutil.target_load.cluster0")
_MC_KNOB = _knob_range("sched_migration_cost_ns")

#: What each numeric field of the configs accepts (``input`` is one of TL_INPUTS). The
#: values an agent writes to a knob (initial, the bounds) stay within that knob's range;
#: the network's scale (out_max) and the frequency unit must be positive, the rates,
#: steps and initial inputs/outputs non-negative; threshold and error_sign any finite number.
TARGET_LOAD_RANGES: dict[str, Range] = {
    "period_ms": PERIOD_RANGE, "out_max": Range(0, lo_open=True), "threshold": Range(), "step": Range(0),
    "initial": _TL_KNOB, "min_target_load": _TL_KNOB, "max_target_load": _TL_KNOB, "lr": Range(0),
    "freq_unit_khz": Range(0, lo_open=True, unit="kHz"), "error_sign": Range(), "init_input": Range(0),
    "init_output": Range(0), "seed": _SEED, "init_load": Range(0, 1),
}
MIGRATION_COST_RANGES: dict[str, Range] = {
    "period_ms": PERIOD_RANGE, "sample_ms": PERIOD_RANGE, "out_max": Range(0, lo_open=True), "threshold": Range(),
    "step": Range(0), "initial": _MC_KNOB, "min_cost_ns": _MC_KNOB, "max_cost_ns": _MC_KNOB, "lr": Range(0),
    "error_sign": Range(), "init_input": Range(0), "init_output": Range(0), "seed": _SEED,
}


def _ranges(cfg: Any) -> dict[str, Range]:
    return TARGET_LOAD_RANGES if isinstance(cfg, TargetLoadConfig) else MIGRATION_COST_RANGES


def _set_fields(cfg: Any, values: dict, source: str = "--set", prefix: str = "") -> Any:
    """Sets config fields from ``values`` (numbers or their text), each checked against its
    range (an InputError naming ``prefix + name``); an unknown name is a KeyError."""
    names = {f.name for f in fields(cfg)}
    for k, v in values.items():
        if k not in names:
            raise KeyError(k)
        if k == "input":
            if v not in TL_INPUTS:
                raise InputError(source, f"{prefix}{k}", " or ".join(TL_INPUTS), got=v)
            cfg.input = v
            continue
        setattr(cfg, k, _input.number(v, source, f"{prefix}{k}", _ranges(cfg)[k]))
    return cfg


def check_config(cfg: Any, source: str, prefix: str) -> None:
    """Every field of a TargetLoadConfig / MigrationCostConfig in its range, and each
    agent's lower bound at most its upper one; errors name ``prefix + field``."""
    for f in fields(cfg):
        v = getattr(cfg, f.name)
        if f.name == "input":
            if v not in TL_INPUTS:
                raise InputError(source, f"{prefix}input", " or ".join(TL_INPUTS), got=v)
            continue
        _input.number(v, source, f"{prefix}{f.name}", _ranges(cfg)[f.name])
    lo, hi = (("min_target_load", "max_target_load") if isinstance(cfg, TargetLoadConfig)
              else ("min_cost_ns", "max_cost_ns"))
    if getattr(cfg, lo) > getattr(cfg, hi):
        raise InputError(source, f"{prefix}{lo}", f"at most {prefix}{hi} ({getattr(cfg, hi):g})", got=getattr(cfg, lo))


def eq12_error(tl: float, cur_freq: float, prev_freq: float, sign: float = 1.0) -> float:
    """Eq. 12: error = tl_t * (freq_t - freq_{t-1})."""
    return sign * tl * (cur_freq - prev_freq)


def migration_error(total_vari: float, mig_count: float, mig_success: float) -> float:
    """Algorithm 2's cur_error = total_CPU_load_vari / (mig_count + mig_success); 0 when
    nothing was attempted (the paper's 0/0 at start)."""
    d = mig_count + mig_success
    return total_vari / d if d > 0 else 0.0


def eq13_error(mc: float, cur_error: float, prev_error: float, sign: float = 1.0) -> float:
    """Eq. 13: error = -mc_t * (cv_t/(tm_t+ts_t) - cv_{t-1}/(tm_{t-1}+ts_{t-1}))."""
    return -sign * mc * (cur_error - prev_error)


def bounded_step(value: float, step: float, lo: float, hi: float, apply: bool) -> tuple[float, float]:
    """Algorithm 1's (and 2's) move of a knob by the chosen ``step``: (the change to train on,
    the knob's new value). Applied, the change is what the bounds let through: a step a bound
    stops is no action (or a part of one), which eq. 12/13 then have nothing to reward.
    Observing (``apply`` False), nothing moves and the change is the step the network chose,
    rewarded by what follows under the unchanged knob."""
    if not apply:
        return step, value
    moved = value + step
    new = min(max(moved, lo), hi)
    return (step if new == moved else new - value), new


class TargetLoadAgent:
    """Algorithm 1 for cluster ``cluster`` (its CPUs ``cpus``, knob ``knob``)."""

    def __init__(self, cluster: str, cpus: list[int], knob: str, cfg: TargetLoadConfig, index: int = 0,
                 capacity_orig: float = 1024.0, apply: bool = True):
        """``apply`` False: the observing mode (``learning.apply=0``, paper Table 3's "without
        changing TARGET_LOAD"): the agent runs and trains but its TARGET_LOAD stays where
        it is; eq. 12's tl_t is then the step the network chose."""
        self.cluster, self.cpus, self.knob, self.cfg = cluster, list(cpus), knob, cfg
        self.apply = apply
        n = len(self.cpus)
        init_input = cfg.init_load * capacity_orig if cfg.input == "eq8" else cfg.init_input
        self.net = PolicyNetwork(n, n + 1, cfg.out_max, cfg.lr, seed=cfg.seed + index,
                                 init_output=cfg.init_output, init_input=init_input)
        self.target_load = cfg.initial
        self.tl = 0.0
        self.prev_freq = self.cur_freq = 0.0  # "prev_CPU_freq = cur_CPU_freq = 0"
        self._pending: Forward | None = None
        self._last_busy: tuple[int, list[int]] | None = None

    def inputs(self, obs: dict) -> list[float]:
        """The network's inputs: "util" reads cpu_util_cfs (PELT, frequency-invariant);
        "eq8" the paper's eq. 8, Cutil = Ctime / (Ctime + Itime) * MCutil, the busy
        fraction since the last turn at whatever frequency ran, times capacity_orig."""
        if self.cfg.input == "util":
            return [obs["cpus"][i]["util"] for i in self.cpus]
        now = obs["now_ns"]
        busy = [obs["cpus"][i]["busy_ns"] for i in self.cpus]
        last = self._last_busy
        self._last_busy = (now, busy)
        if last is None or now <= last[0]:
            return [0.0] * len(self.cpus)
        dt = now - last[0]
        return [(b - b0) / dt * obs["cpus"][i]["capacity_orig"] for i, b, b0 in zip(self.cpus, busy, last[1])]

    def freq(self, obs: dict) -> float:
        return obs["cpus"][self.cpus[0]]["freq_khz"] / self.cfg.freq_unit_khz

    def step(self, obs: dict, record: bool = True) -> dict:
        """One 100 ms turn: train on the last action's result (after "Sleep 100ms"), then
        run the network on the CPU utils and move TARGET_LOAD. Returns the record row
        (``record`` False: without the weights' norm, which only the record reads)."""
        c = self.cfg
        error = 0.0
        self.cur_freq = self.freq(obs)  # "Get cur_CPU_freq"
        if self._pending is not None:
            error = eq12_error(self.tl, self.cur_freq, self.prev_freq, c.error_sign)
            self.net.backward(self._pending, error)
        f = self.net.forward(self.inputs(obs))
        step = -c.step if c.threshold < f.out else c.step
        self.tl, self.target_load = bounded_step(self.target_load, step, c.min_target_load, c.max_target_load,
                                                 self.apply)
        self.prev_freq = self.cur_freq  # "prev_CPU_freq = cur_CPU_freq"
        self._pending = f if self.tl != 0.0 else None
        return {"agent": "target_load", "cluster": self.cluster, "value": self.target_load,
                "action": self.tl, "output": f.out, "error": error,
                "w_norm": self.net.weight_norm() if record else None}


class MigrationCostAgent:
    """Algorithm 2 over the clusters ``clusters`` (name -> CPU list)."""

    def __init__(self, clusters: dict[str, list[int]], cfg: MigrationCostConfig,
                 knob: str = "sched_migration_cost_ns", apply: bool = True):
        """``apply`` False: the observing mode, as :class:`TargetLoadAgent`'s (eq. 13's mc_t
        is the step the network chose; the cost stays where it is)."""
        self.clusters, self.cfg, self.knob = {k: list(v) for k, v in clusters.items()}, cfg, knob
        self.apply = apply
        m = len(self.clusters)
        self.net = PolicyNetwork(m + 2, m + 3, cfg.out_max, cfg.lr, seed=cfg.seed,
                                 init_output=cfg.init_output, init_input=cfg.init_input)
        self.cost = cfg.initial
        self.mc = 0.0
        self.prev_total_vari = 0.0
        self.prev_count = self.prev_success = 0.0
        # per cluster, the loads of its CPUs at each 40 ms slot of the period; the slots'
        # variances are taken once per period (np.var row by row of the slots x CPUs array
        # is np.var of each slot's loads, the same reduction) instead of at every slot
        self._loads: list[list[list[float]]] = [[] for _ in self.clusters]
        self._last_counters: tuple[float, float] | None = None
        self._pending: Forward | None = None

    def start(self, obs: dict) -> None:
        """Counters at the start of the first period (the counts are per period)."""
        self._last_counters = self._counters(obs)

    @staticmethod
    def _counters(obs: dict) -> tuple[float, float]:
        c = obs["counters"]
        return float(c["balance_attempts"]), float(c["balance_successes"])

    def sample(self, obs: dict) -> None:
        """One 40 ms slot: the CPU workloads of each cluster (their variance is the slot's
        value, see :meth:`slot_variances`)."""
        cpus = obs["cpus"]
        for loads, ids in zip(self._loads, self.clusters.values()):
            loads.append([cpus[i]["util"] for i in ids])

    def slot_variances(self) -> np.ndarray:
        """The variance of the CPU workloads of each cluster at each slot of this period
        (slots x clusters)."""
        return np.stack([np.var(np.array(loads), axis=1) for loads in self._loads], axis=1)

    def step(self, obs: dict, record: bool = True) -> dict:
        """One 7000 ms turn of Algorithm 2 (after its "Sleep 7000ms"); ``record`` as
        :meth:`TargetLoadAgent.step`'s."""
        c = self.cfg
        sampled = bool(self._loads and self._loads[0])
        vari = np.mean(self.slot_variances(), axis=0) if sampled else np.zeros(len(self.clusters))
        self._loads = [[] for _ in self.clusters]
        total_vari = float(vari.sum())
        a, s = self._counters(obs)
        la, ls = self._last_counters if self._last_counters is not None else (0.0, 0.0)
        self._last_counters = (a, s)
        mig_count, mig_success = a - la, s - ls
        cur_error = migration_error(total_vari, mig_count, mig_success)
        prev_error = migration_error(self.prev_total_vari, self.prev_count, self.prev_success)
        error = eq13_error(self.mc, cur_error, prev_error, c.error_sign)
        if self._pending is not None:
            self.net.backward(self._pending, error)
        f = self.net.forward([mig_count, mig_success, *vari])
        step = -c.step if c.threshold < f.out else c.step
        self.mc, self.cost = bounded_step(self.cost, step, c.min_cost_ns, c.max_cost_ns, self.apply)
        # the paper's "prev_success_count = success_count" is read as prev_mig_success = mig_success
        self.prev_total_vari, self.prev_count, self.prev_success = total_vari, mig_count, mig_success
        self._pending = f if self.mc != 0.0 else None
        return {"agent": "migration_cost", "cluster": "", "value": self.cost, "action": self.mc,
                "output": f.out, "error": error, "w_norm": self.net.weight_norm() if record else None,
                "mig_count": mig_count, "mig_success": mig_success, "total_vari": total_vari,
                "cur_error": cur_error}


def config_dict(cfg: Any) -> dict:
    return asdict(cfg)
