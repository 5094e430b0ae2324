"""The ``host`` platform: the machine hetsched runs on, read from /sys and /proc.

* CPUs: ``/sys/devices/system/cpu/online`` (they must be 0..N-1).
* Capacity: ``cpuN/cpu_capacity`` where the kernel exports it (arm64, some x86 hybrids);
  else every CPU is 1024 (the kernel's own default when nothing is known).
* Clusters = frequency domains: CPUs sharing a cpufreq policy (``related_cpus``) and a
  capacity.  Without cpufreq (VMs, like the machine this was written on), CPUs of equal
  capacity form one cluster.
* OPPs: ``scaling_available_frequencies`` of the policy, else ``cpuinfo_min_freq`` and
  ``cpuinfo_max_freq``; without cpufreq one OPP at the ``cpu MHz`` of ``/proc/cpuinfo``
  (a nominal frequency, the highest value over the cluster's CPUs).
* Idle states: ``cpuN/cpuidle/stateK`` (name, ``latency`` µs -> exit latency,
  ``residency`` µs -> target residency); without cpuidle the WFI-like state 0 (1 µs / 1 µs).
* Context switch: measured once per machine, as lmbench's lat_ctx does: two processes
  pinned to CPU 0 pass a byte back and forth through two pipes, and the same pipe write and
  read done by one process alone (no switch) is subtracted, each timed as the fastest of 200
  batches of 100 (the machine may be shared); the result (ns per switch) is
  kept in ``$XDG_CACHE_HOME/hetsched/host.json`` (``~/.cache``) under the machine's CPU
  model, CPU count and kernel release, so every later load of ``host`` gives the same
  platform; ``HETSCHED_HOST_CONTEXT_SWITCH_NS`` sets it instead.  It becomes every
  cluster's ``context_switch_ns`` (the engine's cost.context_switch_ns, costs.rs).
* Power: nothing on a PC publishes it, so it is ESTIMATED and labelled so
  (``power_model = "estimated"``): per CPU at the highest OPP ``HOST_POWER_AT_FMAX_UW``
  scaled by capacity/1024, and ``P(f) = P(f_max) * (f/f_max)^3`` below it (voltage roughly
  proportional to frequency); idle power 0.
"""

from __future__ import annotations

import json
import os
import platform as _pyplatform
import re
import time
from pathlib import Path
from typing import Optional

from ..errors import InputError
from . import em
from .model import Cluster, IdleState, Inventory, Opp, Platform

__all__ = ["load_host", "HOST_POWER_AT_FMAX_UW"]

#: ESTIMATED active power of one CPU of capacity 1024 at its highest frequency, µW, by
#: architecture: an x86 server/desktop core ~ 3 W, an Arm big core ~ 1 W (orders of
#: magnitude of published per-core figures, not a measurement of this machine)
HOST_POWER_AT_FMAX_UW = {"x86_64": 3_000_000, "i686": 3_000_000, "aarch64": 1_000_000}
DEFAULT_POWER_AT_FMAX_UW = 1_500_000


def _read(p: Path) -> Optional[str]:
    try:
        return p.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _cpulist(text: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"[,\s]+", text):  # "0-3,6" (online) or "0 1 2 3" (related_cpus)
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition("-")
        out.extend(range(int(a), int(b or a) + 1))
    return out


def _cpuinfo_mhz(proc: Path) -> dict[int, float]:
    text = _read(proc / "cpuinfo") or ""
    out: dict[int, float] = {}
    cur: Optional[int] = None
    for line in text.splitlines():
        k, _, v = line.partition(":")
        k = k.strip()
        if k == "processor":
            try:
                cur = int(v)
            except ValueError:
                cur = None
        elif k in ("cpu MHz", "CPU MHz", "clock") and cur is not None:
            m = re.search(r"[\d.]+", v)
            if m:
                out[cur] = float(m.group())
    return out


def _pipe_loop_ns(batches: int, batch: int) -> float:
    """One process writing a byte to a pipe and reading it back: ns per write + read, in the
    fastest batch of `batch` (the one the machine's other load disturbed least)."""
    r, w = os.pipe()
    best = float("inf")
    try:
        for _ in range(batches):
            t0 = time.perf_counter_ns()
            for _ in range(batch):
                os.write(w, b"x")
                os.read(r, 1)
            best = min(best, (time.perf_counter_ns() - t0) / batch)
        return best
    finally:
        os.close(r)
        os.close(w)


def _ping_pong_ns(batches: int, batch: int, cpu: int, echo_cpu: Optional[int] = None) -> float:
    """Two processes, pinned to `cpu` and `echo_cpu` (default: the same CPU), passing a byte
    through two pipes: ns per round trip (two writes, two reads, two wakeups), in the
    fastest batch of `batch` round trips."""
    echo_cpu = cpu if echo_cpu is None else echo_cpu
    a_r, a_w = os.pipe()
    b_r, b_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the echo side
        try:
            os.sched_setaffinity(0, {echo_cpu})
            for _ in range(batches * batch + 1):
                os.read(a_r, 1)
                os.write(b_w, b"x")
        finally:
            os._exit(0)
    best = float("inf")
    try:
        os.sched_setaffinity(0, {cpu})
        os.write(a_w, b"x")  # one exchange to start both sides on the CPU
        os.read(b_r, 1)
        for _ in range(batches):
            t0 = time.perf_counter_ns()
            for _ in range(batch):
                os.write(a_w, b"x")
                os.read(b_r, 1)
            best = min(best, (time.perf_counter_ns() - t0) / batch)
        return best
    finally:
        os.waitpid(pid, 0)
        for fd in (a_r, a_w, b_r, b_w):
            os.close(fd)


def measure_context_switch_ns(batches: int = 200, batch: int = 100, cpu: int = 0) -> int:
    """lmbench lat_ctx's method: (round trip - the pipe operations alone) / 2, in ns, at
    least 1; each from the fastest of `batches` batches, since the machine may be shared."""
    saved = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {cpu})
        loop = _pipe_loop_ns(batches, batch)
        trip = _ping_pong_ns(batches, batch, cpu)
    finally:
        os.sched_setaffinity(0, saved)
    return max(1, round((trip - 2 * loop) / 2))


def measure_wakeup_latency_ns(batches: int = 200, batch: int = 100, cpu: int = 0, other: int = 1) -> int:
    """What waking a task on another, idle CPU adds to waking it on one's own: (the round
    trip between `cpu` and `other` - the round trip on `cpu` alone) / 2, in ns, at least 1.
    Each wakeup of the first crosses CPUs (the IPI) and brings an idle CPU back (its idle
    exit); each of the second is a switch on a busy CPU. Fastest batches, as above."""
    saved = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {cpu})
        same = _ping_pong_ns(batches, batch, cpu)
        cross = _ping_pong_ns(batches, batch, cpu, other)
    finally:
        os.sched_setaffinity(0, saved)
    return max(1, round((cross - same) / 2))


#: what the host platform measures of this machine: the environment variable that sets
#: each instead, the measurement, and how it is made (kept in the cache beside the figure)
_MEASURED = {
    "context_switch_ns": ("HETSCHED_HOST_CONTEXT_SWITCH_NS", measure_context_switch_ns,
                          "pipe ping-pong on CPU 0, less the pipe operations (lat_ctx)"),
    "wakeup_latency_ns": ("HETSCHED_HOST_WAKEUP_LATENCY_NS", measure_wakeup_latency_ns,
                          "pipe ping-pong between CPUs 0 and 1, less the same on CPU 0, halved"),
}


def _host_measured_ns(what: str, model: str, nr_cpus: int) -> int:
    """A figure of this machine's (`_MEASURED`): the environment's, else the cached
    measurement, else measured now and cached."""
    var, measure, method = _MEASURED[what]
    env = os.environ.get(var)
    if env is not None:
        if not env.isdigit() or int(env) < 1:
            raise InputError(var, "value", "a positive integer (ns)", got=env)
        return int(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hetsched" / "host.json"
    key = f"{model} | {nr_cpus} CPUs | {_pyplatform.release()}"
    try:
        data = json.loads(cache.read_text())
    except (OSError, ValueError):
        data = {}
    data = data if isinstance(data, dict) else {}
    entry = data.get(key) if isinstance(data.get(key), dict) else {}
    if isinstance(entry.get(what), int):
        return entry[what]
    ns = measure()
    entry = {**entry, what: ns, f"{what}_method": method}
    data[key] = entry
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # an unwritable cache: measured again next time
    return ns


def load_host(sys_root: str | os.PathLike = "/sys", proc_root: str | os.PathLike = "/proc",
              machine: Optional[str] = None, context_switch_ns: Optional[int] = None,
              wakeup_latency_ns: Optional[int] = None) -> Platform:
    """The running machine as a :class:`Platform` (roots can be redirected for tests).

    `context_switch_ns`: the cost to use; None measures this machine's (cached) when the
    roots are the real ones, and leaves the engine's default for redirected roots.
    `wakeup_latency_ns`: the exit latency of the idle state assumed when sysfs lists no
    cpuidle state (a VM): None measures it likewise on a machine of two or more CPUs
    (else 1 µs)."""
    cpu_dir = Path(sys_root) / "devices/system/cpu"
    src = str(cpu_dir)
    online = _read(cpu_dir / "online")
    if online is None:
        raise InputError(src, "online", "a readable list of online CPUs (is /sys mounted?)")
    cpus = _cpulist(online)
    if cpus != list(range(len(cpus))):
        raise InputError(src, "online", "CPUs 0..N-1 all online (hetsched numbers CPUs densely)", got=online)
    machine = machine or _pyplatform.machine()
    notes: list[str] = []
    mhz = _cpuinfo_mhz(Path(proc_root))

    caps: dict[int, int] = {}
    for c in cpus:
        v = _read(cpu_dir / f"cpu{c}/cpu_capacity")
        caps[c] = int(v) if v and v.isdigit() else 1024
    if not any((cpu_dir / f"cpu{c}/cpu_capacity").exists() for c in cpus):
        notes.append("no cpu_capacity in sysfs: every CPU has capacity 1024 (the kernel's default)")

    # frequency domains
    domains: dict[tuple, list[int]] = {}
    opps_of: dict[tuple, list[int]] = {}
    has_cpufreq = False
    for c in cpus:
        pol = cpu_dir / f"cpu{c}/cpufreq"
        avail = _read(pol / "scaling_available_frequencies")
        fmin, fmax = _read(pol / "cpuinfo_min_freq"), _read(pol / "cpuinfo_max_freq")
        related = _read(pol / "related_cpus")
        if fmax and fmax.isdigit():
            has_cpufreq = True
            if avail:
                khz = sorted({int(x) for x in avail.split() if x.isdigit()})
            else:
                khz = sorted({int(fmax)} | ({int(fmin)} if fmin and fmin.isdigit() else set()))
            key = ("policy", tuple(_cpulist(related)) if related else (c,), caps[c])
            opps_of[key] = khz
        else:
            key = ("nocpufreq", caps[c])
            f = round(mhz.get(c, 0.0) * 1000)
            opps_of[key] = [max(f, *(opps_of.get(key) or [0]))]
        domains.setdefault(key, []).append(c)
    if not has_cpufreq:
        if not any(mhz.values()):
            raise InputError(f"{proc_root}/cpuinfo", "cpu MHz",
                             "a CPU frequency (no cpufreq in sysfs and none in /proc/cpuinfo)")
        notes.append("no cpufreq in sysfs (a VM or a fixed-frequency machine): one OPP per cluster at the "
                     "nominal 'cpu MHz' of /proc/cpuinfo; DVFS governors have nothing to choose")

    # idle states (per CPU; a cluster takes its first CPU's)
    def idle_states(c: int) -> list[IdleState]:
        out = []
        k = 0
        while (cpu_dir / f"cpu{c}/cpuidle/state{k}").is_dir():
            d = cpu_dir / f"cpu{c}/cpuidle/state{k}"
            name = _read(d / "name") or f"state{k}"
            lat, res = _read(d / "latency") or "0", _read(d / "residency") or "0"
            if _read(d / "disable") == "1":
                k += 1
                continue
            # the engine's idle model wants a wake-up cost; POLL (0 µs) is kept as 1 ns
            out.append(IdleState(name=name, level="cpu", exit_latency_ns=max(1, int(lat) * 1000),
                                 target_residency_ns=max(1, int(res) * 1000), power_uw=0, cluster_power_uw=0))
            k += 1
        return out

    model_name = next((line.split(":", 1)[1].strip() for line in (_read(Path(proc_root) / "cpuinfo") or "").splitlines()
                       if line.startswith("model name")), machine)
    real = str(sys_root) == "/sys" and str(proc_root) == "/proc"
    if context_switch_ns is None and real:
        context_switch_ns = _host_measured_ns("context_switch_ns", model_name, len(cpus))
    if context_switch_ns is not None:
        notes.append(f"context switch: {context_switch_ns} ns, measured on this machine (pipe ping-pong on one CPU, "
                     "less the pipe operations, as lmbench lat_ctx)")
    power_max = HOST_POWER_AT_FMAX_UW.get(machine, DEFAULT_POWER_AT_FMAX_UW)
    clusters: list[Cluster] = []
    order = sorted(domains.items(), key=lambda kv: (kv[0][-1], min(kv[1])))
    for i, (key, members) in enumerate(order):
        khz = [k for k in opps_of[key] if k > 0]
        if not khz:
            raise InputError(src, f"cpu{members[0]}", "a known frequency (cpufreq or /proc/cpuinfo cpu MHz)")
        cap = caps[members[0]]
        fmax = khz[-1]
        powers = [max(1, round(power_max * cap / 1024 * (k / fmax) ** 3)) for k in khz]
        perfs = [max(1, em.em_performance(cap, k, fmax)) for k in khz]
        states = em.em_compute_costs(powers, perfs)
        idle = idle_states(members[0])
        if not idle:
            if wakeup_latency_ns is None and real and len(cpus) > 1:
                wakeup_latency_ns = _host_measured_ns("wakeup_latency_ns", model_name, len(cpus))
            if wakeup_latency_ns is None:
                idle = [IdleState("WFI", "cpu", 1000, 1000, 0, 0)]
                notes.append(f"cluster {i}: no cpuidle states in sysfs: a WFI-like state 0 (1 µs / 1 µs) is assumed")
            else:
                # a VM's halted vCPU: waking a task there takes the IPI and the vCPU's return
                idle = [IdleState("WFI", "cpu", wakeup_latency_ns, wakeup_latency_ns, 0, 0)]
                notes.append(f"cluster {i}: no cpuidle states in sysfs: a WFI-like state 0 whose exit latency "
                             f"(and target residency) is {wakeup_latency_ns} ns, measured on this machine (a pipe "
                             "ping-pong between two CPUs less the same on one, halved: the IPI and the idle "
                             "CPU's return)")
        clusters.append(Cluster(
            name=f"cpus{members[0]}-{members[-1]}" if len(members) > 1 else f"cpu{members[0]}",
            core=machine, cpus=tuple(sorted(members)), capacity_dmips_mhz=cap, capacity_orig=cap,
            dynamic_power_coefficient=None, power_source="estimated",
            opps=tuple(Opp(khz=k, uv=None, power_uw=p, cluster_power_uw=0, perf=pf, cost=st.cost,
                           inefficient=st.inefficient)
                       for k, p, pf, st in zip(khz, powers, perfs, states)),
            idle_states=tuple(idle), context_switch_ns=context_switch_ns))
    notes.insert(0, f"power: ESTIMATED: {power_max / 1e6:g} W per CPU of capacity 1024 at its highest "
                    f"frequency ({machine}), scaled by capacity/1024 and by (f/f_max)^3 below it; not measured")
    notes.append("idle power not published: counted as 0")
    return Platform(
        name="host", soc=model_name, description=f"this machine: {len(cpus)} x {model_name}",
        power_model="estimated", clusters=tuple(clusters), notes=tuple(notes), sources=(),
        path=src, inventory=Inventory(published=("topology", "frequencies", "idle latencies"),
                                      estimated=("power",), missing=("idle power",)),
        data_notes="read from /sys/devices/system/cpu and /proc/cpuinfo when loaded")
