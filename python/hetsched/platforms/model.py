"""The resolved platform: immutable records in engine units (ns, kHz, µW).

A :class:`Platform` is what :func:`hetsched.platforms.load_platform` returns.  It keeps the
derived kernel quantities (``perf``, ``cost``, inefficiency) next to the inputs so that
reports and tests can show them, and it turns itself into the engine's ``PlatformSpec``
(docs/engine-interface.md) with :meth:`Platform.to_spec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

__all__ = ["Opp", "IdleState", "Cluster", "Platform", "PowerModel", "Inventory", "DeviceInit"]

PowerModel = Literal["published", "dt", "estimated"]


@dataclass(frozen=True)
class Opp:
    """One simulated operating point of a cluster."""

    khz: int
    #: voltage the power was computed from (µV); None when the power is published and
    #: the voltage is not (Qualcomm parts)
    uv: Optional[int]
    #: active power of ONE CPU busy at this OPP, µW
    power_uw: int
    #: extra power of the cluster while any of its CPUs runs at this OPP (published
    #: legacy tables only), µW
    cluster_power_uw: int
    #: em_perf_state.performance = capacity_orig * khz // fmax
    perf: int
    #: em_perf_state.cost = 10 * power_uw // perf (kernel v6.12)
    cost: int
    #: EM_PERF_STATE_INEFFICIENT: a higher OPP is at least as cheap per unit of work
    inefficient: bool


@dataclass(frozen=True)
class IdleState:
    name: str
    level: Literal["cpu", "cluster"]
    exit_latency_ns: int
    target_residency_ns: int
    #: per-CPU power in this state, µW (0 when unpublished; the notes say so)
    power_uw: int
    #: power of the whole cluster while every CPU is idle and the shallowest state is this one
    cluster_power_uw: int
    #: wakeup -> the woken task running, for a CPU woken in this state, as real phones of
    #: the SoC were measured to take (traces' median); None: exit_latency_ns is paid
    measured_wakeup_ns: Optional[int] = None


@dataclass(frozen=True)
class Cluster:
    name: str
    core: str
    cpus: tuple[int, ...]
    capacity_dmips_mhz: int
    #: arch_scale_cpu_capacity (arch_topology.c normalisation, biggest CPU = 1024)
    capacity_orig: int
    #: dynamic-power-coefficient used by the DT formula (None for published tables);
    #: borrowed from another SoC when ``power_source == "estimated"`` says so
    dynamic_power_coefficient: Optional[int]
    #: where the OPP power comes from: "published" (em_table), "dt" (kernel formula on
    #: published inputs) or "estimated" (kernel formula on an input from estimates.py)
    power_source: PowerModel
    opps: tuple[Opp, ...]
    idle_states: tuple[IdleState, ...]
    #: a measured context-switch cost on this cluster at f_max, ns (the host platform
    #: measures its own); None: the engine's cost.context_switch_ns default
    context_switch_ns: Optional[int] = None

    @property
    def fmax_khz(self) -> int:
        return self.opps[-1].khz

    def to_spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cpus": list(self.cpus),
            "capacity_orig": self.capacity_orig,
            "opps": [
                {"khz": o.khz, "power_uw": o.power_uw, "cluster_power_uw": o.cluster_power_uw}
                for o in self.opps
            ],
            "idle_states": [
                {
                    "name": s.name,
                    "level": s.level,
                    "exit_latency_ns": s.exit_latency_ns,
                    "target_residency_ns": s.target_residency_ns,
                    "power_uw": s.power_uw,
                    "cluster_power_uw": s.cluster_power_uw,
                    **({"measured_wakeup_ns": s.measured_wakeup_ns} if s.measured_wakeup_ns is not None else {}),
                }
                for s in self.idle_states
            ],
            **({"context_switch_ns": self.context_switch_ns} if self.context_switch_ns is not None else {}),
        }


@dataclass(frozen=True)
class Inventory:
    """What the platform file publishes, what the loader estimated, what is missing.

    Human phrases (``"OPP voltages"``, ``"idle power"``), for ``hetsched platforms``.
    """

    published: tuple[str, ...] = ()
    estimated: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeviceInit:
    """What a device's init scripts write at boot, as engine knobs, applied before the
    user's knobs when the run's kernel profile is the one the device ran."""
    kernel: str
    #: where the values come from (the script, its lines)
    source: str
    #: (knob, value) in the scripts' order
    knobs: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Platform:
    #: built-in name (file stem) or the stem of a user file
    name: str
    soc: str
    #: the JSON's human "name"
    description: str
    power_model: PowerModel
    clusters: tuple[Cluster, ...]
    #: human sentences: what is published, estimated, dropped or counted as 0
    notes: tuple[str, ...]
    #: the JSON's "source" list, verbatim
    sources: tuple[dict[str, Any], ...]
    #: the file it was read from
    path: str
    inventory: Inventory = field(default_factory=Inventory)
    #: the JSON's own free-text "notes", verbatim
    data_notes: str = ""
    #: big.LITTLE switcher in CPU mode (``NAME:switcher``, platforms/switcher.py)
    switcher: bool = False
    #: groups of cluster indices whose cluster-level idle states are one power domain
    #: (a DynamIQ DSU: the state holds only while every CPU of every cluster in the group
    #: is idle); a cluster in no group is a domain of its own
    idle_domains: tuple[tuple[int, ...], ...] = ()
    #: where the idle-state power comes from: "published" (the file's states or a legacy
    #: idle-cost-data table), "estimated" (idle_power.py's leakage model, notes say
    #: ESTIMATED), "none" (some state counted as 0: a user file that gives none)
    idle_power_model: str = "none"
    #: every CPU shares the last-level cache (a DynamIQ DSU's L3): the balancing domain over
    #: all clusters carries SD_SHARE_LLC
    shared_llc: bool = False
    #: what the device's init scripts write at boot (the file's ``device_init``)
    device_init: Optional["DeviceInit"] = None

    @property
    def nr_cpus(self) -> int:
        return sum(len(c.cpus) for c in self.clusters)

    def to_spec(self) -> dict[str, Any]:
        """The engine's ``PlatformSpec`` (docs/engine-interface.md), plain JSON types."""
        return {
            "name": self.name,
            "power_model": self.power_model,
            "clusters": [c.to_spec() for c in self.clusters],
            **({"switcher": True} if self.switcher else {}),
            **({"idle_domains": [list(d) for d in self.idle_domains]} if self.idle_domains else {}),
            **({"shared_llc": True} if self.shared_llc else {}),
            **({"device_init": {"kernel": self.device_init.kernel, "knobs": [list(kv) for kv in self.device_init.knobs]}}
               if self.device_init else {}),
        }

    def summary(self) -> dict[str, Any]:
        """One row of ``hetsched platforms``."""
        return _summary_row(
            name=self.name,
            soc=self.soc,
            description=self.description,
            cluster_shapes=[(len(c.cpus), c.core) for c in self.clusters],
            power_model=self.power_model,
            idle_power_model=self.idle_power_model,
            inventory=self.inventory,
            runnable=True,
            reason=None,
        )


def _summary_row(
    *,
    name: str,
    soc: str,
    description: str,
    cluster_shapes: list[tuple[int, str]],
    power_model: Optional[str],
    inventory: Inventory,
    idle_power_model: Optional[str] = None,
    runnable: bool,
    reason: Optional[str],
) -> dict[str, Any]:
    return {
        "name": name,
        "soc": soc,
        "description": description,
        "cpus": "+".join(str(n) for n, _ in cluster_shapes),
        "cores": " + ".join(f"{n}x {core}" for n, core in cluster_shapes),
        "power_model": power_model,
        "idle_power_model": idle_power_model,
        "published": list(inventory.published),
        "estimated": list(inventory.estimated),
        "missing": list(inventory.missing),
        "runnable": runnable,
        "reason": reason,
    }
