"""``SchedTuningEnv``: a Gymnasium environment whose agent sets scheduler and governor
knobs of a running :class:`hetsched.Simulation` every ``step_ms`` of simulated time.

See docs/gym.md for the spaces, the reward and the seeding rules.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Mapping, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from hetsched import _input
from hetsched.errors import InputError, UnknownNameError
from hetsched.sim import Simulation, knob_table
from hetsched.workloads.metrics import compute_metrics

__all__ = ["SchedTuningEnv", "DEFAULT_KNOBS", "DEFAULT_KNOB_RANGES", "COUNTERS", "CPU_FEATURES",
           "OBSERVATION_MODES"]

# The knobs an agent tunes unless told otherwise, and narrower ranges than the engine's
# validity range where that one is far too wide to explore (sched_migration_cost_ns
# accepts up to 1 s; the kernel's default is 0.5 ms).
DEFAULT_KNOBS: tuple[str, ...] = ("schedutil.target_load", "sched_migration_cost_ns")
DEFAULT_KNOB_RANGES: dict[str, tuple[float, float]] = {
    "sched_migration_cost_ns": (0.0, 5_000_000.0),
    "schedutil.rate_limit_us": (0.0, 20_000.0),
    "sched_latency_ns": (1_000_000.0, 24_000_000.0),
    "sched_min_granularity_ns": (100_000.0, 3_000_000.0),
    "sched_wakeup_granularity_ns": (0.0, 4_000_000.0),
    "ondemand.sampling_rate_us": (1_000.0, 100_000.0),
    "conservative.sampling_rate_us": (1_000.0, 100_000.0),
    "interactive.timer_rate_us": (1_000.0, 100_000.0),
    "interactive.min_sample_time_us": (0.0, 200_000.0),
    "interactive.above_hispeed_delay_us": (0.0, 200_000.0),
}
# engine counters whose per-step increments (per ms of simulated time) enter the observation
COUNTERS: tuple[str, ...] = ("wakeups", "context_switches", "migrations", "freq_changes",
                             "balance_attempts", "balance_successes")
# The per-CPU features, named as the kernel names what each one reads, the first two in
# units of SCHED_CAPACITY_SCALE as the kernel counts them and divided by it (so in [0, 1]):
# cpu_util_cfs() (max of the cfs_rq's util_avg and util_est, capped at capacity_orig);
# freq_scale, arch_set_freq_scale()'s cur_freq / cpuinfo.max_freq of the CPU's policy;
# in_idle_state, whether idle_get_state(rq) has a cpuidle state (1) or not (0: running, or
# idle but still waking); rq->nr_running, clipped at max_nr_running.
CPU_FEATURES: tuple[str, ...] = ("cpu_util_cfs", "freq_scale", "in_idle_state", "nr_running")
# "box": one float32 vector (what RL libraries take); "dict": the same values keyed by
# their names, a spaces.Dict whose spaces.flatten() is the box vector
OBSERVATION_MODES: tuple[str, ...] = ("box", "dict")
# the bound of the unbounded observations (counter rates per ms, power in W); values clip to it
OBS_CAP = 1e6


class SchedTuningEnv(gym.Env):
    """One episode = one :class:`Simulation` of ``platform`` x ``workload`` under
    ``scheduler``/``governor`` for ``episode_steps`` steps of ``step_ms`` simulated ms.

    Action: a ``Box(-1, 1, (len(knobs),))``; component i maps linearly onto knob i's range
    (``lo + (a + 1) / 2 * (hi - lo)``), the range being ``knob_ranges[name]``, else
    :data:`DEFAULT_KNOB_RANGES`, else the engine's ``[min, max]`` from ``knob_table()``.

    Observation (float32): per CPU ``[cpu_util_cfs/1024, freq/f_max, in idle state,
    nr_running]`` (:data:`CPU_FEATURES`), then per :data:`COUNTERS` its increment per
    simulated ms over the last step, then the average power over the last step in W, the
    current knob values normalised back to [-1, 1], and the fraction of the episode done.
    :attr:`observation_names` (also ``info["observation_names"]`` after :meth:`reset`)
    names each element: ``cpu3.cpu_util_cfs``, ``cpu3.freq_scale``, ``cpu3.in_idle_state``,
    ``cpu3.nr_running``, ``wakeups_per_ms``, ..., ``power_w``,
    ``knob.schedutil.target_load``, ..., ``episode_progress``. ``observation="box"`` (the
    default) gives the vector as a ``Box``; ``observation="dict"`` gives a ``spaces.Dict``
    of one scalar ``Box`` per name, in the same order, so that ``spaces.flatten`` of it is
    the box vector.

    Reward per step: ``-w_energy * P_step(W) - w_missed * missed_step - w_wait *
    waiting_step`` and, on the last step only, ``+ sum_k metric_weights[k] *
    metric_k`` over the run's metrics (``"game.fps"`` is ``result["metrics"]["game"]["fps"]``,
    ``"missed_activation_pct"`` the engine's own); a metric without a value (no launch
    finished in the episode, ...) counts as ``metric_missing`` and is listed in
    ``info["metrics_missing"]``. ``missed_step`` is the fraction of
    periodic activations in the step that missed their deadline; ``waiting_step`` the
    runnable-but-not-running time of all tasks in the step divided by the step's length
    (the mean number of tasks waiting for a CPU); both from the engine's cumulative
    statistics.
    """

    metadata = {"render_modes": []}

    def __init__(self, platform: str = "gs101", workload: str | list[str] = "phone-mix",
                 scheduler: str = "eas", governor: str = "schedutil",
                 knobs: Sequence[str] | None = None,
                 knob_ranges: Mapping[str, tuple[float, float]] | None = None,
                 fixed_knobs: Mapping[str, Any] | None = None,
                 step_ms: float = 100.0, episode_steps: int = 50, warmup_ms: float = 100.0,
                 w_energy: float = 1.0, w_missed: float = 1.0, w_wait: float = 0.0,
                 metric_weights: Mapping[str, float] | None = None, metric_missing: float = 0.0,
                 idle_governor: str = "menu", max_nr_running: float = 64.0,
                 observation: str = "box"):
        super().__init__()
        if observation not in OBSERVATION_MODES:
            raise UnknownNameError("SchedTuningEnv", "observation", str(observation), OBSERVATION_MODES)
        # Every argument is checked here, by its own name: a step that rounds to 0 ns would
        # divide by zero at the first step, an episode past the engine's limit would fail
        # only when run_until() reaches it, and an infinite weight makes every reward -inf.
        src = "SchedTuningEnv"
        step_ms = _input.number(step_ms, src, "step_ms", _input.Range(
            1e-6, _input.MAX_SIM_S * 1e3, unit="ms", text="a number of ms in [1e-06, "
            f"{_input.MAX_SIM_S * 1e3:g}] (1 ns to the engine's {_input.MAX_SIM_S // 86_400}-day limit)"))
        if isinstance(episode_steps, bool) or not isinstance(episode_steps, numbers.Integral) or episode_steps < 1:
            raise InputError(src, "episode_steps", "a positive integer", got=episode_steps)
        episode_steps = int(episode_steps)
        warmup_ms = _input.number(warmup_ms, src, "warmup_ms", _input.Range(0, _input.MAX_SIM_S * 1e3, unit="ms"))
        self.step_ns = round(step_ms * 1e6)
        self.warmup_ns = round(warmup_ms * 1e6)
        if self.warmup_ns + episode_steps * self.step_ns > _input.MAX_SIM_NS:
            raise InputError(src, "episode_steps", f"an episode (warmup_ms + episode_steps * step_ms) of at most "
                             f"{_input.MAX_SIM_S // 86_400} days, the engine's limit: at most "
                             f"{(_input.MAX_SIM_NS - self.warmup_ns) // self.step_ns} steps of {step_ms:g} ms",
                             got=episode_steps)
        weights = {name: _input.number(v, src, name) for name, v in
                   (("w_energy", w_energy), ("w_missed", w_missed), ("w_wait", w_wait),
                    ("metric_missing", metric_missing))}
        if metric_weights is not None and not isinstance(metric_weights, Mapping):
            raise InputError(src, "metric_weights", "a mapping of metric name to weight", got=metric_weights)
        self.metric_weights = {str(k): float(_input.number(v, src, f"metric_weights[{k}]"))
                               for k, v in (metric_weights or {}).items()}
        self.max_nr_running = float(_input.number(max_nr_running, src, "max_nr_running",
                                                  _input.Range(0, 1e6, lo_open=True)))
        self.platform, self.workload = platform, workload
        self.scheduler, self.governor, self.idle_governor = scheduler, governor, idle_governor
        self.fixed_knobs = dict(fixed_knobs or {})
        self.episode_steps = episode_steps
        self.w_energy, self.w_missed, self.w_wait = (float(weights[k]) for k in ("w_energy", "w_missed", "w_wait"))
        self.metric_missing = float(weights["metric_missing"])

        table = {k["name"]: k for k in knob_table()}
        self.knob_names = list(DEFAULT_KNOBS if knobs is None else knobs)
        if not self.knob_names:
            raise InputError("SchedTuningEnv", "knobs", "at least one knob name", got=knobs)
        # one action component per knob: a repeated one would be set twice per step, the
        # last value winning, and its two observation elements would share a name
        repeated = sorted({n for n in self.knob_names if self.knob_names.count(n) > 1})
        if repeated:
            raise InputError("SchedTuningEnv", "knobs", "each knob name once", got=repeated)
        ranges = dict(knob_ranges or {})
        lo, hi = [], []
        for name in self.knob_names:
            if name not in table or name in ("kernel", "hotplug"):
                raise UnknownNameError("SchedTuningEnv", "knob", name, table)
            k = table[name]
            pair = ranges.get(name, DEFAULT_KNOB_RANGES.get(name, (k["min"], k["max"])))
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise InputError("SchedTuningEnv", f"knob_ranges[{name}]", "a pair (lo, hi)", got=pair)
            a, b = (float(_input.number(x, "SchedTuningEnv", f"knob_ranges[{name}]")) for x in pair)
            if not (k["min"] <= a < b <= k["max"]):
                raise InputError("SchedTuningEnv", f"knob_ranges[{name}]",
                                 f"lo < hi within [{k['min']:g}, {k['max']:g}] {k['unit']}", got=(a, b))
            lo.append(a)
            hi.append(b)
        # switches (unit "0/1", util_aware.estimator's "a=0/b=1") take the nearest end
        self._switch = np.array([table[n]["unit"] in ("0/1", "a=0/b=1") for n in self.knob_names])
        self.knob_lo = np.array(lo, dtype=np.float64)
        self.knob_hi = np.array(hi, dtype=np.float64)
        unknown_w = [n for n in ranges if n not in self.knob_names]
        if unknown_w:
            raise InputError("SchedTuningEnv", "knob_ranges", f"ranges only for the tuned knobs {self.knob_names}",
                             got=unknown_w)

        # build one simulation to learn the platform's shape and check every argument now
        sim = self._build(seed=0)
        self._fmax_khz = self._cluster_fmax(sim)
        self._fmax_any = max(self._fmax_khz.values())
        # the engine's CPUs (the switcher's virtual CPUs on exynos5422:switcher)
        cpus = sim.observe()["cpus"]
        self.n_cpus = len(cpus)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(len(self.knob_names),), dtype=np.float32)
        n_cpu_f = len(CPU_FEATURES)
        low = np.zeros(self.n_cpus * n_cpu_f + len(COUNTERS) + 1 + len(self.knob_names) + 1, dtype=np.float32)
        high = np.full_like(low, OBS_CAP)
        for c in range(self.n_cpus):
            high[c * n_cpu_f: c * n_cpu_f + 3] = 1.0            # util, freq, idle
            high[c * n_cpu_f + 3] = self.max_nr_running          # nr_running (clipped)
        k0 = self.n_cpus * n_cpu_f + len(COUNTERS) + 1
        low[k0: k0 + len(self.knob_names)] = -1.0
        high[k0: k0 + len(self.knob_names)] = 1.0
        high[-1] = 1.0                                           # episode progress
        box = spaces.Box(low, high, dtype=np.float32)
        # the clipping bounds of _observation(), whichever space the agent is given
        self._obs_low, self._obs_high = box.low, box.high
        # in the order _observation() appends the values
        self.observation_names: tuple[str, ...] = (
            tuple(f"cpu{c['cpu']}.{f}" for c in cpus for f in CPU_FEATURES)
            + tuple(f"{name}_per_ms" for name in COUNTERS)
            + ("power_w",)
            + tuple(f"knob.{name}" for name in self.knob_names)
            + ("episode_progress",))
        assert len(self.observation_names) == box.shape[0]
        self.observation_mode = observation
        if observation == "dict":
            # flat keys, each one of observation_names: a nested Dict (per CPU, per group)
            # would give the same values under longer paths and nothing more, and a Dict
            # built from pairs keeps their order (from a mapping it sorts the keys, cpu10
            # before cpu2), which is what makes its flatten() the box vector
            self.observation_space = spaces.Dict(
                [(name, spaces.Box(lo, hi, shape=(), dtype=np.float32))
                 for name, lo, hi in zip(self.observation_names, box.low, box.high)])
        else:
            self.observation_space = box
        self.sim: Simulation | None = None
        self._steps = 0

    # -- helpers ----------------------------------------------------------------------
    def _build(self, seed: int) -> Simulation:
        return Simulation(platform=self.platform, workload=self.workload, scheduler=self.scheduler,
                          governor=self.governor, knobs=self.fixed_knobs, seed=seed,
                          idle_governor=self.idle_governor)

    @staticmethod
    def _cluster_fmax(sim: Simulation) -> dict[str, float]:
        """f_max per cluster name (a CPU's frequency is read against its cluster's)."""
        return {c["name"]: float(max(o["khz"] for o in c["opps"])) for c in sim.platform_spec["clusters"]}

    def action_to_knobs(self, action: Any) -> dict[str, float]:
        """The knob values an action in [-1, 1]^n stands for (clipped into the box)."""
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(len(self.knob_names)), -1.0, 1.0)
        v = self.knob_lo + (a + 1.0) / 2.0 * (self.knob_hi - self.knob_lo)
        v = np.minimum(np.maximum(v, self.knob_lo), self.knob_hi)
        v = np.where(self._switch, np.round(v), v)
        return {n: float(x) for n, x in zip(self.knob_names, v)}

    def knobs_to_action(self, values: Mapping[str, float]) -> np.ndarray:
        """The inverse of :meth:`action_to_knobs` (clipped to [-1, 1])."""
        v = np.array([float(values[n]) for n in self.knob_names])
        return np.clip(2.0 * (v - self.knob_lo) / (self.knob_hi - self.knob_lo) - 1.0, -1.0, 1.0).astype(np.float32)

    def _perf_snapshot(self) -> tuple[float, float, float]:
        """Cumulative (activations, missed activations, Σ task wait seconds) so far."""
        doc = self.sim.engine_result()
        m = doc["metrics"]
        wait_s = sum(float(t.get("wait_s") or 0.0) for t in doc["tasks"])
        return float(m.get("activations", 0) or 0), float(m.get("missed_activations", 0) or 0), wait_s

    def _observation(self, obs: dict, prev_counters: dict, d_energy_j: float, dt_ns: int) -> np.ndarray:
        feats = []
        for cpu in obs["cpus"]:
            feats.append(min(cpu["util"] / 1024.0, 1.0))
            fmax = self._fmax_khz.get(cpu.get("cluster"), self._fmax_any)
            feats.append(min(cpu["freq_khz"] / fmax, 1.0))
            feats.append(1.0 if cpu["idle_state"] >= 0 else 0.0)
            feats.append(min(float(cpu["nr_running"]), self.max_nr_running))
        dt_ms = max(dt_ns, 1) / 1e6
        for name in COUNTERS:
            feats.append(max(obs["counters"].get(name, 0) - prev_counters.get(name, 0), 0) / dt_ms)
        feats.append(max(d_energy_j, 0.0) / (max(dt_ns, 1) / 1e9))
        feats.extend(self.knobs_to_action(self.sim.knob_values()).tolist())
        feats.append(min(self._steps / self.episode_steps, 1.0))
        return np.clip(np.asarray(feats, dtype=np.float32), self._obs_low, self._obs_high)

    def _as_mode(self, vec: np.ndarray) -> np.ndarray | dict[str, np.ndarray]:
        if self.observation_mode == "dict":
            return spaces.unflatten(self.observation_space, vec)
        return vec

    def _metric(self, metrics: dict, key: str) -> float | None:
        if key in metrics and not isinstance(metrics[key], dict):
            v = metrics[key]
        else:
            head, _, tail = key.partition(".")
            sub = metrics.get(head)
            if not isinstance(sub, dict) or tail not in sub:
                raise InputError("SchedTuningEnv", "metric_weights", "a metric of this run "
                                 f"({', '.join(self._metric_names(metrics))})", got=key)
            v = sub[tail]
        return float(v) if v is not None and math.isfinite(float(v)) else None

    @staticmethod
    def _metric_names(metrics: dict) -> list[str]:
        out = []
        for k, v in metrics.items():
            if isinstance(v, dict):
                out += [f"{k}.{kk}" for kk, vv in v.items() if isinstance(vv, (int, float))]
            elif isinstance(v, (int, float)):
                out.append(k)
        return out

    def run_metrics(self) -> dict:
        """The run's metrics so far: the engine's and the workload's (no lower bound)."""
        doc = self.sim.engine_result()
        doc["metrics"].update(compute_metrics(doc, self.sim.workload_spec))
        return doc["metrics"]

    # -- the Gymnasium API ----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        # checked before gymnasium seeds its generator with it: a seed the simulation
        # cannot take is named as reset()'s, not as the CLI's --seed
        if seed is not None:
            seed = _input.seed(seed, "reset()", "seed")
        super().reset(seed=seed)
        # reset(seed=s) runs the workload drawn with seed s (as `hetsched run --seed s`);
        # without a seed the next workload seed comes from the env's generator
        wl_seed = seed if seed is not None else int(self.np_random.integers(0, 2**31 - 1))
        self.workload_seed = wl_seed
        self.sim = self._build(wl_seed)
        self._steps = 0
        if self.warmup_ns:
            self.sim.run_until(self.warmup_ns)
        obs = self.sim.observe()
        self._counters = dict(obs["counters"])
        self._energy_j = self._energy0 = float(obs["energy_j"])
        self._perf = self._perf_snapshot()
        o = self._observation(obs, self._counters, 0.0, self.step_ns)
        return self._as_mode(o), {"workload_seed": wl_seed, "now_ns": self.sim.now_ns,
                                  "knobs": self.sim.knob_values(), "observation_names": self.observation_names}

    def step(self, action):
        if self.sim is None:
            raise RuntimeError("call reset() before step()")
        if self._steps >= self.episode_steps:
            raise RuntimeError("the episode has ended; call reset()")
        knobs = self.action_to_knobs(action)
        for name, value in knobs.items():
            self.sim.set_knob(name, value)
        t0 = self.sim.now_ns
        self.sim.run_until(t0 + self.step_ns)
        self._steps += 1
        obs = self.sim.observe()
        d_e = float(obs["energy_j"]) - self._energy_j
        power_w = d_e / (self.step_ns / 1e9)
        acts, missed, wait_s = self._perf_snapshot()
        p_acts, p_missed, p_wait = self._perf
        d_acts, d_missed = acts - p_acts, missed - p_missed
        missed_frac = d_missed / d_acts if d_acts > 0 else 0.0
        waiting = max(wait_s - p_wait, 0.0) / (self.step_ns / 1e9)
        reward = -self.w_energy * power_w - self.w_missed * missed_frac - self.w_wait * waiting
        o = self._observation(obs, self._counters, d_e, self.step_ns)
        self._counters, self._energy_j, self._perf = dict(obs["counters"]), float(obs["energy_j"]), (acts, missed, wait_s)
        terminated = self._steps >= self.episode_steps
        info: dict[str, Any] = {"now_ns": self.sim.now_ns, "knobs": knobs, "energy_j": d_e, "power_w": power_w,
                                "missed_fraction": missed_frac, "waiting_tasks": waiting}
        if terminated:
            metrics = self.run_metrics()
            values = {k: self._metric(metrics, k) for k in self.metric_weights}
            missing = [k for k, v in values.items() if v is None]
            bonus = sum(w * (self.metric_missing if values[k] is None else values[k])
                        for k, w in self.metric_weights.items())
            info["metrics_missing"] = missing
            reward += bonus
            info["metrics"] = metrics
            info["metric_reward"] = bonus
            info["episode_energy_j"] = float(obs["energy_j"]) - self._energy0  # the steps' energy
            info["run_energy_j"] = float(obs["energy_j"])  # with the warm-up
        return self._as_mode(o), float(reward), terminated, False, info
