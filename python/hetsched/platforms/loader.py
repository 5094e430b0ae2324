"""Read a platform JSON file (built-in or the user's), validate it, resolve it.

The file format is the one of ``/work/shared/platforms`` (copied into ``data/``, its
README as ``data/SOURCES.md``).  The rules applied here, each from SOURCES.md:

* capacity: arch_topology.c normalisation of ``capacity_dmips_mhz * f_max`` (em.py);
* OPP power: the published ``em_table`` where the cluster has one, else the kernel DT
  formula on ``dynamic_power_coefficient`` and the OPP voltages ("The Energy Model
  formula and units (exact)");
* idle states: ``exit_latency = wakeup-latency-us`` or ``entry + exit``; WFI is state 0
  with 1 µs / 1 µs ("Idle-state latencies");
* idle power: the file's ``idle_states[].power_mw``, else its legacy ``idle-cost-data``
  (``em_table_meta``) mapped onto the states (idle_power.py);
* nothing is invented for a file.  Only built-in platforms listed in estimates.py and
  idle_power.py get their missing EM inputs and idle power from there, and say so.

Every problem is reported as one :class:`~hetsched.errors.InputError` naming the file,
the field (``clusters[1].opps[3].khz``) and what was expected.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, NoReturn, Optional

from .. import _input
from ..errors import InputError, UnknownNameError
from . import em
from .estimates import BorrowedDpc, DerivedDpc, VoltageLine, estimate_for
from .idle_power import IDLE_ESTIMATES, PUBLISHED_IDLE_COSTS, legacy_entry
from .model import Cluster, DeviceInit, IdleState, Inventory, Opp, Platform, PowerModel, _summary_row

__all__ = ["DATA_DIR", "list_platforms", "load_platform", "platform_summary", "platform_summaries"]

DATA_DIR = Path(__file__).resolve().parent / "data"

#: The engine's limit (crates/hetsched-core/src/platform.rs), checked here for a clearer message.
MAX_CPUS = 64

#: The largest integer a device-tree cell holds (a u32). Every integer of a platform file
#: is one in the DT it was read from: OPP kHz (cpufreq keeps kHz in an unsigned int),
#: opp-microvolt, capacity-dmips-mhz, dynamic-power-coefficient and the idle states'
#: latencies in µs (arm,idle-state). Bounding them here keeps every derived engine field
#: (latencies x 1000 in ns, µW) far inside the engine's u64, and its arithmetic on them
#: (capacity x kHz, power x time) from overflowing.
DT_U32_MAX = 2**32 - 1

#: cpuidle-psci.c / ARM_CPUIDLE_WFI_STATE: the driver's own state 0 (SOURCES.md,
#: "Idle-state latencies"): exit latency 1 µs, target residency 1 µs.
WFI_LATENCY_NS = 1000

#: ``name:variant`` is reserved syntax (e.g. a later ``exynos5422:switcher``).  Map a
#: platform name to the variants it supports; none are defined yet.
VARIANTS: dict[str, tuple[str, ...]] = {}

QCOM_DPC_CAVEAT = (
    "Qualcomm dynamic-power-coefficient values are scaled, not in µW/MHz/V² (SOURCES.md "
    "caveat 1): only the ratios between clusters are meaningful, absolute power is unverified"
)

#: Facts about individual built-in files that the generic notes cannot derive.  Each
#: restates a caveat of data/SOURCES.md or of the file's own "notes".
BUILTIN_CAVEATS: dict[str, tuple[str, ...]] = {
    "juno-r0": (
        "em_table and idle power are Arm's measured legacy EAS model for Juno r0 (bogo-units, "
        "mW-scale); its 'cap' column is not used, capacities come from capacity-dmips-mhz",
    ),
    "juno-r2": (
        "logical CPU numbering (little = 0,3,4,5) is inferred from Juno r0, not from a published r2 log",
    ),
    "hikey960": (
        "the published energy table is a placeholder 'calculated based on Pixel OPP', "
        "not measured on HiKey960 (SOURCES.md caveat 5)",
    ),
    "rk3399": (
        "em_table (ChromiumOS) was published for the OP1 bin; its power is applied to the "
        "standard OPP table at equal frequencies (OP1 voltages are up to 50 mV lower)",
    ),
    "exynos5422": (
        "A15 OPP voltages are not monotonic (1.7 GHz at 1.25 V, 1.8 GHz at 1.2375 V); "
        "copied as published (SOURCES.md caveat 7)",
        "idle states are WFI plus the MCPM driver's hard-coded cluster power-down "
        "(characterised on TC2); entry latency unpublished, counted as 0",
    ),
    "sdm845": (
        QCOM_DPC_CAVEAT + " (not used here: power comes from the published table)",
        "the Pixel 3 (SDM845 v2) gold table is not monotonic in frequency; copied as published, "
        "so several gold OPPs are flagged inefficient (SOURCES.md caveat 4); em_table_v1 is not used",
    ),
    "sdm670": (QCOM_DPC_CAVEAT + " (not used here: power comes from the published table)",),
    "sm8150": (QCOM_DPC_CAVEAT,),
    "sm8250": (QCOM_DPC_CAVEAT,),
    "sc7180": (
        "em_table is measured (dhrystone on one CPU, mW, LKML 2021) on one device whose "
        "voltages come from its own fused LUT (SOURCES.md caveat 2); no cluster power term",
    ),
    "g12b-s922x": ("mainline declares no idle states for G12B besides WFI",),
}


#: Idle power domains the built-in files state only in prose.  On these Qualcomm DynamIQ
#: parts every CPU sits in one DSU cluster: the DT's PSCI node gives each CPU_PDn the one
#: CLUSTER_PD as parent, and the cluster-level states (``domain-idle-states``) belong to
#: that CLUSTER_PD, so the CPU subsystem powers down only when all its CPUs are idle
#: (read in sm8150.dtsi: ``CPU_PD0``..``CPU_PD7 { power-domains = <&CLUSTER_PD>; }``,
#: ``CLUSTER_PD { domain-idle-states = <&CLUSTER_SLEEP_0>; }``; sdm845's notes say
#: "one cluster (domain) state shared by all 8 CPUs").  The files split the CPUs into
#: frequency domains ("clusters" here, SOURCES.md caveat 6), which are not power domains.
#: A file may give its own top-level ``idle_domains`` (lists of CPU numbers).
ALL_CPUS = "all"
#: Built-ins whose CPUs all share the last-level cache: DynamIQ SoCs, where every core's
#: L2 points to the DSU's one L3 (the Qualcomm DTs' ``L2_n { next-level-cache = <&L3_0>; }``
#: for sdm845, sdm670, sc7180, sm8150, sm8250, sm8350; Tensor G1's Cortex-X1/A76/A55 share
#: its DSU's L3). v6.12 then builds one MC domain over all CPUs, flagged SD_SHARE_LLC.
#: Classic big.LITTLE (one L2 per cluster, no L3) keeps one LLC per cluster. A file may
#: give its own top-level ``shared_llc`` (true or false).
BUILTIN_SHARED_LLC = frozenset({"gs101", "sdm845", "sdm670", "sc7180", "sm8150", "sm8250", "sm8350"})

#: What a built-in SoC's phone writes at boot (its init scripts), as engine knobs under the
#: kernel profile that phone ran; a file may give its own top-level ``device_init``
#: ({"kernel", "source", "knobs"}). The data files stay copies of the shared platform data.
BUILTIN_DEVICE_INIT: dict[str, dict[str, Any]] = {
    "sm8150": {
        "kernel": "msm-4.14",
        "source": ("the Snapdragon 855 reference script init.qcom.post_boot.sh, case msmnile, as the LG G8 "
                   "ships it (github.com/SGCMarkus/android_device_lge_sm8150-common, "
                   "rootdir/bin/init.qcom.post_boot.sh, lines 4879-4940): schedutil up_rate_limit_us 0 on "
                   "policy0, 4 and 7; down_rate_limit_us 0 written three times to policy0 (the lines meant for "
                   "gold and gold+ name policy0 too, so those keep the kernel default); hispeed_freq 1209600 / "
                   "1612800 / 1612800 kHz; pl 1; sched_upmigrate 95 and sched_downmigrate 85 (the msm "
                   "kernel's migration margins, always on there); core_ctl on gold (min_cpus 2, busy 60/30 %, "
                   "offline delay 100 ms, task_thres 3) and gold+ (min_cpus 0, the same thresholds, task_thres "
                   "1, nr_prev_assist_thresh 1), disabled on silver. The device's init.target.rc sets no "
                   "schedtune boost or prefer_idle."),
        "knobs": {
            "schedutil.up_rate_limit_us": 0, "schedutil.down_rate_limit_us.cluster0": 0,
            "schedutil.hispeed_freq.cluster0": 1_209_600, "schedutil.hispeed_freq.cluster1": 1_612_800,
            "schedutil.hispeed_freq.cluster2": 1_612_800, "schedutil.pl": 1, "vendor.cpu_isolation": 1,
            "core_ctl.enable.cluster0": 0,
            "core_ctl.min_cpus.cluster1": 2, "core_ctl.busy_up_thres.cluster1": 60,
            "core_ctl.busy_down_thres.cluster1": 30, "core_ctl.offline_delay_ms.cluster1": 100,
            "core_ctl.task_thres.cluster1": 3,
            "core_ctl.min_cpus.cluster2": 0, "core_ctl.busy_up_thres.cluster2": 60,
            "core_ctl.busy_down_thres.cluster2": 30, "core_ctl.offline_delay_ms.cluster2": 100,
            "core_ctl.task_thres.cluster2": 1, "core_ctl.nr_prev_assist_thresh.cluster2": 1,
            "vendor.migration_margins": 1, "vendor.sched_upmigrate": 95, "vendor.sched_downmigrate": 85,
        },
    },
    "gs101": {
        "kernel": "pixel-5.10",
        "source": ("the Pixel 6 device tree's init script on Android 13, conf/init.gs101.rc of "
                   "LineageOS/android_device_google_gs101 branch lineage-20 (commit 97f25ec), lines 162-174 "
                   "and 751-787, the values in force once boot has completed: sched_pixel up_rate_limit_us 500 "
                   "on policy0, 4 and 6, down_rate_limit_us 5000 / 20000 / 20000, down_rate_limit_scale_pow 2 on "
                   "policy0; "
                   "sched_util_clamp_min_rt_default 0; vendor groups ta uclamp_min 1 and prefer_idle 1, fg "
                   "prefer_idle 1 and uclamp_min 0, sys prefer_idle 0, bg uclamp_max 512, rt uclamp_min 161 "
                   "and prefer_idle 1. CFS's latency 10 ms, minimum granularity 3 ms and wakeup granularity "
                   "2 ms as the vendor module records them from a running phone (fair.c, 'sysctl_sched' "
                   "comment; tunable scaling none), given here before the engine's log2 scaling of 8 CPUs (x4)."),
        "knobs": {
            "schedutil.up_rate_limit_us": 500, "schedutil.down_rate_limit_us.cluster0": 5000,
            "schedutil.down_rate_limit_us.cluster1": 20_000, "schedutil.down_rate_limit_us.cluster2": 20_000,
            "schedutil.down_rate_limit_scale_pow.cluster0": 2,
            "uclamp.min_rt_default": 0,
            "vendor_sched.ta.uclamp_min": 1, "vendor_sched.ta.prefer_idle": 1,
            "vendor_sched.fg.prefer_idle": 1, "vendor_sched.bg.uclamp_max": 512,
            "vendor_sched.rt.uclamp_min": 161, "vendor_sched.rt.prefer_idle": 1,
            "sched_latency_ns": 2_500_000, "sched_min_granularity_ns": 750_000,
            "sched_wakeup_granularity_ns": 500_000,
        },
    },
}

BUILTIN_IDLE_DOMAINS: dict[str, str] = {
    "sdm845": ALL_CPUS, "sdm670": ALL_CPUS, "sc7180": ALL_CPUS,
    "sm8150": ALL_CPUS, "sm8250": ALL_CPUS, "sm8350": ALL_CPUS,
}


# --- error helpers ----------------------------------------------------------------------


_Shown = _input.Shown  # a ``got`` value that prints as given (InputError hides ``None``)

NULL = _Shown("null")
ABSENT = _Shown("nothing (field absent)")


def _got(obj: dict[str, Any], key: str) -> object:
    if key not in obj:
        return ABSENT
    return NULL if obj[key] is None else obj[key]


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: object) -> bool:
    return (_is_int(v) or isinstance(v, float)) and math.isfinite(v)  # type: ignore[arg-type]


def _mw_to_uw(values: list[float | int]) -> int:
    """Mean of published mW-scale values, in integer µW (exact decimal arithmetic)."""
    total = sum((Fraction(str(v)) for v in values), Fraction(0))
    return round(total * 1000 / len(values))


def _khz_list(khzs: list[int]) -> str:
    return ", ".join(str(k) for k in khzs) + " kHz"


@dataclass
class _Reader:
    source: str

    def fail(self, fld: str, expected: str, got: object = None) -> NoReturn:
        raise InputError(self.source, fld, expected, got)

    def obj(self, v: object, fld: str) -> dict[str, Any]:
        if not isinstance(v, dict):
            self.fail(fld, "a JSON object", v if v is not None else NULL)
        return v

    def int_(self, o: dict[str, Any], key: str, path: str, *, minimum: int, nullable: bool = False,
             expected: Optional[str] = None, maximum: int = DT_U32_MAX) -> Optional[int]:
        v = o.get(key)
        if v is None and nullable:
            return None
        if not _is_int(v) or v < minimum:
            what = expected or (f"an integer >= {minimum}" + (" or null" if nullable else ""))
            self.fail(f"{path}.{key}", what, _got(o, key))
        if v > maximum:
            self.fail(f"{path}.{key}", f"at most {maximum} (a device-tree u32)" if maximum == DT_U32_MAX
                      else f"at most {maximum}", v)
        return v

    def num(self, o: dict[str, Any], key: str, path: str, *, positive: bool,
            max_mw: float = em.EM_MAX_POWER_UW / 1000) -> Optional[float | int]:
        """A nullable power in mW (published tables may be fractional), finite and at most
        the kernel's EM_MAX_POWER: no CPU or cluster state draws more than a CPU may."""
        v = o.get(key)
        if v is None:
            return None
        if not _is_num(v) or v < 0 or (positive and v == 0):
            self.fail(f"{path}.{key}", "a positive number" if positive else "a number >= 0 or null", v)
        if v > max_mw:
            self.fail(f"{path}.{key}", f"at most {max_mw:g} mW (kernel EM_MAX_POWER)", v)
        return v

    def str_(self, o: dict[str, Any], key: str, path: str, *, default: Optional[str] = None) -> str:
        v = o.get(key)
        if v is None and default is not None:
            return default
        if not isinstance(v, str) or not v:
            self.fail(f"{path}.{key}", "a non-empty string", _got(o, key))
        return v


# --- parsed (validated, not yet resolved) cluster ---------------------------------------


@dataclass
class _EmRow:
    power_uw: int
    cluster_power_uw: int
    runs: int
    index: int  # first em_table index with this khz, for error messages


@dataclass
class _RawCluster:
    index: int
    name: str
    core: str
    cpus: list[int]
    dmips: int
    dpc: Optional[int]
    opps: list[tuple[int, Optional[int]]]  # (khz, uv)
    table: Optional[dict[int, _EmRow]]  # em_table by khz
    idle: list[IdleState]
    idle_power_published: list[bool]
    notes: list[str] = field(default_factory=list)

    @property
    def path(self) -> str:
        return f"clusters[{self.index}]"


def _parse_opps(rd: _Reader, c: dict[str, Any], path: str, builtin: bool) -> list[tuple[int, Optional[int]]]:
    raw = c.get("opps")
    if raw is not None and not isinstance(raw, list):
        rd.fail(f"{path}.opps", "a list of OPPs {khz, uv}", raw)
    if not raw:
        # sm8350: the DT has no CPU OPP table at all (SOURCES.md summary table).
        rd.fail(f"{path}.opps",
                "an OPP table (none is published for this SoC)" if builtin else "a non-empty list of OPPs {khz, uv}")
    out: list[tuple[int, Optional[int]]] = []
    for j, o in enumerate(raw):
        p = f"{path}.opps[{j}]"
        o = rd.obj(o, p)
        khz = rd.int_(o, "khz", p, minimum=1, expected="a positive integer (kHz)")
        assert khz is not None
        if out and khz <= out[-1][0]:
            # em_create_perf_table() rejects non-increasing frequencies.
            rd.fail(f"{p}.khz", f"frequencies in strictly ascending order (previous OPP is {out[-1][0]} kHz)", khz)
        uv = rd.int_(o, "uv", p, minimum=1, nullable=True, expected="a positive integer (µV) or null")
        out.append((khz, uv))
    return out


def _parse_em_table(rd: _Reader, c: dict[str, Any], path: str) -> Optional[dict[int, _EmRow]]:
    raw = c.get("em_table")
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        rd.fail(f"{path}.em_table", "a non-empty list of {khz, power_mw[, cluster_power_mw]} or null", raw)
    grouped: dict[int, tuple[list[float | int], list[float | int], int]] = {}
    for j, e in enumerate(raw):
        p = f"{path}.em_table[{j}]"
        e = rd.obj(e, p)
        khz = rd.int_(e, "khz", p, minimum=1, expected="a positive integer (kHz)")
        power = rd.num(e, "power_mw", p, positive=True)
        if power is None:
            rd.fail(f"{p}.power_mw", "a positive number (published per-CPU power)", NULL)
        cluster = rd.num(e, "cluster_power_mw", p, positive=False)
        assert khz is not None
        # Repeated kHz are repeated measurement runs (sc7180: "run" 1 and 2); averaged.
        powers, clusters, first = grouped.setdefault(khz, ([], [], j))
        powers.append(power)
        clusters.append(cluster if cluster is not None else 0)
    return {
        khz: _EmRow(_mw_to_uw(p), _mw_to_uw(cl), len(p), first)
        for khz, (p, cl, first) in sorted(grouped.items())
    }


def _wfi() -> IdleState:
    return IdleState("WFI", "cpu", WFI_LATENCY_NS, WFI_LATENCY_NS, 0, 0)


def _parse_idle(rd: _Reader, c: dict[str, Any], path: str, notes: list[str],
                cname: str) -> tuple[list[IdleState], list[bool]]:
    raw = c.get("idle_states")
    if raw is not None and not isinstance(raw, list):
        rd.fail(f"{path}.idle_states", "a list of idle states", raw)
    states: list[IdleState] = []
    published: list[bool] = []
    prev_residency = -1
    for j, s in enumerate(raw or []):
        p = f"{path}.idle_states[{j}]"
        s = rd.obj(s, p)
        name = rd.str_(s, "name", p)
        level = s.get("level")
        if level not in ("cpu", "cluster"):
            rd.fail(f"{p}.level", "one of: cpu, cluster", _got(s, "level"))
        # dt_idle_states.c: exit_latency = wakeup-latency-us if present, else
        # entry-latency-us + exit-latency-us (SOURCES.md "Idle-state latencies").
        wakeup = rd.int_(s, "wakeup_latency_us", p, minimum=0, nullable=True)
        if wakeup is not None:
            exit_us = wakeup
        else:
            entry = rd.int_(s, "entry_latency_us", p, minimum=0, nullable=True)
            exit_ = rd.int_(s, "exit_latency_us", p, minimum=0,
                            expected="an integer >= 0 (µs; or give wakeup_latency_us)")
            assert exit_ is not None
            exit_us = (entry or 0) + exit_
        residency = rd.int_(s, "min_residency_us", p, minimum=0)
        assert residency is not None
        if residency < prev_residency:
            rd.fail(f"{p}.min_residency_us",
                    f"states in ascending depth (min residency >= the previous state's {prev_residency} µs)",
                    residency)
        prev_residency = residency
        power = rd.num(s, "power_mw", p, positive=False)
        cluster_power = rd.num(s, "cluster_power_mw", p, positive=False)
        # what real phones of the SoC take from a wakeup to the woken task running, for a
        # CPU in this state (docs/mechanisms/idle.md "Measured wakeups"); it needs its source
        measured = rd.int_(s, "measured_wakeup_us", p, minimum=1, nullable=True)
        if measured is not None:
            rd.str_(s, "measured_source", p)
        states.append(IdleState(
            name=name,
            level=level,
            exit_latency_ns=exit_us * 1000,
            target_residency_ns=residency * 1000,
            power_uw=_mw_to_uw([power]) if power is not None else 0,
            cluster_power_uw=_mw_to_uw([cluster_power]) if cluster_power is not None else 0,
            measured_wakeup_ns=measured * 1000 if measured is not None else None,
        ))
        published.append(power is not None)
    if not states or states[0].name.upper() != "WFI":
        # The cpuidle driver always registers WFI itself as state 0.
        states.insert(0, _wfi())
        published.insert(0, False)
        notes.append(f"cluster {cname}: no WFI state listed first; the driver's WFI "
                     "(exit 1 µs, residency 1 µs, power 0) was added as state 0")
    return states, published


def _parse_cluster(rd: _Reader, c: object, i: int, builtin: bool) -> _RawCluster:
    path = f"clusters[{i}]"
    c = rd.obj(c, path)
    name = rd.str_(c, "name", path)
    core = c.get("core") or "unknown"
    if not isinstance(core, str):
        rd.fail(f"{path}.core", "a string", core)
    cpus = c.get("cpus")
    if not isinstance(cpus, list) or not cpus or not all(_is_int(x) and x >= 0 for x in cpus):
        rd.fail(f"{path}.cpus", "a non-empty list of CPU numbers (integers >= 0)", _got(c, "cpus"))
    opps = _parse_opps(rd, c, path, builtin)
    dmips = rd.int_(c, "capacity_dmips_mhz", path, minimum=1,
                    expected="a positive integer (DT capacity-dmips-mhz)")
    assert dmips is not None
    dpc = rd.int_(c, "dynamic_power_coefficient", path, minimum=1, nullable=True,
                  expected="a positive integer (µW/MHz/V²) or null")
    table = _parse_em_table(rd, c, path)
    notes: list[str] = []
    idle, idle_pub = _parse_idle(rd, c, path, notes, name)
    return _RawCluster(i, name, core, list(cpus), dmips, dpc, opps, table, idle, idle_pub, notes)


def _check_cpus(rd: _Reader, clusters: list[_RawCluster]) -> None:
    """Linux logical CPU numbers: over all clusters, 0..N-1 each exactly once."""
    n = sum(len(rc.cpus) for rc in clusters)
    if n > MAX_CPUS:
        rd.fail("clusters", f"at most {MAX_CPUS} CPUs in all", n)
    owner: dict[int, int] = {}
    for rc in clusters:
        for cpu in rc.cpus:
            if cpu in owner:
                rd.fail(f"{rc.path}.cpus", f"CPU numbers 0..{n - 1}, each in exactly one cluster",
                        _Shown(f"CPU {cpu} also in clusters[{owner[cpu]}]"))
            if cpu >= n:
                rd.fail(f"{rc.path}.cpus", f"CPU numbers 0..{n - 1}, each in exactly one cluster",
                        _Shown(f"CPU {cpu} (there are {n} CPUs)"))
            owner[cpu] = rc.index


# --- power resolution -------------------------------------------------------------------


@dataclass
class _Resolved:
    source: PowerModel
    dpc: Optional[int]
    rows: list[tuple[int, Optional[int], int, int]]  # khz, uv, power_uw, cluster_power_uw
    estimated: list[str]


def _resolve_power(rd: _Reader, rc: _RawCluster, platform: str, builtin: bool) -> _Resolved:
    if rc.table is not None:
        return _resolve_published(rd, rc)
    uvs = [uv for _, uv in rc.opps]
    dpc = rc.dpc
    estimated: list[str] = []
    est = estimate_for(platform, rc.name) if builtin else None
    if isinstance(est, VoltageLine) and dpc is not None and None in uvs:
        uvs = [uv if uv is not None else est.uv(khz) for (khz, _), uv in zip(rc.opps, uvs)]
        estimated.append("OPP voltages")
        rc.notes.append(f"cluster {rc.name}: ESTIMATED OPP voltages: {est.describe()}")
    if isinstance(est, (BorrowedDpc, DerivedDpc)) and dpc is None and None not in uvs:  # DerivedDpc: hetero-2cpu
        dpc = est.dpc
        estimated.append("dynamic-power-coefficient")
        rc.notes.append(f"cluster {rc.name}: ESTIMATED {est.describe()}")
    for j, uv in enumerate(uvs):
        if uv is None:
            rd.fail(f"{rc.path}.opps[{j}].uv", "a voltage in µV (or an em_table)", NULL)
    if dpc is None:
        rd.fail(f"{rc.path}.dynamic_power_coefficient",
                "a dynamic-power-coefficient in µW/MHz/V² (or an em_table)", NULL)
    rows = []
    for j, ((khz, _), uv) in enumerate(zip(rc.opps, uvs)):
        assert uv is not None
        power = em.dt_power_uw(dpc, uv, khz)
        if not 0 < power <= em.EM_MAX_POWER_UW:
            # em_create_perf_table() refuses such a state.
            rd.fail(f"{rc.path}.opps[{j}]",
                    f"a DT-formula power (dpc*mV²*MHz/10^6) in 1..{em.EM_MAX_POWER_UW} µW",
                    _Shown(f"{power} µW"))
        rows.append((khz, uv, power, 0))
    return _Resolved("estimated" if estimated else "dt", dpc, rows, estimated)


def _resolve_published(rd: _Reader, rc: _RawCluster) -> _Resolved:
    """Power from the published table.

    The simulated OPP set is the frequencies that are both an OPP of the file and a row
    of its em_table: a frequency without published power would need the DT formula,
    whose units differ from a legacy table's (SOURCES.md caveat 3), and a table row
    without an OPP is not a frequency this part runs at (rk3399's table is for the OP1
    bin; sdm670's lists downstream frequencies above the mainline maximum).
    """
    table = rc.table
    assert table is not None
    opp_khz = [khz for khz, _ in rc.opps]
    kept = [(khz, uv) for khz, uv in rc.opps if khz in table]
    if not kept:
        rd.fail(f"{rc.path}.em_table", "rows whose khz match the cluster's OPPs",
                _Shown(_khz_list(sorted(table))))
    no_power = [k for k in opp_khz if k not in table]
    no_opp = [k for k in table if k not in set(opp_khz)]
    if no_power:
        rc.notes.append(f"cluster {rc.name}: OPPs {_khz_list(no_power)} have no published power "
                        "and are not simulated")
    if no_opp:
        rc.notes.append(f"cluster {rc.name}: em_table rows {_khz_list(no_opp)} are not OPPs of "
                        "this file and are not simulated")
    if kept[-1][0] != opp_khz[-1]:
        rc.notes.append(f"cluster {rc.name}: f_max for capacity is {kept[-1][0]} kHz (highest "
                        f"simulated OPP), not {opp_khz[-1]} kHz")
    runs = {row.runs for row in table.values()}
    if runs != {1}:
        rc.notes.append(f"cluster {rc.name}: em_table has {max(runs)} runs per OPP; power is their mean")
    rows = []
    for khz, uv in kept:
        row = table[khz]
        if row.power_uw > em.EM_MAX_POWER_UW:
            rd.fail(f"{rc.path}.em_table[{row.index}].power_mw",
                    f"at most {em.EM_MAX_POWER_UW // 1000} mW (kernel EM_MAX_POWER)", row.power_uw / 1000)
        rows.append((khz, uv, row.power_uw, row.cluster_power_uw))
    return _Resolved("published", None, rows, [])


# --- inventory ---------------------------------------------------------------------------


def _all_some(flags: list[bool]) -> str:
    if all(flags):
        return "all"
    return "some" if any(flags) else "none"


def _inventory(clusters: list[dict[str, Any]], estimated: set[str], idle_published: bool = False) -> Inventory:
    """What the raw file publishes (works on unresolvable files too, e.g. sm8350)."""
    published = ["topology"]
    missing: list[str] = []

    def tally(label: str, flags: list[bool]) -> None:
        kind = _all_some(flags)
        if kind == "all":
            published.append(label)
        elif kind == "some":
            published.append(f"{label} (some)")
            missing.append(f"{label} (some)")
        else:
            missing.append(label)

    def is_dict(x: object) -> bool:
        return isinstance(x, dict)

    cl = [c for c in clusters if is_dict(c)]
    opps = [o for c in cl for o in (c.get("opps") or []) if is_dict(o)]
    idle = [s for c in cl for s in (c.get("idle_states") or []) if is_dict(s)]
    tally("capacity-dmips-mhz", [c.get("capacity_dmips_mhz") is not None for c in cl])
    tally("OPP table", [bool(c.get("opps")) for c in cl])
    tally("OPP voltages", [o.get("uv") is not None for o in opps] or [False])
    tally("dynamic-power-coefficient", [c.get("dynamic_power_coefficient") is not None for c in cl])
    if any(c.get("em_table") for c in cl):
        tally("energy table", [bool(c.get("em_table")) for c in cl])
    tally("idle-state latencies", [bool(idle)])
    # idle power is published by the file's states, or by legacy idle costs mapped onto them
    tally("idle power", [idle_published or s.get("power_mw") is not None for s in idle] or [False])
    return Inventory(tuple(published), tuple(sorted(estimated)), tuple(missing))


# --- assembly -----------------------------------------------------------------------------


def _power_notes(model: PowerModel, resolved: list[_Resolved], clusters: list[_RawCluster]) -> list[str]:
    notes: list[str] = []
    if model == "published":
        notes.append("power: published per-OPP energy table (em_table), µW = power_mw x 1000 (a legacy "
                     "sched-energy-costs table is unit-less, mW-scale by convention: SOURCES.md caveat 3)")
        if any(r.rows[i][3] for r in resolved for i in range(len(r.rows))):
            notes.append("cluster busy power (cluster_power_mw) is published: the engine adds it while "
                         "any CPU of the cluster runs; the kernel EM has no such term")
    elif model == "dt":
        notes.append("power: kernel DT formula P[µW] = dpc*mV*mV*MHz/10^6 (drivers/opp/of.c "
                     "_get_power, integer) from the published dynamic-power-coefficient and OPP voltages")
    else:
        notes.append("power: ESTIMATED — kernel DT formula P[µW] = dpc*mV*mV*MHz/10^6 with inputs "
                     "that are not published; see the ESTIMATED notes and hetsched/platforms/estimates.py")
    return notes


@dataclass
class _IdlePower:
    #: per cluster, the idle states with their power filled in
    states: list[list[IdleState]]
    #: "published" (every cluster from the file or a published table), "estimated" (some
    #: cluster from an estimate), "none" (some state counted as 0: a user file without any)
    model: str
    notes: list[str]


def _legacy_value(costs: object, state: IdleState, index: int) -> Optional[int]:
    """A state's entry of a raw ``idle_cost_*`` (a list in legacy order, or a dict keyed by
    state-name prefix as LISA's hikey960_energy.py gives it)."""
    if isinstance(costs, list) and len(costs) >= 2 and all(_is_int(v) and v >= 0 for v in costs):
        return costs[legacy_entry(index, len(costs))]
    if isinstance(costs, dict):
        for key, v in costs.items():
            if (state.name == key or state.name.startswith(f"{key}-")) and _is_int(v) and v >= 0:
                return v
    return None


def _check_legacy_costs(rd: _Reader, meta: dict[str, Any], path: str) -> None:
    """The legacy idle costs become µW x 1000 like em_table's mW: none may exceed the
    kernel's EM_MAX_POWER (the ones that are not integers >= 0 are not used at all)."""
    limit = em.EM_MAX_POWER_UW // 1000
    for key in ("idle_cost_cpu", "idle_cost_cluster"):
        costs = meta.get(key)
        items = enumerate(costs) if isinstance(costs, list) else costs.items() if isinstance(costs, dict) else ()
        for k, v in items:
            if _is_int(v) and v > limit:
                where = f"[{k}]" if isinstance(costs, list) else f".{k}"
                rd.fail(f"{path}.{key}{where}", f"at most {limit} (x1000 µW, kernel EM_MAX_POWER)", v)


def _idle_power(rd: _Reader, raw_clusters: list[Any], parsed: list[_RawCluster], resolved: list[_Resolved],
                name: str, builtin: bool) -> _IdlePower:
    """Idle-state power of every cluster (idle_power.py: file, legacy costs, estimate)."""
    out: list[list[IdleState]] = []
    notes: list[str] = []
    kinds: set[str] = set()
    for rc, r in zip(parsed, resolved):
        states = list(rc.idle)
        has_cluster_term = any(row[3] for row in r.rows)
        if any(rc.idle_power_published):
            unpublished = [s.name for s, f in zip(states, rc.idle_power_published) if not f]
            if unpublished:
                kinds.add("none")
                notes.append(f"cluster {rc.name}: idle power of {', '.join(unpublished)} not published: counted as 0")
            else:
                kinds.add("published")
            out.append(states)
            continue
        meta = raw_clusters[rc.index].get("em_table_meta")
        meta = meta if isinstance(meta, dict) else {}
        _check_legacy_costs(rd, meta, f"{rc.path}.em_table_meta")
        cpu_costs = [_legacy_value(meta.get("idle_cost_cpu"), s, j) for j, s in enumerate(states)]
        cl_costs = [_legacy_value(meta.get("idle_cost_cluster"), s, j) for j, s in enumerate(states)]
        published = PUBLISHED_IDLE_COSTS.get(name, {}).get(rc.name) if builtin else None
        estimate = IDLE_ESTIMATES.get(name, {}).get(rc.name) if builtin else None
        if r.source == "published" and None not in cpu_costs:
            # same bogo-units as the cluster's em_table: µW = value x 1000
            cl = [c if (c is not None and has_cluster_term) else 0 for c in cl_costs]
            states = [replace(s, power_uw=c * 1000, cluster_power_uw=k * 1000)
                      for s, c, k in zip(states, cpu_costs, cl)]
            kinds.add("published")
            notes.append(f"cluster {rc.name}: idle power from the file's legacy idle-cost-data "
                         f"(em_table_meta), state i -> entry i+1 (entry 0 = active idle), x1000 like em_table"
                         + ("" if has_cluster_term and None not in cl_costs else "; no cluster idle term"))
        elif published is not None:
            by_khz = {row[0]: row[2] for row in r.rows}
            scale_uw = by_khz[published.scale_khz]
            n = len(published.cpu)
            states = [replace(s, power_uw=published.cpu[legacy_entry(j, n)] * scale_uw // published.scale_busy_cost,
                              cluster_power_uw=0)
                      for j, s in enumerate(states)]
            kinds.add("published")
            notes.append(f"cluster {rc.name}: idle power from the {published.describe()} "
                         f"(= {scale_uw} µW here); state i -> entry i+1, clamped to the last; "
                         "cluster idle-cost not applied (the OPP power has no cluster term)")
        elif estimate is not None:
            ref = r if estimate.ref_cluster is None else next(
                rr for pc, rr in zip(parsed, resolved) if pc.name == estimate.ref_cluster)
            wfi = estimate.wfi_uw(ref.rows[0][2])
            states = [replace(s, power_uw=wfi if j == 0 else 0, cluster_power_uw=0) for j, s in enumerate(states)]
            kinds.add("estimated")
            notes.append(f"cluster {rc.name}: ESTIMATED idle power: {estimate.describe()} "
                         f"(WFI {wfi} µW); see hetsched/platforms/idle_power.py")
        else:
            kinds.add("none")
            notes.append(f"cluster {rc.name}: idle power not published: counted as 0")
        out.append(states)
    model = "none" if "none" in kinds else "estimated" if "estimated" in kinds else "published"
    if model == "none" and all(n.endswith("idle power not published: counted as 0") for n in notes) \
            and len(notes) == len(parsed):
        notes = ["idle power not published: counted as 0"]
    return _IdlePower(out, model, notes)


def _build(raw: object, source: str, name: str, builtin: bool) -> Platform:
    rd = _Reader(source)
    top = rd.obj(raw, "(top level)")
    description = top.get("name") or ""
    soc = top.get("soc") or name
    if not isinstance(description, str):
        rd.fail("name", "a string", description)
    if not isinstance(soc, str):
        rd.fail("soc", "a string", soc)
    sources = top.get("source") or []
    if not isinstance(sources, list) or not all(isinstance(s, dict) for s in sources):
        rd.fail("source", "a list of {repo, path, commit} objects", sources)
    data_notes = top.get("notes") or ""
    if not isinstance(data_notes, str):
        rd.fail("notes", "a string", data_notes)
    raw_clusters = top.get("clusters")
    if not isinstance(raw_clusters, list) or not raw_clusters:
        rd.fail("clusters", "a non-empty list of clusters", _got(top, "clusters"))

    parsed = [_parse_cluster(rd, c, i, builtin) for i, c in enumerate(raw_clusters)]
    seen: dict[str, int] = {}
    for rc in parsed:
        if rc.name in seen:
            rd.fail(f"{rc.path}.name", f"a cluster name not used by clusters[{seen[rc.name]}]", rc.name)
        seen[rc.name] = rc.index
    _check_cpus(rd, parsed)

    resolved = [_resolve_power(rd, rc, name, builtin) for rc in parsed]
    kinds = {r.source for r in resolved}
    if "published" in kinds and len(kinds) > 1:
        bad = next(rc for rc, r in zip(parsed, resolved) if r.source != "published")
        rd.fail(f"{bad.path}.em_table",
                "an em_table on every cluster or on none (published table values and DT-formula µW "
                "are not comparable)", NULL)
    model: PowerModel = "estimated" if "estimated" in kinds else next(iter(kinds))

    # arch_topology.c: f_ref is cpuinfo.max_freq, the highest OPP actually registered,
    # i.e. the highest simulated OPP (SOURCES.md "The rest of the EM pipeline").
    idle_power = _idle_power(rd, raw_clusters, parsed, resolved, name, builtin)
    caps = em.normalized_capacities([(rc.dmips, r.rows[-1][0]) for rc, r in zip(parsed, resolved)])
    clusters: list[Cluster] = []
    for rc, r, cap, idle in zip(parsed, resolved, caps, idle_power.states):
        if cap < 1:
            rd.fail(f"{rc.path}.capacity_dmips_mhz",
                    "a value giving a normalised capacity of at least 1", rc.dmips)
        fmax = r.rows[-1][0]
        perfs = [em.em_performance(cap, khz, fmax) for khz, *_ in r.rows]
        for (khz, *_), perf in zip(r.rows, perfs):
            if perf < 1:
                j = next(j for j, (k, _) in enumerate(rc.opps) if k == khz)
                rd.fail(f"{rc.path}.opps[{j}].khz",
                        "a frequency giving an EM performance (capacity*khz/fmax) of at least 1", khz)
        states = em.em_compute_costs([row[2] for row in r.rows], perfs)
        opps = tuple(
            Opp(khz=khz, uv=uv, power_uw=p, cluster_power_uw=cp, perf=perf, cost=st.cost,
                inefficient=st.inefficient)
            for (khz, uv, p, cp), perf, st in zip(r.rows, perfs, states)
        )
        clusters.append(Cluster(
            name=rc.name, core=rc.core, cpus=tuple(sorted(rc.cpus)), capacity_dmips_mhz=rc.dmips,
            capacity_orig=cap, dynamic_power_coefficient=r.dpc, power_source=r.source,
            opps=opps, idle_states=tuple(idle),
        ))

    idle_domains = _idle_domains(rd, top, clusters, name, builtin)
    shared_llc = top.get("shared_llc", builtin and name in BUILTIN_SHARED_LLC)
    if not isinstance(shared_llc, bool):
        rd.fail("shared_llc", "true or false (every CPU shares the last-level cache)", shared_llc)

    device_init = _device_init(rd, top, BUILTIN_DEVICE_INIT.get(name) if builtin else None)

    notes = _power_notes(model, resolved, parsed)
    notes.extend(idle_power.notes)
    for rc in parsed:
        notes.extend(rc.notes)
    if builtin:
        notes.extend(BUILTIN_CAVEATS.get(name, ()))
    for d in idle_domains:
        cpus = sorted(cpu for ci in d for cpu in clusters[ci].cpus)
        notes.append(f"cluster-level idle states: one power domain over clusters "
                     f"{', '.join(clusters[ci].name for ci in d)} (CPUs {_cpu_ranges(cpus)}): "
                     "in effect only while all of them are idle")
    estimated = {item for r in resolved for item in r.estimated}
    if idle_power.model == "estimated":
        estimated.add("idle power")
    return Platform(
        name=name, soc=soc, description=description, power_model=model, clusters=tuple(clusters),
        notes=tuple(notes), sources=tuple(sources), path=source,
        inventory=_inventory(raw_clusters, estimated, idle_power.model == "published"), data_notes=data_notes,
        idle_domains=idle_domains, idle_power_model=idle_power.model, shared_llc=shared_llc,
        device_init=device_init,
    )


def _device_init(rd: _Reader, top: dict[str, Any], builtin: Optional[dict[str, Any]]) -> Optional[DeviceInit]:
    """The file's ``device_init`` (else the built-in's): what the device's init scripts write
    at boot, as engine knobs, under the kernel profile they ran on (applied before the
    user's knobs)."""
    raw = top.get("device_init", builtin)
    if raw is None:
        return None
    from ..sim import KERNEL_PROFILES, knob_table  # the engine's own lists, through sim

    if not isinstance(raw, dict):
        rd.fail("device_init", "an object with kernel, source and knobs", raw)
    profiles = list(KERNEL_PROFILES)
    kernel = raw.get("kernel")
    if kernel not in profiles:
        rd.fail("device_init.kernel", f"one of {', '.join(profiles)}", _got(raw, "kernel"))
    source = raw.get("source")
    if not isinstance(source, str) or not source:
        rd.fail("device_init.source", "where the values come from (the device's script and lines)",
                _got(raw, "source"))
    knobs = raw.get("knobs")
    if not isinstance(knobs, dict):
        rd.fail("device_init.knobs", "an object of knob names and numbers", _got(raw, "knobs"))
    known = {k["name"] for k in knob_table()}
    for name, value in knobs.items():
        if name not in known:
            rd.fail(f"device_init.knobs.{name}", "a knob the engine has (hetsched knobs)", name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            rd.fail(f"device_init.knobs.{name}", "a finite number", value)
    return DeviceInit(kernel=kernel, source=source, knobs=tuple((k, float(v)) for k, v in knobs.items()))


def _cpu_ranges(cpus: list[int]) -> str:
    if cpus == list(range(cpus[0], cpus[-1] + 1)) and len(cpus) > 2:
        return f"{cpus[0]}-{cpus[-1]}"
    return ",".join(str(c) for c in cpus)


def _idle_domains(rd: _Reader, top: dict[str, Any], clusters: list[Cluster], name: str,
                  builtin: bool) -> tuple[tuple[int, ...], ...]:
    """The file's ``idle_domains`` (lists of CPU numbers), or BUILTIN_IDLE_DOMAINS for a
    built-in, as groups of cluster indices; only groups of two or more clusters are kept.
    A group must be whole clusters whose cluster-level states match (the engine's rule)."""
    raw = top.get("idle_domains")
    if raw is None and builtin and BUILTIN_IDLE_DOMAINS.get(name) == ALL_CPUS:
        raw = [sorted(cpu for c in clusters for cpu in c.cpus)]
    if raw is None:
        return ()
    if not isinstance(raw, list):
        rd.fail("idle_domains", "a list of CPU lists (each a power domain of whole clusters)", raw)
    of_cpu = {cpu: ci for ci, c in enumerate(clusters) for cpu in c.cpus}
    taken: set[int] = set()
    out: list[tuple[int, ...]] = []
    for i, d in enumerate(raw):
        p = f"idle_domains[{i}]"
        if not isinstance(d, list) or not d or not all(_is_int(x) and x in of_cpu for x in d):
            rd.fail(p, "a non-empty list of the platform's CPU numbers", d)
        cis = sorted({of_cpu[x] for x in d})
        if sorted(d) != sorted(cpu for ci in cis for cpu in clusters[ci].cpus):
            rd.fail(p, "every CPU of each cluster it touches (a domain is made of whole clusters)", d)
        if taken & set(cis):
            rd.fail(p, "CPUs in no other domain", d)
        taken |= set(cis)

        def shape(c: Cluster) -> list[tuple[int, int]] | None:
            lv = [s.level for s in c.idle_states]
            first = lv.index("cluster") if "cluster" in lv else len(lv)
            if any(x != "cluster" for x in lv[first:]):
                return None
            return [(s.exit_latency_ns, s.target_residency_ns) for s in c.idle_states[first:]]

        shapes = [shape(clusters[ci]) for ci in cis]
        if shapes[0] is None or any(sh != shapes[0] for sh in shapes):
            rd.fail(p, "clusters with the same cluster-level idle states (latency, residency), "
                       "deeper than their CPU-level states", d)
        if len(cis) > 1:
            out.append(tuple(cis))
    return tuple(out)


# --- public entry points ------------------------------------------------------------------


def _read_json(path: Path) -> object:
    # size, encoding, nesting depth and syntax, each refused naming the file (_input.py)
    return _input.load_json(path, str(path), "platform JSON file")


def _is_path(name_or_path: str) -> bool:
    return "/" in name_or_path or "\\" in name_or_path or name_or_path.endswith(".json")


def list_platforms() -> list[str]:
    """Built-in platform names (the file stems in data/), sorted."""
    return list(_builtin_names(DATA_DIR, DATA_DIR.stat().st_mtime_ns))


@functools.lru_cache(maxsize=4)
def _builtin_names(data_dir: Path, _mtime_ns: int) -> tuple[str, ...]:
    # every Simulation of a built-in platform asks; the directory's mtime is in the key, so
    # a file added or removed is seen
    return tuple(sorted(p.stem for p in data_dir.glob("*.json")))


def _builtin_path(name_or_path: str) -> tuple[Path, str]:
    base, sep, _variant = name_or_path.partition(":")
    names = list_platforms()
    if base not in names:
        raise UnknownNameError("--platform", "platform", base, names)
    if sep:
        supported = tuple(VARIANTS.get(base, ())) + ("switcher",)  # Kim et al.'s switcher: platforms/switcher.py
        expected = ("one of: " + ", ".join(f"{base}:{v}" for v in supported)) if supported else (
            f"{base} without a ':variant' suffix (no variants defined for this platform)")
        raise InputError("--platform", "platform", expected, name_or_path)
    return DATA_DIR / f"{base}.json", base


def load_platform(name_or_path: str) -> Platform:
    """Load a built-in platform by name, or a user JSON file by path.

    A path is anything containing ``/`` or ending in ``.json``; a user file has the
    shape of the built-in ones (data/SOURCES.md, "JSON shape") and is never completed
    with estimates.  ``host`` is the machine this runs on (platforms/host.py).
    """
    if name_or_path == "host":
        from .host import load_host
        return load_host()
    if _is_path(name_or_path):
        path = Path(name_or_path)
        return _build(_read_json(path), str(path), path.stem, builtin=False)
    base, _sep, variant = name_or_path.partition(":")
    if variant == "switcher":
        # Kim et al.'s switcher mode (platforms/switcher.py)
        from .switcher import switcher_platform
        return switcher_platform(load_platform(base), base)
    path, base = _builtin_path(name_or_path)
    st = path.stat()
    return _builtin_platform(path, base, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=64)
def _builtin_platform(path: Path, base: str, _mtime_ns: int, _size: int) -> Platform:
    # a reproduction builds thousands of Simulations on a handful of platforms (ospm2020's
    # quick level 3,440), and parsing one took about as long as its run; a Platform is
    # frozen, so one parse per file serves them all (an edited file, with another mtime or
    # size, is parsed again)
    return _build(_with_measured_wakeups(_read_json(path), base), str(path), base, builtin=True)


#: what real phones were measured to take to wake a CPU in each idle state, laid over the
#: built-in files (data/), which stay copies of their source
MEASURED_WAKEUPS = Path(__file__).parent / "measured" / "idle_wakeups.json"


def _with_measured_wakeups(doc: object, base: str) -> object:
    table = json.loads(MEASURED_WAKEUPS.read_text())["platforms"].get(base)
    if table is None or not isinstance(doc, dict):
        return doc
    doc = copy.deepcopy(doc)
    for c in doc["clusters"]:
        for s in c.get("idle_states") or []:
            m = table["clusters"].get(c["name"], {}).get(s["name"])
            if m is not None:
                us, n = m
                s["measured_wakeup_us"] = us
                s["measured_source"] = f"{table['source']}; median of {n} wakeups ({table['command']})"
    return doc


def platform_summary(name_or_path: str) -> dict[str, Any]:
    """``Platform.summary()``, or for a file that cannot be simulated (sm8350) the same
    row with ``runnable = False`` and the error as ``reason``."""
    try:
        return load_platform(name_or_path).summary()
    except InputError as err:
        if isinstance(err, UnknownNameError) or err.field in ("file", "json"):
            raise
        path = Path(name_or_path) if _is_path(name_or_path) else _builtin_path(name_or_path)[0]
        raw = _read_json(path)
        top = raw if isinstance(raw, dict) else {}
        clusters = top.get("clusters") if isinstance(top.get("clusters"), list) else []
        shapes = [
            (len(c.get("cpus") or []), str(c.get("core") or "unknown")) for c in clusters if isinstance(c, dict)
        ]
        return _summary_row(
            name=path.stem, soc=str(top.get("soc") or path.stem), description=str(top.get("name") or ""),
            cluster_shapes=shapes, power_model=None, inventory=_inventory(clusters, set()),
            runnable=False, reason=str(err),
        )


def platform_summaries() -> list[dict[str, Any]]:
    """One summary row per built-in platform (the ``hetsched platforms`` listing)."""
    return [platform_summary(n) for n in list_platforms()]
