"""Learning EAS as a controller that steps a :class:`~hetsched.sim.Simulation`:
``run_until`` to the next agent time, ``observe()``, act (set a knob), again.

The engine runs ``eas`` (with schedutil); the controller runs Algorithm 1 on every
cluster every 100 ms (knob ``schedutil.target_load.clusterN``) and Algorithm 2 every
7000 ms (knob ``sched_migration_cost_ns``, workloads sampled every 40 ms). The weights
are loaded from ``state_path`` at the start (if the file exists) and saved there by
:meth:`LearningEAS.save` (the Simulation does so with every result), like the paper's
storage in the secondary repository across boots.
"""

from __future__ import annotations

import csv
import io
import json
import os
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from hetsched import _input
from hetsched.errors import InputError
from hetsched.outputs import OutputSet
from hetsched.learning.agents import (PERIOD_RANGE, MigrationCostAgent, MigrationCostConfig, TargetLoadAgent,
                                      TargetLoadConfig, _knob_range, _set_fields, check_config)

__all__ = ["LearningConfig", "LearningEAS", "split_learning_knobs", "LEARNING_PREFIX", "STATE_VERSION", "INITIALS"]

LEARNING_PREFIX = "learning."
STATE_VERSION = 1
MAX_PER_CLUSTER_KNOBS = 4  # schedutil.target_load.cluster0..3 in the engine
# the switches and flags of --set learning.*, as written
_ON, _OFF = ("on", "1", "1.0", "true", "yes"), ("off", "0", "0.0", "false", "no")
_OPTIONS = ("learning.target_load, learning.migration_cost, learning.apply, learning.initial, learning.state, "
            "learning.record, learning.keep_record, learning.restore_knobs, learning.record_weights_every_ms, "
            "learning.tl.FIELD or learning.mc.FIELD")
#: where the networks start when no learning.state is restored: the weights of the platform's
#: power consumption test (paper §III.D; hetsched.learning.power_test), or a fresh seeded network
INITIALS = ("power-test", "fresh")


@dataclass
class LearningConfig:
    """Which agents run, their constants, and where state and record go."""

    target_load: TargetLoadConfig | None = field(default_factory=TargetLoadConfig)
    migration_cost: MigrationCostConfig | None = field(default_factory=MigrationCostConfig)
    state_path: str | None = None     # weights restored from / saved to (JSON)
    record_path: str | None = None    # the record: .csv (scalars) or .json (scalars + weights)
    keep_record: bool = False         # keep the record in memory without a file (record, weights, dataframe())
    record_weights_every_ms: float = 10_000.0  # full weights into the record this often
    restore_knobs: bool = False       # also restore TARGET_LOAD / the cost (the paper: weights only)
    # False: the observing mode of paper Table 3 ("Learning EAS without changing TARGET_LOAD and
    # sched_migration_cost"): the agents run and train, the knobs keep the kernel's values
    apply: bool = True
    # the networks' start without a learning.state to restore: "power-test" (the platform's
    # shipped power consumption test, paper §III.D; fresh where the platform has none) or "fresh"
    initial: str = "power-test"

    @classmethod
    def from_knobs(cls, opts: Mapping[str, Any], source: str = "--set") -> "LearningConfig":
        """From ``--set learning.KEY=VALUE`` (``KEY`` without the prefix):
        ``target_load=off|on``, ``migration_cost=off|on``, ``state=PATH``, ``record=PATH``,
        ``keep_record=1``, ``restore_knobs=1``, ``record_weights_every_ms=MS``, ``apply=0|1``,
        ``initial=power-test|fresh``,
        ``tl.FIELD=V`` (a :class:`TargetLoadConfig` field), ``mc.FIELD=V`` (a
        :class:`MigrationCostConfig` field). Every value is checked here, before a run
        (agents.TARGET_LOAD_RANGES, MIGRATION_COST_RANGES), whether its agent is on or not;
        the switches are read first, so their place among the options does not matter."""
        cfg = cls()
        # an agent switched off keeps its configuration aside: its fields are still checked
        agents = {"target_load": TargetLoadConfig(), "migration_cost": MigrationCostConfig()}
        on = {"target_load": True, "migration_cost": True}
        for key in ("target_load", "migration_cost"):
            if key in opts:
                on[key] = _flag(opts[key], source, f"{LEARNING_PREFIX}{key}", "on or off")
        for key, raw in opts.items():
            src = f"{LEARNING_PREFIX}{key}"
            v = raw.strip() if isinstance(raw, str) else raw
            if key in ("target_load", "migration_cost"):
                continue
            elif key in ("state", "record"):
                if v is not None and not isinstance(v, (str, os.PathLike)):
                    raise InputError(source, src, "a file path", got=raw)
                setattr(cfg, f"{key}_path", str(v) if v else None)
            elif key in ("restore_knobs", "keep_record", "apply"):
                setattr(cfg, key, _flag(v, source, src, "1 or 0 (on or off)"))
            elif key == "initial":
                if v not in INITIALS:
                    raise InputError(source, src, " or ".join(INITIALS), got=raw)
                cfg.initial = v
            elif key == "record_weights_every_ms":
                cfg.record_weights_every_ms = _input.number(v, source, src, PERIOD_RANGE)
            elif key.startswith(("tl.", "mc.")):
                sub = agents["target_load" if key.startswith("tl.") else "migration_cost"]
                try:
                    _set_fields(sub, {key[3:]: v}, source, f"{LEARNING_PREFIX}{key[:3]}")
                except KeyError:
                    names = ", ".join(f"{key[:3]}{f}" for f in asdict(sub))
                    raise InputError(source, src, f"one of {names}", got=key) from None
            else:
                raise InputError(source, src, _OPTIONS, got=key)
        for key, sub in agents.items():
            prefix = f"{LEARNING_PREFIX}{'tl' if key == 'target_load' else 'mc'}."
            check_config(sub, source, prefix)
            setattr(cfg, key, sub if on[key] else None)
        return cfg

    def check(self, source: str = "LearningConfig") -> None:
        """Every field in its range (agents.TARGET_LOAD_RANGES, MIGRATION_COST_RANGES), for
        a configuration built in Python; errors name ``target_load.FIELD`` and so on."""
        if self.target_load is not None:
            check_config(self.target_load, source, "target_load.")
        if self.migration_cost is not None:
            check_config(self.migration_cost, source, "migration_cost.")
        _input.number(self.record_weights_every_ms, source, "record_weights_every_ms", PERIOD_RANGE)
        if not isinstance(self.apply, (bool, int)) or self.apply not in (True, False):
            raise InputError(source, "apply", "True or False (1 or 0)", got=self.apply)
        if self.initial not in INITIALS:
            raise InputError(source, "initial", " or ".join(repr(i) for i in INITIALS), got=self.initial)
        for name in ("state_path", "record_path"):
            v = getattr(self, name)
            if v is not None and not isinstance(v, (str, os.PathLike)):
                raise InputError(source, name, "a file path or None", got=v)


def _flag(value: Any, source: str, field_: str, expected: str) -> bool:
    """An on/off option: on, 1, true, yes or off, 0, false, no (any case)."""
    v = str(value).strip().lower()
    if v not in _ON + _OFF:
        raise InputError(source, field_, expected, got=value)
    return v in _ON


def split_learning_knobs(knobs: Mapping[str, Any]) -> tuple[dict, dict]:
    """(learning options without the prefix, the other knobs)."""
    learn = {k[len(LEARNING_PREFIX):]: v for k, v in knobs.items() if k.startswith(LEARNING_PREFIX)}
    rest = {k: v for k, v in knobs.items() if not k.startswith(LEARNING_PREFIX)}
    return learn, rest


class LearningEAS:
    """The controller. ``sim`` is a Simulation built with scheduler ``eas`` (or
    ``learning-eas``, which builds this itself). Use :meth:`run_until` instead of the
    simulation's own, or ``Simulation(scheduler="learning-eas")`` which routes there."""

    @classmethod
    def from_options(cls, sim, options: Mapping[str, Any]) -> "LearningEAS":
        """The controller of ``Simulation(scheduler="learning-eas")``: ``options`` are its
        ``--set learning.*`` entries, with their prefix."""
        learn, _ = split_learning_knobs(options)
        ctl = cls(sim, LearningConfig.from_knobs(learn), source="--set")
        # the simulation owns this controller: a strong reference back would make a cycle,
        # which the garbage collector may then free on another thread (the runner's
        # background import), where the engine, bound to its thread, cannot be dropped
        ctl.sim = weakref.proxy(sim)
        return ctl

    def add_to_result(self, doc: dict) -> None:
        """With every result: the weights (and the record) are saved, and the learning
        summary goes under ``learning``."""
        self.save()
        self.write_record()
        doc["learning"] = self.summary()

    def __init__(self, sim, config: LearningConfig | None = None, source: str = "LearningConfig"):
        """``source`` names where ``config`` came from in error messages: ``"--set"`` (its
        fields are then ``learning.state``, ...), else the config's own field names."""
        self.sim = sim
        self.config = config or LearningConfig()
        self.config.check(source)
        opt = source == "--set"
        state_field = "learning.state" if opt else "state_path"
        record_field = "learning.record" if opt else "record_path"
        cfg = self.config
        # the state and the record are written after the run: a path that cannot be written
        # would lose the run, so it is refused now
        if cfg.state_path:
            _input.writable_file(cfg.state_path, source, state_field, "Learning EAS state file")
        if cfg.record_path:
            _input.writable_file(cfg.record_path, source, record_field, "Learning EAS record file")
        obs = sim.observe()
        clusters: dict[str, list[int]] = {}
        for c in obs["cpus"]:
            clusters.setdefault(c["cluster"], []).append(c["cpu"])
        self.clusters = clusters
        self.tl_agents: list[TargetLoadAgent] = []
        if cfg.target_load is not None:
            if len(clusters) > MAX_PER_CLUSTER_KNOBS:
                raise InputError("--scheduler", "learning-eas",
                                 f"a platform of at most {MAX_PER_CLUSTER_KNOBS} clusters", got=len(clusters))
            for i, (name, cpus) in enumerate(clusters.items()):
                cap = obs["cpus"][cpus[0]]["capacity_orig"]
                self.tl_agents.append(TargetLoadAgent(name, cpus, f"schedutil.target_load.cluster{i}",
                                                      cfg.target_load, index=i, capacity_orig=cap, apply=cfg.apply))
        self.mc_agent = (MigrationCostAgent(clusters, cfg.migration_cost, apply=cfg.apply)
                         if cfg.migration_cost is not None else None)
        if not cfg.apply:
            # observing: the agents report the values the kernel keeps (a per-cluster
            # TARGET_LOAD of 0 is the engine's "use the global schedutil.target_load")
            kv = sim.knob_values()
            for i, a in enumerate(self.tl_agents):
                a.target_load = kv.get(f"schedutil.target_load.cluster{i}") or kv["schedutil.target_load"]
            if self.mc_agent:
                self.mc_agent.cost = kv[self.mc_agent.knob]
        # where the networks start: a state the user gives wins (the paper's restore at
        # boot); else the platform's power consumption test, or a fresh network
        self.restored = False
        self.initial, self.initial_state, self.initial_note = "fresh", None, None
        if cfg.state_path and os.path.exists(cfg.state_path):
            self.load(cfg.state_path, field=state_field)
            self.restored = True
            self.initial = "state"
        elif cfg.initial == "power-test" and (self.tl_agents or self.mc_agent):
            self._load_power_test(sim)
        # the record (a row per agent step, the weights every record_weights_every_ms) grows
        # with the run: kept only when asked for, by a file or keep_record; the result
        # itself needs only the step counts
        self.keeps_record = bool(cfg.record_path) or cfg.keep_record
        self.record: list[dict] = []
        self.weights: list[dict] = []
        self.steps = {"target_load": 0, "migration_cost": 0}
        t0 = sim.now_ns
        self._next_tl = t0 if self.tl_agents else None
        self._next_sample = t0 + self._ns(cfg.migration_cost.sample_ms) if self.mc_agent else None
        self._next_mc = t0 + self._ns(cfg.migration_cost.period_ms) if self.mc_agent else None
        self._next_w = t0
        if self.mc_agent:
            self.mc_agent.start(obs)
        # the starting knob values (TARGET_LOAD 0.8, 500000 ns unless configured); observing,
        # no knob is written
        if cfg.apply:
            for a in self.tl_agents:
                self._set(a.knob, a.target_load)
            if self.mc_agent:
                self._set(self.mc_agent.knob, self.mc_agent.cost)

    def _load_power_test(self, sim) -> None:
        """The networks of the platform's power consumption test (paper §III.D: "Learning
        EAS sets d^pi and f_w to fixed values obtained by the power consumption test"),
        shipped as hetsched/learning/data/power-test-PLATFORM.json; a fresh network, with
        the reason in ``initial_note``, where the platform has none or it does not fit."""
        from hetsched.learning import power_test

        path, why = power_test.shipped_state(sim.platform)
        if path is None:
            self.initial_note = f"{why}: fresh network"
            return
        meta = power_test.metadata(path)
        tl_input = meta.get("tl_input", "util")
        if self.tl_agents and self.config.target_load.input != tl_input:
            self.initial_note = (f"{path.name} was trained on the {tl_input!r} reading, this run reads "
                                 f"{self.config.target_load.input!r}: fresh network")
            return
        try:
            self.load(path, field="power test", restore_knobs=False)
        except InputError as e:
            self.initial_note = f"{path.name} does not fit this platform ({e}): fresh network"
            return
        self.initial, self.initial_state = "power-test", path.name
        kernel = meta.get("kernel")
        if kernel and kernel != getattr(sim, "kernel", kernel):
            self.initial_note = f"{path.name} was made under the {kernel} kernel profile, this run's is {sim.kernel}"

    @staticmethod
    def _ns(ms: float) -> int:
        return int(round(ms * 1e6))

    def _set(self, knob: str, value: float) -> None:
        self.sim.apply_knob(knob, value)

    # -- stepping ---------------------------------------------------------------------
    def _next_event(self) -> int | None:
        ts = [t for t in (self._next_tl, self._next_sample, self._next_mc) if t is not None]
        return min(ts) if ts else None

    def _act(self, now: int) -> None:
        obs = None
        t_s = now / 1e9
        if self._next_sample is not None and now >= self._next_sample:
            obs = obs or self.sim.observe()
            self.mc_agent.sample(obs)
            self._next_sample += self._ns(self.config.migration_cost.sample_ms)
        if self._next_mc is not None and now >= self._next_mc:
            obs = obs or self.sim.observe()
            row = self.mc_agent.step(obs, self.keeps_record)
            if self.config.apply:
                self._set(self.mc_agent.knob, self.mc_agent.cost)
            self._log(t_s, row)
            self._next_mc += self._ns(self.config.migration_cost.period_ms)
        if self._next_tl is not None and now >= self._next_tl:
            obs = obs or self.sim.observe()
            for a in self.tl_agents:
                row = a.step(obs, self.keeps_record)
                if self.config.apply:
                    self._set(a.knob, a.target_load)
                self._log(t_s, row)
            self._next_tl += self._ns(self.config.target_load.period_ms)
        if now >= self._next_w:
            if self.keeps_record:
                self.weights.append({"t_s": t_s, **self.state()})
            self._next_w += self._ns(self.config.record_weights_every_ms)

    def _log(self, t_s: float, row: dict) -> None:
        self.steps[row["agent"]] += 1
        if self.keeps_record:
            self.record.append({"t_s": t_s, **row})

    def run_until(self, t_ns: int, engine_step: Callable[[int], Any] | None = None) -> Any:
        """Advance to ``t_ns``, acting at every agent time on the way. ``engine_step(t)``
        advances the engine (default: ``Simulation.step_engine``); a truthy return ends the
        loop early (used for run_until_exited) and is returned."""
        step = engine_step or self.sim.step_engine
        while True:
            nxt = self._next_event()
            if nxt is not None and nxt <= self.sim.now_ns:
                self._act(self.sim.now_ns)
                continue
            target = t_ns if nxt is None else min(nxt, t_ns)
            r = step(target)
            if r:
                return r
            if self.sim.now_ns >= t_ns:
                return r
            if self.sim.now_ns < target:
                return r  # the engine stopped early (nothing more to run, or a deadlock)

    # -- state ------------------------------------------------------------------------
    def state(self) -> dict:
        return {
            "version": STATE_VERSION,
            "platform": getattr(self.sim.platform, "name", ""),
            "target_load": {a.cluster: {"net": a.net.state(), "target_load": a.target_load}
                            for a in self.tl_agents},
            "migration_cost": ({"net": self.mc_agent.net.state(), "cost_ns": self.mc_agent.cost}
                               if self.mc_agent else None),
        }

    def save(self, path: str | os.PathLike | None = None) -> Path | None:
        """Write the weights (and the current knob values, for information) as JSON."""
        path = path or self.config.state_path
        if not path:
            return None
        # checked writable at the start; the disk may have filled since: all or nothing
        # (hetsched.outputs), in a directory of the user's
        p = Path(path)
        with OutputSet(p.parent, option="learning.state", clean=p.name) as outs:
            outs.write(p.name, json.dumps(self.state()) + "\n")
            outs.commit()
        return p

    def load(self, path: str | os.PathLike, field: str = "learning.state",
             restore_knobs: bool | None = None) -> None:
        """Restore the synapses (not the knob values: the paper restores the weights as the
        initial synapses, TARGET_LOAD and the cost start from their defaults). The whole
        file is checked before any network changes; an error names the file and the field
        (``target_load.big.net.w1``). ``restore_knobs``: also the knob values (None: as
        the config's ``restore_knobs`` says; never in the observing mode, which writes no knob)."""
        src = str(path)
        st = _input.load_json(path, src, "Learning EAS state file")
        if not isinstance(st, dict):
            raise InputError(src, "(top level)", f"a Learning EAS state (a JSON object, as {field} writes)",
                             got=type(st).__name__)
        if st.get("version") != STATE_VERSION:
            raise InputError(src, "version", str(STATE_VERSION), got=st.get("version"))
        tl = st.get("target_load") or {}
        if not isinstance(tl, dict):
            raise InputError(src, "target_load", "an object: cluster name -> {net, target_load}", got=tl)
        restore = (self.config.restore_knobs if restore_knobs is None else restore_knobs) and bool(self.config.apply)
        loads: list[tuple[Any, dict]] = []
        knobs: list[tuple[Any, str, float]] = []
        for a in self.tl_agents:
            if a.cluster not in tl:
                continue
            where = f"target_load.{a.cluster}"
            entry = _obj(tl[a.cluster], src, where)
            loads.append((a.net, _net_state(entry.get("net"), src, f"{where}.net", a.net)))
            if restore:
                knobs.append((a, "target_load", _input.number(entry.get("target_load"), src, f"{where}.target_load",
                                                              _knob_range(a.knob))))
        mc = st.get("migration_cost")
        if self.mc_agent and mc:
            entry = _obj(mc, src, "migration_cost")
            loads.append((self.mc_agent.net, _net_state(entry.get("net"), src, "migration_cost.net",
                                                        self.mc_agent.net)))
            if restore:
                knobs.append((self.mc_agent, "cost", _input.number(entry.get("cost_ns"), src, "migration_cost.cost_ns",
                                                                   _knob_range(self.mc_agent.knob))))
        for net, state in loads:
            net.load_state(state)
        for agent, attr, value in knobs:
            setattr(agent, attr, value)

    # -- the record -------------------------------------------------------------------
    def summary(self) -> dict:
        return {
            "target_load": {a.cluster: a.target_load for a in self.tl_agents},
            "migration_cost_ns": self.mc_agent.cost if self.mc_agent else None,
            "target_load_steps": self.steps["target_load"],
            "migration_cost_steps": self.steps["migration_cost"],
            "restored": self.restored,
            "state_path": self.config.state_path,
            # False: the observing mode (the knobs above are the kernel's, unchanged)
            "apply": bool(self.config.apply),
            # where the networks started: "state" (learning.state), "power-test" or "fresh"
            "initial": self.initial,
            "initial_state": self.initial_state,
            "initial_note": self.initial_note,
        }

    def write_record(self, path: str | os.PathLike | None = None) -> Path | None:
        path = path or self.config.record_path
        if not path:
            return None
        if not self.keeps_record:
            raise InputError("write_record()", "learning.record", "a record kept from the start of the run "
                             "(learning.record=PATH or learning.keep_record=1)", got=str(path))
        p = Path(path)
        if p.suffix == ".json":
            text = json.dumps({"steps": self.record, "weights": self.weights}) + "\n"
        else:
            cols = ["t_s", "agent", "cluster", "value", "action", "output", "error", "w_norm",
                    "mig_count", "mig_success", "total_vari", "cur_error"]
            buf = io.StringIO(newline="")
            w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore")
            w.writeheader()
            w.writerows(self.record)
            text = buf.getvalue()
        # checked writable at the start; the disk may have filled since: all or nothing
        with OutputSet(p.parent, option="learning.record", clean=p.name) as outs:
            outs.write(p.name, text)
            outs.commit()
        return p

    def dataframe(self):
        """The record (kept with ``learning.record`` or ``learning.keep_record``)."""
        import pandas as pd

        return pd.DataFrame(self.record)


def _obj(v: Any, source: str, field_: str) -> dict:
    if not isinstance(v, dict):
        raise InputError(source, field_, "a JSON object", got=_input.Shown("null") if v is None else v)
    return v


def _net_state(st: Any, source: str, field_: str, net: Any) -> dict:
    """A stored network (PolicyNetwork.state()) checked against ``net``'s shape: the
    weights finite numbers, each array of the shape ``net`` has."""
    import numpy as np

    st = _obj(st, source, field_)
    shape = f"a {net.n_in}-input, {net.n_hidden}-hidden network (this platform's)"
    for key, want in (("n_in", net.n_in), ("n_hidden", net.n_hidden)):
        if st.get(key) != want:
            raise InputError(source, f"{field_}.{key}", f"{want}: {shape}", got=st.get(key))
    out = dict(st)
    for key, dims in (("w1", (net.n_hidden, net.n_in)), ("b1", (net.n_hidden,)), ("w2", (net.n_hidden,)),
                      ("b2", ())):
        try:
            arr = np.asarray(st.get(key), dtype=float)
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.shape != dims or not np.isfinite(arr).all():
            what = "a finite number" if not dims else f"finite numbers in shape {list(dims)}"
            raise InputError(source, f"{field_}.{key}", f"{what}: {shape}", got=_input.Shown(
                "not numbers" if arr is None else f"shape {list(arr.shape)}" if arr.shape != dims
                else "a NaN or infinite weight"))
        out[key] = arr.tolist()
    return out
