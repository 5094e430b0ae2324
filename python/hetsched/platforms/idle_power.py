"""Idle and static power of the built-in platforms: published where a source gives it,
else an ESTIMATE from a stated leakage model.

Three routes, tried in this order for a cluster whose file gives no ``idle_states[].power_mw``
(docs/platforms.md, "Idle power"):

1. **The file's own legacy idle costs** (``em_table_meta.idle_cost_cpu`` /
   ``idle_cost_cluster``, the ``idle-cost-data`` of the cluster's ``sched-energy-costs``
   nodes), on a cluster whose OPP power is the same legacy table (so both are in the same
   bogo-units, µW = value x 1000 as for ``em_table``).  Mapped onto the file's idle states
   by :func:`legacy_entry`.
2. **A transcribed legacy table** (:data:`PUBLISHED_IDLE_COSTS`) for a built-in whose file
   has none, converted into the platform's µW by the ratio of its OPP power to the same
   table's ``busy-cost-data`` at one frequency (:class:`LegacyIdleCosts`).
3. **An ESTIMATE** (:data:`IDLE_ESTIMATES`, built-ins only): WFI draws a fixed fraction
   of the cluster's lowest-OPP busy power, every deeper state 0 (:class:`WfiLeakage`).

A user file gets routes 1 only; nothing is estimated for it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "legacy_entry",
    "LegacyIdleCosts",
    "WfiLeakage",
    "PUBLISHED_IDLE_COSTS",
    "IDLE_ESTIMATES",
    "JUNO_R0_A53_WFI",
    "JUNO_R0_A57_WFI",
]


def legacy_entry(state: int, nr_entries: int) -> int:
    """Index into a legacy ``idle-cost-data`` array for cpuidle state ``state``.

    The legacy kernels read the array straight into ``sched_group_energy.idle_states[]``
    (kernel/sched/energy.c).  Entry 0 stands for "idle but not in any cpuidle state" (the
    arch_cpu_idle() loop, a WFI), so cpuidle state i reads entry i + 1: Juno r0's published
    arrays have four entries for its three cpuidle states and its C table is commented
    exactly so (``[arch_cpu_idle, WFI, cpu-sleep-0, cluster-sleep-0]``).  The Android
    kernels' group_idle_state() adds that one to the shallowest state index (recalled, not
    re-read here; the EAS RFCv5 version instead shifts by the states of lower levels).  A vendor array shorter than
    the state list (sm8150's three entries for three states) leaves the deepest state
    without an entry; it takes the last one, the deepest the vendor costed.
    """
    return min(state + 1, nr_entries - 1)


@dataclass(frozen=True)
class LegacyIdleCosts:
    """One cluster's ``idle-cost-data`` from a DT the data files do not carry.

    ``cpu`` is the per-CPU array (core-cost node), ``cluster`` the cluster-cost node's.
    The values are legacy bogo-units; ``scale_khz`` and ``scale_busy_cost`` are one row of
    the same node's ``busy-cost-data`` (a frequency that is also a simulated OPP: the
    highest such), so that µW = value x P_opp(scale_khz) / scale_busy_cost, integer.
    """

    cpu: tuple[int, ...]
    cluster: tuple[int, ...]
    scale_khz: int
    scale_busy_cost: int
    repo: str
    path: str
    commit: str
    node: str

    def describe(self) -> str:
        return (f"legacy idle-cost-data {list(self.cpu)} (cluster {list(self.cluster)}) of {self.node} in "
                f"{self.repo}:{self.path}@{self.commit[:12]}, converted to µW by the node's "
                f"busy-cost {self.scale_busy_cost} at {self.scale_khz} kHz")


@dataclass(frozen=True)
class WfiLeakage:
    """ESTIMATE: a CPU in WFI is clock-gated but powered, so it draws its leakage.

    Model: P_WFI = P_busy(lowest OPP) x ``num`` / ``den`` (integer µW); every deeper state
    (CPU power-down, rail collapse, cluster power-down) draws 0, as in every published
    legacy table, whose ``cpu-sleep`` entries are 0 (Juno r0, HiKey960, RK3399); no cluster
    term (the platform's OPP power has none, and charging a cluster only while it idles
    would make running cheaper than idling).  ``ref_cluster`` names the cluster whose
    lowest OPP is used when not the cluster itself (a clock-modulated Xeon keeps its
    voltage, so its leakage is that of the unmodulated part).
    """

    num: int
    den: int
    basis: str
    ref_cluster: str | None = None

    def wfi_uw(self, lowest_opp_uw: int) -> int:
        return lowest_opp_uw * self.num // self.den

    def describe(self) -> str:
        return (f"WFI = {self.num}/{self.den} of the lowest OPP's busy power"
                f"{' of cluster ' + repr(self.ref_cluster) if self.ref_cluster else ''}, deeper states 0; "
                f"{self.basis}")


# --- published: transcribed tables ---------------------------------------------------------
# Pixel 4 (coral/flame) msm-4.14 kernel, arch/arm64/boot/dts/qcom/sm8150.dtsi, node
# `energy_costs: energy-costs { compatible = "sched-energy"; ... }` referenced by every
# CPU's `sched-energy-costs = <&CPU_COST_n &CLUSTER_COST_n>` (CPU0-3 -> 0, CPU4-6 -> 1,
# CPU7 -> 2).  idle-cost-data: core-cost0 <18 14 12>, core-cost1 <80 60 40>, core-cost2
# <110 90 70>; cluster-cost0..2 <3 2 1>.  Scale rows (busy-cost-data, the highest frequency
# that is also a simulated sm8150 OPP): core-cost0 768000 -> 47, core-cost1 2016000 -> 807,
# core-cost2 1286400 -> 418.  The cluster arrays are kept for the record but not applied:
# sm8150's OPP power is the DT formula, which has no cluster term.
_CORAL = dict(repo="DespairFactor/coral", path="arch/arm64/boot/dts/qcom/sm8150.dtsi",
              commit="03bce07106ee42edb59e6fd1d878201af74f8d2d")

PUBLISHED_IDLE_COSTS: dict[str, dict[str, LegacyIdleCosts]] = {
    "sm8150": {
        "silver": LegacyIdleCosts((18, 14, 12), (3, 2, 1), 768000, 47, node="core-cost0/cluster-cost0", **_CORAL),
        "gold": LegacyIdleCosts((80, 60, 40), (3, 2, 1), 2016000, 807, node="core-cost1/cluster-cost1", **_CORAL),
        "prime": LegacyIdleCosts((110, 90, 70), (3, 2, 1), 1286400, 418, node="core-cost2/cluster-cost2", **_CORAL),
    },
}

# --- estimates ----------------------------------------------------------------------------------
# The fraction comes from Arm's measured Juno r0 model (juno-r0.json; the EAS-RFC
# juno-sched-energy.dtsi and LISA's juno_energy.py), the only legacy table in the data
# that was measured on silicon: WFI costs 6 against 33 busy at the lowest OPP on the
# Cortex-A53 (in-order little core) and 15 against 168 on the Cortex-A57 (out-of-order big
# core).  In-order little cores (A7, A53, A55 and their Kryo Silver derivatives) take the
# A53 fraction, every other core the A57 one.  Cross-check: over the 13 legacy clusters in
# the data (Juno r0, HiKey960, RK3399, SDM845, SDM670, SM8150) the WFI/lowest-OPP ratio
# spans 0.03 (HiKey960 placeholder) to 0.53 (SM8150 prime), median 0.18.
JUNO_R0_A53_WFI = WfiLeakage(6, 33, "fraction from Arm's measured Juno r0 Cortex-A53 (WFI 6 / busy 33 at 450 MHz)")
JUNO_R0_A57_WFI = WfiLeakage(15, 168, "fraction from Arm's measured Juno r0 Cortex-A57 (WFI 15 / busy 168 at 450 MHz)")

_LITTLE, _BIG = JUNO_R0_A53_WFI, JUNO_R0_A57_WFI
_XEON = WfiLeakage(15, 168, "fraction of Juno r0's out-of-order Cortex-A57 (no idle figure for the "
                   "Northwood Xeon is in the data); HLT keeps the 2.8 GHz part's voltage", ref_cluster=None)

#: platform -> cluster -> estimate (built-ins only)
IDLE_ESTIMATES: dict[str, dict[str, WfiLeakage]] = {
    "exynos5422": {"little": _LITTLE, "big": _BIG},  # A7, A15
    "g12b-s922x": {"little": _LITTLE, "big": _BIG},  # A53, A73
    "gs101": {"little": _LITTLE, "mid": _BIG, "big": _BIG},  # A55, A76, X1
    "juno-r2": {"little": _LITTLE, "big": _BIG},  # A53, A72
    "mt8173": {"little": _LITTLE, "big": _BIG},  # A53, A72
    "mt8183": {"little": _LITTLE, "big": _BIG},  # A53, A73
    "sc7180": {"little": _LITTLE, "big": _BIG},  # Kryo 468 Silver (A55), Gold (A76)
    "sm8250": {"silver": _LITTLE, "gold": _BIG, "prime": _BIG},  # Kryo 585 (A55, A77, A77)
    "hetero-2cpu": {"fast": _XEON, "slow": WfiLeakage(15, 168, _XEON.basis, ref_cluster="fast")},
    "hetero-2cpu-homogeneous": {"cpu0": _XEON, "cpu1": _XEON},
}
