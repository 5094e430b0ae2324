"""The kernel's integer arithmetic for CPU capacity and the Energy Model.

Everything here is a pure function on integers, reproducing the truncation of the C code
so that the simulator sees the same numbers a kernel would compute for the same data.
References: data/SOURCES.md ("The Energy Model formula and units (exact)") and
/work/shared/reference/linux-eas.md §2 (capacity) and §4 (Energy Model, v6.12).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

__all__ = [
    "SCHED_CAPACITY_SHIFT",
    "SCHED_CAPACITY_SCALE",
    "EM_MAX_POWER_UW",
    "normalized_capacities",
    "dt_power_uw",
    "em_performance",
    "EmState",
    "em_compute_costs",
]

SCHED_CAPACITY_SHIFT = 10
SCHED_CAPACITY_SCALE = 1 << SCHED_CAPACITY_SHIFT

#: include/linux/energy_model.h: EM_MAX_POWER, 64 W in µW.  em_create_perf_table()
#: rejects a power of 0 or above this value (SOURCES.md, "Energy Model formula").
EM_MAX_POWER_UW = 64_000_000


def normalized_capacities(raw: Sequence[tuple[int, int]]) -> list[int]:
    """``arch_scale_cpu_capacity`` for each ``(capacity_dmips_mhz, f_max_khz)`` pair.

    drivers/base/arch_topology.c ``topology_normalize_cpu_scale()`` (linux-eas.md §2):
    ``capacity = (dmips_mhz * f_ref << 10) / max_over_cpus(dmips_mhz * f_ref)`` with
    ``f_ref = cpuinfo.max_freq`` in kHz, a truncating 64-bit division.  The maximum is
    taken over *CPUs*, but every CPU of a cluster has the same pair, so passing one pair
    per cluster gives the same result.
    """
    products = [dmips * fmax for dmips, fmax in raw]
    scale = max(max(products, default=1), 1)
    return [(p << SCHED_CAPACITY_SHIFT) // scale for p in products]


def dt_power_uw(dpc: int, uv: int, khz: int) -> int:
    """Active power of one CPU at an OPP, µW, as ``drivers/opp/of.c`` ``_get_power()``.

    SOURCES.md quotes the kernel arithmetic::

        mV  = uV / 1000
        tmp = cap * mV * mV * (Hz / 1000000)
        tmp = tmp / 1000000          # micro-Watts since v5.19

    Each division truncates.  ``Hz = kHz * 1000`` (the OPP rate), so ``Hz / 1000000`` is
    ``kHz // 1000``: a 403.2 MHz OPP counts as 403 MHz, exactly like the kernel.
    """
    mv = uv // 1000
    mhz = (khz * 1000) // 1_000_000
    return (dpc * mv * mv * mhz) // 1_000_000


def em_performance(capacity_orig: int, khz: int, fmax_khz: int) -> int:
    """``em_init_performance()`` (v6.12): ``perf = cap_orig * f / f_max``, truncated."""
    return (capacity_orig * khz) // fmax_khz


@dataclass(frozen=True)
class EmState:
    """One row of the kernel's ``em_perf_state`` table, as the engine's EM sees it."""

    cost: int
    inefficient: bool


def em_compute_costs(power_uw: Sequence[int], performance: Sequence[int]) -> list[EmState]:
    """``em_compute_costs()`` of kernel/power/energy_model.c, v6.12 (linux-eas.md §4).

    ``cost = power * 10 / performance`` (integer; the ×10 is the kernel's "increase
    resolution" factor).  Walking from the highest state down, with ``prev_cost``
    starting at ULONG_MAX, a state whose cost is ``>= prev_cost`` is flagged
    ``EM_PERF_STATE_INEFFICIENT``; otherwise it becomes the new ``prev_cost``.  Because
    ``prev_cost`` only ever decreases, it is the minimum cost of all higher states, so a
    state is inefficient iff a higher state is at least as cheap per unit of work.
    """
    if len(power_uw) != len(performance):
        raise ValueError("power and performance tables differ in length")
    out: list[EmState] = [EmState(0, False)] * len(power_uw)
    prev_cost: int | None = None  # None plays ULONG_MAX
    for i in range(len(power_uw) - 1, -1, -1):
        if performance[i] <= 0:
            raise ValueError(f"state {i}: performance must be positive, got {performance[i]}")
        cost = (power_uw[i] * 10) // performance[i]
        inefficient = prev_cost is not None and cost >= prev_cost
        if not inefficient:
            prev_cost = cost
        out[i] = EmState(cost, inefficient)
    return out
