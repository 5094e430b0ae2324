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
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from hetsched.errors import InputError
from hetsched.learning.agents import (TL_INPUTS, MigrationCostAgent, MigrationCostConfig, TargetLoadAgent,
                                      TargetLoadConfig, _set_fields)

__all__ = ["LearningConfig", "LearningEAS", "split_learning_knobs", "LEARNING_PREFIX", "STATE_VERSION"]

LEARNING_PREFIX = "learning."
STATE_VERSION = 1
MAX_PER_CLUSTER_KNOBS = 4  # schedutil.target_load.cluster0..3 in the engine


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

    @classmethod
    def from_knobs(cls, opts: Mapping[str, Any]) -> "LearningConfig":
        """From ``--set learning.KEY=VALUE`` (``KEY`` without the prefix):
        ``target_load=off|on``, ``migration_cost=off|on``, ``state=PATH``, ``record=PATH``,
        ``keep_record=1``, ``tl.FIELD=V`` (a :class:`TargetLoadConfig` field), ``mc.FIELD=V`` (a
        :class:`MigrationCostConfig` field)."""
        cfg = cls()
        for key, raw in opts.items():
            v = str(raw).strip()
            src = f"{LEARNING_PREFIX}{key}"
            if key in ("target_load", "migration_cost"):
                if v.lower() not in ("on", "off", "1", "0"):
                    raise InputError("--set", src, "on or off", got=raw)
                on = v.lower() in ("on", "1")
                setattr(cfg, key, (TargetLoadConfig() if key == "target_load" else MigrationCostConfig())
                        if on else None)
            elif key == "state":
                cfg.state_path = v or None
            elif key == "record":
                cfg.record_path = v or None
            elif key in ("restore_knobs", "keep_record"):
                setattr(cfg, key, v.lower() in ("1", "on", "true", "yes"))
            elif key == "record_weights_every_ms":
                cfg.record_weights_every_ms = float(v)
            elif key.startswith(("tl.", "mc.")):
                sub = cfg.target_load if key.startswith("tl.") else cfg.migration_cost
                if sub is None:
                    continue  # that agent is off
                if key == "tl.input" and v not in TL_INPUTS:
                    raise InputError("--set", src, " or ".join(TL_INPUTS), got=raw)
                try:
                    _set_fields(sub, {key[3:]: v})
                except KeyError:
                    names = ", ".join(f"{key[:3]}{f}" for f in asdict(sub))
                    raise InputError("--set", src, f"one of {names}", got=key) from None
                except ValueError:
                    raise InputError("--set", src, "a number", got=raw) from None
            else:
                raise InputError("--set", src, "learning.target_load, learning.migration_cost, learning.state, "
                                               "learning.record, learning.keep_record, learning.tl.FIELD or "
                                               "learning.mc.FIELD", got=key)
        return cfg


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
        return cls(sim, LearningConfig.from_knobs(learn))

    def add_to_result(self, doc: dict) -> None:
        """With every result: the weights (and the record) are saved, and the learning
        summary goes under ``learning``."""
        self.save()
        self.write_record()
        doc["learning"] = self.summary()

    def __init__(self, sim, config: LearningConfig | None = None):
        self.sim = sim
        self.config = config or LearningConfig()
        obs = sim.observe()
        clusters: dict[str, list[int]] = {}
        for c in obs["cpus"]:
            clusters.setdefault(c["cluster"], []).append(c["cpu"])
        self.clusters = clusters
        cfg = self.config
        self.tl_agents: list[TargetLoadAgent] = []
        if cfg.target_load is not None:
            if len(clusters) > MAX_PER_CLUSTER_KNOBS:
                raise InputError("--scheduler", "learning-eas",
                                 f"a platform of at most {MAX_PER_CLUSTER_KNOBS} clusters", got=len(clusters))
            for i, (name, cpus) in enumerate(clusters.items()):
                cap = obs["cpus"][cpus[0]]["capacity_orig"]
                self.tl_agents.append(TargetLoadAgent(name, cpus, f"schedutil.target_load.cluster{i}",
                                                      cfg.target_load, index=i, capacity_orig=cap))
        self.mc_agent = MigrationCostAgent(clusters, cfg.migration_cost) if cfg.migration_cost is not None else None
        self.restored = False
        if cfg.state_path and os.path.exists(cfg.state_path):
            self.load(cfg.state_path)
            self.restored = True
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
        # the starting knob values (TARGET_LOAD 0.8, 500000 ns unless configured)
        for a in self.tl_agents:
            self._set(a.knob, a.target_load)
        if self.mc_agent:
            self._set(self.mc_agent.knob, self.mc_agent.cost)

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
            self._set(self.mc_agent.knob, self.mc_agent.cost)
            self._log(t_s, row)
            self._next_mc += self._ns(self.config.migration_cost.period_ms)
        if self._next_tl is not None and now >= self._next_tl:
            obs = obs or self.sim.observe()
            for a in self.tl_agents:
                row = a.step(obs, self.keeps_record)
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
            if nxt is not None and self.sim.now_ns < nxt:
                return r  # the engine stopped early (nothing more to run)

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
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
        tmp.write_text(json.dumps(self.state()) + "\n")
        tmp.replace(p)
        return p

    def load(self, path: str | os.PathLike) -> None:
        """Restore the synapses (not the knob values: the paper restores the weights as the
        initial synapses, TARGET_LOAD and the cost start from their defaults)."""
        try:
            st = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise InputError(str(path), "learning.state", "a Learning EAS state file (JSON)", got=str(e)) from None
        if st.get("version") != STATE_VERSION:
            raise InputError(str(path), "version", str(STATE_VERSION), got=st.get("version"))
        try:
            for a in self.tl_agents:
                if a.cluster in (st.get("target_load") or {}):
                    a.net.load_state(st["target_load"][a.cluster]["net"])
                    if self.config.restore_knobs:
                        a.target_load = float(st["target_load"][a.cluster]["target_load"])
            if self.mc_agent and st.get("migration_cost"):
                self.mc_agent.net.load_state(st["migration_cost"]["net"])
                if self.config.restore_knobs:
                    self.mc_agent.cost = float(st["migration_cost"]["cost_ns"])
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(str(path), "learning.state", "networks of this platform's shape", got=str(e)) from None

    # -- the record -------------------------------------------------------------------
    def summary(self) -> dict:
        return {
            "target_load": {a.cluster: a.target_load for a in self.tl_agents},
            "migration_cost_ns": self.mc_agent.cost if self.mc_agent else None,
            "target_load_steps": self.steps["target_load"],
            "migration_cost_steps": self.steps["migration_cost"],
            "restored": self.restored,
            "state_path": self.config.state_path,
        }

    def write_record(self, path: str | os.PathLike | None = None) -> Path | None:
        path = path or self.config.record_path
        if not path:
            return None
        if not self.keeps_record:
            raise InputError("write_record()", "learning.record", "a record kept from the start of the run "
                             "(learning.record=PATH or learning.keep_record=1)", got=str(path))
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix == ".json":
            p.write_text(json.dumps({"steps": self.record, "weights": self.weights}) + "\n")
        else:
            cols = ["t_s", "agent", "cluster", "value", "action", "output", "error", "w_norm",
                    "mig_count", "mig_success", "total_vari", "cur_error"]
            with p.open("w", newline="") as fh:
                w = csv.DictWriter(fh, fieldnames=cols, extrasaction="ignore")
                w.writeheader()
                w.writerows(self.record)
        return p

    def dataframe(self):
        """The record (kept with ``learning.record`` or ``learning.keep_record``)."""
        import pandas as pd

        return pd.DataFrame(self.record)
