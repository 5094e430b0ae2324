"""Benchmark workloads of the studies: ``hackbench``, ``job-stream``,
``spec-repeat`` and ``video``.

Each builder writes a WorkloadSpec with :class:`~hetsched.workloads.spec.SpecBuilder`
(semaphores, marks, the task ``perf`` model of docs/engine-interface.md) and states a
metric def whose function, registered below with :func:`~hetsched.workloads.metrics.register`,
turns the run's marks into the number the study reports. Every constant carries its
source: kernel source, one of the studies (docs/reproduce.md), or "assumption" with the reasoning.
docs/workloads-bench.md describes the models; work amounts are invariant work, ns at
capacity 1024 and f_max of the platform's biggest core (rt-app's unit).
"""

from __future__ import annotations

import math

import numpy as np

from hetsched.errors import InputError
from hetsched.workloads.base import Param, WorkloadDef
from hetsched.workloads.metrics import RunView, register
from hetsched.workloads.noise import (NOISE_PARAM, add_kworkers, creation_interval_ns, creation_offsets_ns,
                                      hrtimer_delay_ns, noise_rng)
from hetsched.workloads.spec import SpecBuilder, task

__all__ = ["WORKLOADS", "PROFILES", "SPEC2000_REF_S", "hackbench_buffer_msgs", "hackbench_costs_ns"]

MS = 1_000_000
US = 1_000

# =====================================================================================
# hackbench (perf bench sched messaging; rt-tests hackbench), shared/reference/workloads.md §4
# =====================================================================================

# --- buffer capacity in messages -----------------------------------------------------
# pipe: PIPE_DEF_BUFFERS = 16 slots of one page each (fs/pipe.c, include/linux/pipe_fs_i.h).
# pipe_write() merges a small write into the last slot's page only if it fits
# (offset + chars <= PAGE_SIZE), so a page holds floor(4096 / size) messages and the pipe
# 16 * 40 = 640 messages of 100 B (the "about 655" of 64 KiB / 100 B, less the page tails).
PIPE_DEF_BUFFERS = 16
PAGE_SIZE = 4096
# AF_UNIX stream: the writer blocks in sock_alloc_send_pskb() while sk_wmem_alloc >=
# sk_sndbuf (net/core/sock.c); sk_sndbuf = net.core.wmem_default = SK_WMEM_MAX = 212992
# (include/net/sock.h: _SK_MEM_OVERHEAD * _SK_MEM_PACKETS = SKB_TRUESIZE(256) * 256, which
# fixes SKB_DATA_ALIGN(sizeof(struct sk_buff)) = 256 and SKB_DATA_ALIGN(sizeof(struct
# skb_shared_info)) = 320 on arm64).  Each message is one skb of truesize
# SKB_TRUESIZE(ksize(head) - 320): the head SKB_DATA_ALIGN(size) + 320 comes from the next
# kmalloc size class (__alloc_skb, net/core/skbuff.c); 100 B -> 448 -> kmalloc-512 ->
# truesize 192 + 256 + 320 = 768 B, so ceil(212992 / 768) = 278 messages fit (the last
# one is allowed while wmem is still below sndbuf).  Kernels >= 6.3 take small heads from
# skb_small_head_cache instead (about 896 B, 238 messages): a difference we do not model.
SK_WMEM_MAX = 212_992
SKB_STRUCT_ALIGNED = 256
SKB_SHINFO_ALIGNED = 320
SMP_CACHE_BYTES = 64
KMALLOC_SIZES = (96, 128, 192, 256, 512, 1024, 2048, 4096, 8192)

# --- per-message CPU work (invariant ns) ----------------------------------------------
# Calibration: Learning EAS (Han & Lee 2020) Table 5: "hackbench 1 process 100000"
# (1 group, 20x20 tasks, 100000 loops = 4e7 socket messages) takes 17.5-23.5 s on an
# LG G8 (SM8150, sum of capacity_orig / 1024 = 4.75 big-core equivalents, see
# `hetsched platforms show sm8150`).  That is 0.44-0.59 us of wall time per message, so
# with every CPU busy near f_max about 4.75 * (0.44..0.59) = 2.1-2.8 us of big-core work
# per message, sender and receiver together, wakeups and context switches included.  We
# take 2.0 us (1.1 write + 0.9 read), assuming the CPUs were ~85 % busy at high OPPs.
# The write side is the larger: skb allocation, the copy and the receiver's
# try_to_wake_up() all run in the sender (unix_stream_sendmsg); the read side is the copy
# out and the skb free (unix_stream_read_generic, consume_skb).
SOCKET_WRITE_NS = 1_100
SOCKET_READ_NS = 900
# Assumption: a pipe message costs 0.7x a socket message -- pipe_write/pipe_read copy
# into a page slot with no skb allocation, free or socket locking; perf bench sched
# messaging with -p is commonly reported ~25-35 % faster than the socket default.
PIPE_COST_FACTOR = 0.7
# Process vs thread: the same CPU model; processes have separate mm, so a context switch
# between them also runs switch_mm (arm64: TTBR0/ASID switch, cold TLB entries for the
# new address space) which threads of one mm skip.  Assumption: 75 ns per side per message
# (150 ns of 2 us, 7.5 %), in line with the 5-10 % by which `-t` runs beat process mode.
PROCESS_MM_SWITCH_NS = 75
# Bytes beyond 100 add copy cost: ~0.25 ns/B (a 4 GB/s memcpy on a big core); assumption.
COPY_NS_PER_BYTE = 0.25
HACKBENCH_DEFAULT_SIZE = 100
# Perf model of kernel IPC code (assumption): branchy, pointer-chasing syscall paths gain
# less than average from a wide core (ipc_exp 0.8); the shared buffers' cache lines bounce
# between the sender's and the receiver's cores (mem_frac 0.1); after a migration about
# 2 us of work (task stack, socket, the peer's buffers) runs 50 % slower.
HACKBENCH_PERF = {"ipc_exp": 0.8, "mem_frac": 0.1, "cache_ns": 2_000, "cache_slowdown": 0.5}


def _kmalloc_size(n: int) -> int:
    for s in KMALLOC_SIZES:
        if n <= s:
            return s
    return 1 << (n - 1).bit_length()


def hackbench_buffer_msgs(ipc: str, size: int) -> int:
    """Messages of ``size`` bytes one receiver's pipe or socket holds before a writer
    blocks (see the constants above)."""
    if ipc == "pipe":
        return PIPE_DEF_BUFFERS * (PAGE_SIZE // size)
    head = -(-size // SMP_CACHE_BYTES) * SMP_CACHE_BYTES + SKB_SHINFO_ALIGNED
    truesize = _kmalloc_size(head) - SKB_SHINFO_ALIGNED + SKB_STRUCT_ALIGNED + SKB_SHINFO_ALIGNED
    return -(-SK_WMEM_MAX // truesize)


def hackbench_costs_ns(ipc: str, mode: str, size: int) -> tuple[int, int]:
    """(write, read) invariant work per message, ns."""
    factor = PIPE_COST_FACTOR if ipc == "pipe" else 1.0
    extra = COPY_NS_PER_BYTE * max(0, size - HACKBENCH_DEFAULT_SIZE)
    mm = PROCESS_MM_SWITCH_NS if mode == "process" else 0
    return (round(SOCKET_WRITE_NS * factor + extra + mm), round(SOCKET_READ_NS * factor + extra + mm))


def _hackbench(p: dict, platform_spec: dict, seed: int) -> dict:
    groups, fds, loops, size = p["groups"], p["fds"], p["loops"], p["datasize"]
    ipc, mode = p["ipc"], p["mode"]
    cap = hackbench_buffer_msgs(ipc, size)
    w_ns, r_ns = hackbench_costs_ns(ipc, mode, size)
    name = f"hackbench:groups={groups},fds={fds},loops={loops},ipc={ipc},mode={mode}"
    b = SpecBuilder(name, duration_ns=None)
    ready, go = b.sem("ready", 0), b.sem("go", 0)
    m_go, m_end = b.mark("hackbench.go"), b.mark("hackbench.end")
    n_children = groups * fds * 2
    # the children: write a byte to "ready", poll "wake" (sched-messaging.c ready()). Every
    # wakeup of the benchmark is a pipe's or a socket's, which wake with WF_SYNC
    # (wake_up_interruptible_sync_poll(): pipe_write() and pipe_read() for the other end,
    # sock_def_readable() for a reader, unix_write_space() for a writer, and poll's
    # pollwake() passes the flag on): sem_post_sync throughout
    start = [{"sem_post_sync": ready}, {"sem_wait": go}]
    names = []
    for g in range(groups):
        slots = [b.sem(f"g{g}.r{r}.slots", cap) for r in range(fds)]
        items = [b.sem(f"g{g}.r{r}.items", 0) for r in range(fds)]
        for r in range(fds):
            nm = f"hackbench-g{g}-r{r}"
            names.append(nm)
            b.add(task(nm, [{"loop": 1, "events": start},
                            {"loop": fds * loops, "events": [{"sem_wait": items[r]}, {"run": r_ns},
                                                              {"sem_post_sync": slots[r]}]},
                            {"loop": 1, "events": [{"mark": m_end}]}], perf=HACKBENCH_PERF))
        for s in range(fds):
            nm = f"hackbench-g{g}-s{s}"
            names.append(nm)
            body = []
            for r in range(fds):
                body += [{"sem_wait": slots[r]}, {"run": w_ns}, {"sem_post_sync": items[r]}]
            b.add(task(nm, [{"loop": 1, "events": start}, {"loop": loops, "events": body},
                            {"loop": 1, "events": [{"mark": m_end}]}], perf=HACKBENCH_PERF))
    # the parent: read N ready bytes, start the clock, write the wake byte (one write wakes
    # every poller: N posts at one instant)
    b.add(task("hackbench-main", [{"loop": n_children, "events": [{"sem_wait": ready}]},
                                  {"loop": 1, "events": [{"mark": m_go}]},
                                  {"loop": n_children, "events": [{"sem_post_sync": go}]}]))
    b.metric("hackbench", {"messages": groups * fds * fds * loops, "buffer_msgs": cap,
                           "write_ns": w_ns, "read_ns": r_ns, "main": "hackbench-main"},
             tasks=names, marks=["hackbench.go", "hackbench.end"])
    spec = b.build()
    if p["noise"]:
        # the parent creates the children one after another, in group() order (each
        # group's receivers, then its senders), so they start and reach ready() staggered
        # and sit where those moments put them when the wake byte arrives
        rng = noise_rng(seed, 0x4AC6)
        children = [t for t in spec["tasks"] if t["name"] != "hackbench-main"]
        for t, off in zip(children, creation_offsets_ns(rng, len(children))):
            t["delay_ns"] = off
        add_kworkers(spec, platform_spec, rng)
    return spec


@register("hackbench")
def hackbench_metric(d: dict, view: RunView) -> dict:
    """``completion_s``: last child's end - GO, what hackbench prints as ``Time:``."""
    mine = set(d["tasks"])
    go = [t for t, task_, m in view.marks if m == "hackbench.go" and task_ == d["params"]["main"]]
    ends = [t for t, task_, m in view.marks if m == "hackbench.end" and task_ in mine]
    done = len(ends) == len(mine) and bool(go)
    out = {"completion_s": (max(ends) - min(go)) / 1e9 if done else None,
           "completed": 1 if done else 0, "tasks_done": len(ends), "tasks": len(mine),
           "messages": d["params"]["messages"], "buffer_msgs": d["params"]["buffer_msgs"]}
    out["msgs_per_s"] = (out["messages"] / out["completion_s"]) if done and out["completion_s"] > 0 else None
    return out


# =====================================================================================
# CPU-bound job profiles: job-stream (Kim et al. §IV.A) and spec-repeat (Fedorova et al. §2)
# =====================================================================================

# SPEC CPU2000 reference times, s (the Sun Ultra 5_10 reference machine; SPEC's published
# ratio denominators), for the eight benchmarks of Fedorova et al. §2.2.  Their ratios fix the
# relative job sizes; `scale_ms` (ms of work per 1000 reference s) fixes the absolute size.
SPEC2000_REF_S = {"gzip": 1400, "mcf": 1800, "twolf": 3000, "parser": 1800,
                  "vortex": 1900, "art": 2600, "mesa": 1400, "equake": 1300}

# Perf models (assumptions, from the benchmarks' published characterisations: SPEC's
# descriptions and the usual memory-boundedness rankings, where mcf, art and equake have
# the highest L2 miss rates and gzip, mesa, vortex and h264ref the lowest).  ipc_exp > 1:
# gains more than the DMIPS ratio from a big core (high ILP, compute-bound); < 1: less
# (memory- or branch-bound).  mem_frac: share of time at the biggest core's f_max stalled
# on DRAM.  cache_ns: work run cold after a migration, about a 1-2 MiB L2 refilled at a few
# GB/s (400 us), longer for large working sets; cache_slowdown: how much slower.
#          ipc_exp, mem_frac, cache_ns, cache_slowdown
_PERF = {
    "h264ref": (1.3, 0.02, 400 * US, 0.2),   # video encoder: SIMD-friendly, compute-bound (Kim et al.: "CPU intensive")
    "gcc":     (1.0, 0.15, 400 * US, 0.3),   # branchy compiler, moderately memory-bound
    "gzip":    (1.1, 0.03, 200 * US, 0.2),   # compression, small working set
    "mcf":     (0.7, 0.55, 800 * US, 0.5),   # network simplex, pointer chasing, DRAM-bound
    "twolf":   (0.9, 0.20, 400 * US, 0.4),   # place and route, cache-sensitive
    "parser":  (1.0, 0.12, 400 * US, 0.3),   # link grammar parser, integer
    "vortex":  (1.1, 0.08, 400 * US, 0.3),   # object database, integer
    "art":     (0.8, 0.45, 800 * US, 0.5),   # neural net image recognition, streaming FP
    "mesa":    (1.2, 0.02, 200 * US, 0.2),   # 3-D graphics library, FP compute
    "equake":  (0.85, 0.35, 800 * US, 0.4),  # earthquake FEM, sparse FP, memory-bound
}
# Work per job, ms of invariant work at the default scale:
# gcc: Kim et al. measured mu_gcc = 14.3 tasks/s per virtual CPU, ~70 ms per 3.4 KB compile
#   on a Galaxy S4 (Exynos 5410, A15 at 1.6 GHz at high load); 70 ms * 1.6/2.0 = 56 ms at an
#   A15 at 2.0 GHz (the Exynos 5422's big f_max).
# h264ref: Kim et al. encode two frames per task; assumption: ~0.6 s per frame for the JM
#   reference encoder (CIF, SPEC input) on an A15 at 2.0 GHz -> 1200 ms; consistent with
#   one task per 3 s (lambda = 1/3) being a light, non-overlapping stream.
# SPEC2000: reference s * 0.1 ms (scale_ms = 100 per 1000 s): gzip 140 ms ... twolf 300 ms.
_WORK_MS = {"h264ref": 1200.0, "gcc": 56.0}


def _profile_work_ns(name: str, scale_ms: float) -> int:
    if name in _WORK_MS:
        return round(_WORK_MS[name] * MS)
    return round(SPEC2000_REF_S[name] / 1000.0 * scale_ms * MS)


PROFILES = tuple(_PERF)


def _perf(name: str) -> dict:
    e, m, c, s = _PERF[name]
    return {"ipc_exp": e, "mem_frac": m, "cache_ns": c, "cache_slowdown": s}


def _stats(xs: list[float], prefix: str) -> dict:
    if not xs:
        return {f"{prefix}n": 0, f"{prefix}min_s": None, f"{prefix}max_s": None,
                f"{prefix}mean_s": None, f"{prefix}std_s": None}
    a = np.asarray(xs, dtype=float)
    return {f"{prefix}n": int(a.size), f"{prefix}min_s": float(a.min()), f"{prefix}max_s": float(a.max()),
            f"{prefix}mean_s": float(a.mean()), f"{prefix}std_s": float(a.std())}


# --- job-stream ----------------------------------------------------------------------

def _arrivals(n: int, rate: float, kind: str, rng: np.random.Generator) -> list[int]:
    if kind == "fixed":  # deterministic arrivals, as Kim et al.'s test generator
        return [round(i / rate * 1e9) for i in range(n)]
    gaps = rng.exponential(1.0 / rate, size=n)   # Poisson process: exponential gaps
    gaps[0] = 0.0                                  # the first job arrives at t = 0
    return [round(x * 1e9) for x in np.cumsum(gaps)]


def _job_stream(p: dict, platform_spec: dict, seed: int) -> dict:
    rng = np.random.default_rng([seed, 0x10B5])
    n, rate = p["jobs"], p["rate"]
    name = f"job-stream:profile={p['profile']},rate={rate:g},arrival={p['arrival']},jobs={n}"
    b = SpecBuilder(name, duration_ns=None)
    m_start, m_end = b.mark("job.start"), b.mark("job.end")
    times = _arrivals(n, rate, p["arrival"], rng)
    stream = []
    pool = [x for x in PROFILES if x != "h264ref"]
    for i, t in enumerate(times):
        prof = p["profile"] if p["profile"] != "mix" else pool[int(rng.integers(len(pool)))]
        stream.append((t, prof))
    if p["h264ref_rate"] > 0:  # Kim et al.: a deterministic h264ref stream at 1/3 per s beside gcc
        span = times[-1]
        k = int(span * p["h264ref_rate"] / 1e9) + 1
        stream += [(round(i / p["h264ref_rate"] * 1e9), "h264ref") for i in range(k)]
    names, arrivals, profiles = [], [], []
    # a study that calibrates the jobs to a measured service rate sets their size directly
    # (0: the profile's own size)
    main_ns = round(p["job_ms"] * MS) if p["job_ms"] > 0 else None
    side_ns = round(p["h264ref_ms"] * MS) if p["h264ref_ms"] > 0 else None
    n_main = len(times)
    stream = [(t, prof, i < n_main) for i, (t, prof) in enumerate(stream)]
    stream.sort(key=lambda x: x[0])
    nrng = noise_rng(seed, 0x10B5) if p["noise"] else None
    for i, (t, prof, main) in enumerate(stream):
        nm = f"job-{prof}-{i:04d}"
        work = main_ns if main else side_ns
        # a job is a task created at its arrival time (delay_ns) that runs its work and
        # exits; the generator that starts it sleeps until then (an hrtimer, late by its
        # slack) and creates it (a process creation interval)
        start = t
        if nrng is not None:
            start += hrtimer_delay_ns(nrng) + creation_interval_ns(nrng)
        b.add(task(nm, [{"loop": 1, "events": [{"mark": m_start},
                                               {"run": work if work is not None
                                                else _profile_work_ns(prof, p["scale_ms"])},
                                               {"mark": m_end}]}],
                   nice=p["nice"], delay_ns=start, perf=_perf(prof)))
        names.append(nm)
        arrivals.append(t)
        profiles.append(prof)
    b.metric("job-stream", {"arrivals_ns": arrivals, "profiles": profiles}, tasks=names,
             marks=["job.start", "job.end"])
    spec = b.build()
    if nrng is not None:
        add_kworkers(spec, platform_spec, nrng)
    return spec


@register("job-stream")
def job_stream_metric(d: dict, view: RunView) -> dict:
    """Completion (response) time = end mark - arrival, per profile and overall; throughput
    = completed jobs / (last end - first arrival)."""
    names = d["tasks"]
    arr = dict(zip(names, d["params"]["arrivals_ns"]))
    prof = dict(zip(names, d["params"]["profiles"]))
    ends = {task_: t for t, task_, m in view.marks if m == "job.end" and task_ in arr}
    starts = {task_: t for t, task_, m in view.marks if m == "job.start" and task_ in arr}
    out: dict = {"jobs": len(names), "completed": len(ends)}
    resp = {nm: (ends[nm] - arr[nm]) / 1e9 for nm in ends}
    out.update(_stats(list(resp.values()), ""))
    waits = [(starts[nm] - arr[nm]) / 1e9 for nm in starts]
    out["start_delay_mean_s"] = float(np.mean(waits)) if waits else None
    for pr in sorted(set(prof.values())):
        out.update(_stats([v for nm, v in resp.items() if prof[nm] == pr], f"{pr}."))
    span = (max(ends.values()) - min(arr.values())) / 1e9 if ends else 0.0
    out["throughput_jobs_per_s"] = len(ends) / span if span > 0 else None
    # Fedorova et al.'s CAB / RTF / IPC (jitter per profile) as hcs.*, for hcs-balance and hcs-td
    runs = {nm: [(ends[nm] - starts[nm]) / 1e9] for nm in ends if nm in starts}
    out.update(_hcs_metrics(view.doc, names, {nm: prof[nm] for nm in names}, runs))
    return out


# --- spec-repeat ---------------------------------------------------------------------

SPEC_SETS = {
    "spec2000": ("gzip", "mcf", "twolf", "parser", "vortex", "art", "mesa", "equake"),  # Fedorova et al. §2.2
    "int4": ("gzip", "mcf", "twolf", "parser"),                                         # Fedorova et al. §2.3
}


def _parse_nices(text: str) -> list[int]:
    out = []
    for part in str(text).split(":"):
        try:
            v = int(part)
        except ValueError:
            raise InputError("--workload spec-repeat", "nice",
                             "nice levels in -20..19 separated by ':' (e.g. 8:0:0:0)", got=text) from None
        if not -20 <= v <= 19:
            raise InputError("--workload spec-repeat", "nice", "nice levels in -20..19", got=v)
        out.append(v)
    return out


# Fedorova et al. ran 8 jobs on 2 CPUs: 4 runnable jobs per CPU.  copies=0 keeps that ratio on any
# platform (copies of each benchmark = round(4 * CPUs / jobs of the set), at least 1).
SPEC_JOBS_PER_CPU = 4


def _spec_repeat(p: dict, platform_spec: dict, seed: int) -> dict:
    jobs = SPEC_SETS[p["set"]]
    nices = _parse_nices(p["nice"])
    if len(nices) > len(jobs):
        raise InputError("--workload spec-repeat", "nice", f"at most {len(jobs)} levels (one per benchmark)",
                         got=p["nice"])
    k = p["repeats"]
    ncpu = sum(len(c["cpus"]) for c in platform_spec["clusters"])
    copies = p["copies"] or max(1, round(SPEC_JOBS_PER_CPU * ncpu / len(jobs)))
    name = f"spec-repeat:set={p['set']},repeats={k},nice={p['nice']},copies={copies}"
    b = SpecBuilder(name, duration_ns=None)
    m_start, m_end = b.mark("job.start"), b.mark("job.end")
    work = {j: _profile_work_ns(j, p["scale_ms"]) for j in jobs}
    longest = max(work.values())
    names, nice_of = [], {}
    for c in range(copies):
        for i, j in enumerate(jobs):
            nm = f"spec-{j}-{c}"
            # Fedorova et al.: "we restart each benchmark once it is finished until each benchmark
            # completes at least five times": the longest job runs `repeats` times; a
            # shorter one enough more times to keep running as long under an equal share,
            # so the first `repeats` runs of every job see the full mix (the metric reads
            # only those).
            loops = max(k, math.ceil(k * longest / work[j]))
            nice = nices[i % len(nices)]
            b.add(task(nm, [{"loop": loops, "events": [{"mark": m_start}, {"run": work[j]}, {"mark": m_end}]}],
                       nice=nice, perf=_perf(j)))
            names.append(nm)
            nice_of[nm] = nice
    b.metric("spec-repeat", {"repeats": k, "benchmarks": list(jobs),
                             "nice": [nice_of[n] for n in names]}, tasks=names,
             marks=["job.start", "job.end"])
    spec = b.build()
    if p["noise"]:
        # the script starts the jobs one after another. No kernel workers: the hmc-balance
        # study rebuilds its processes from every started task of this spec, and would take
        # a worker for a benchmark (docs/workloads.md, "Run-to-run variation")
        offsets = creation_offsets_ns(noise_rng(seed, 0x5BEC), len(spec["tasks"]))
        for t, off in zip(spec["tasks"], offsets):
            t["delay_ns"] = off
    return spec


@register("spec-repeat")
def spec_repeat_metric(d: dict, view: RunView) -> dict:
    """Per benchmark (all its copies): min/max/mean/std of each copy's first ``repeats``
    completion times (start mark to end mark of one run), the same normalised to the mean
    (Fedorova et al.'s figures 1-5) and the coefficient of variation; ``mean_cv`` averages it
    over the benchmarks; throughput = every completed run / (last end - first start)."""
    k = d["params"]["repeats"]
    names = d["tasks"]
    runs: dict[str, list[float]] = {n: [] for n in names}
    open_: dict[str, int] = {}
    first, last, total = None, None, 0
    for t, task_, m in view.marks:
        if task_ not in runs:
            continue
        if m == "job.start":
            open_[task_] = t
            first = t if first is None else min(first, t)
        elif m == "job.end" and task_ in open_:
            total += 1
            last = t
            if len(runs[task_]) < k:
                runs[task_].append((t - open_.pop(task_)) / 1e9)
    out: dict = {"completed_runs": total, "all_reached_repeats": int(all(len(v) >= k for v in runs.values()))}
    norm_spread = []
    for bm in d["params"]["benchmarks"]:
        xs = [x for n in names if n.rsplit("-", 1)[0] == f"spec-{bm}" for x in runs[n]]
        out.update(_stats(xs, f"{bm}."))
        if xs:
            mu = float(np.mean(xs))
            out[f"{bm}.max_over_mean"] = max(xs) / mu
            out[f"{bm}.min_over_mean"] = min(xs) / mu
            out[f"{bm}.cv"] = float(np.std(xs)) / mu
            norm_spread.append(out[f"{bm}.cv"])
    out["mean_cv"] = float(np.mean(norm_spread)) if norm_spread else None
    span = (last - first) / 1e9 if first is not None and last is not None else 0.0
    out["throughput_jobs_per_s"] = total / span if span > 0 else None
    # Fedorova et al.'s CAB / RTF / IPC / jitter as hcs.*, for hcs-balance and hcs-td
    out.update(_hcs_metrics(view.doc, names, {n: n.rsplit("-", 1)[0] for n in names}, runs))
    return out


def _hcs_metrics(doc: dict, names: list[str], groups: dict[str, str], runs: dict[str, list[float]]) -> dict:
    """Fedorova et al.'s metrics (hetsched.core_assignment) as flat ``hcs.*`` keys, the per-job
    detail under ``hcs_jobs``; nothing for a document without per-CPU results."""
    if "cpus" not in doc:
        return {}
    from hetsched.core_assignment import core_assignment_metrics

    m = core_assignment_metrics(doc, tasks=names, groups=groups, runs=runs)
    jobs = m.pop("jobs")
    return {**{f"hcs.{k}": v for k, v in m.items()}, "hcs_jobs": jobs}


# =====================================================================================
# video: software decode with ~21 threads at 30 fps (Kim et al. §IV.B, MX Player)
# =====================================================================================

# Decode work per frame (assumption): FFmpeg's H.264 decoder (NEON) does 1080p at roughly
# 40-50 fps on one A15 at 2.0 GHz for a typical 8-10 Mbit/s stream, i.e. ~20-25 ms of work
# per frame; we take 20 ms at the reference, split over the worker threads (slices/rows).
VIDEO_FRAME_MS = 20.0
# Per-frame serial work in the pacing thread: bitstream parse, hand-off, and the frame
# queued to the renderer (assumption: 1.0 ms + 0.3 ms).
VIDEO_PARSE_NS = 1_000_000
VIDEO_PRESENT_NS = 300_000
# GOP structure (assumption): IBBP with a 12-frame GOP, common for camera/broadcast H.264;
# relative decode cost I 1.6, P 1.0, B 0.8 (I frames carry 3-5x the bits but no motion
# compensation; B frames the fewest bits), normalised below to a GOP mean of 1.
GOP = "IBBPBBPBBPBB"
FRAME_COST = {"I": 1.6, "P": 1.0, "B": 0.8}
# Variation (assumption): scene complexity per frame lognormal sigma 0.10; per-thread
# share of a frame (slice content) lognormal sigma 0.25.
FRAME_SIGMA, SLICE_SIGMA = 0.10, 0.25
# Threads: the pacing thread at Android's THREAD_PRIORITY_DISPLAY (nice -4); decoder
# workers at the app's default nice 0.  Perf: NEON-heavy, ipc_exp 1.0; reference frames
# streamed from DRAM, mem_frac 0.1; a worker's slice state cold after a migration (300 us).
VIDEO_MASTER_NICE = -4
VIDEO_PERF = {"ipc_exp": 1.0, "mem_frac": 0.1, "cache_ns": 300 * US, "cache_slowdown": 0.3}


# Frames are unrolled (each has its own work and split) up to VIDEO_UNROLL_FRAMES, 10 s
# at 30 fps; a longer clip repeats that sequence (phase loops), keeping the spec small.
VIDEO_UNROLL_FRAMES = 300


def _video(p: dict, platform_spec: dict, seed: int) -> dict:
    rng = np.random.default_rng([seed, 0x71DE0])
    w, fps = p["threads"], p["fps"]
    frames = max(1, round(p["seconds"] * fps))
    period = round(1e9 / fps)
    gop_mean = sum(FRAME_COST[c] for c in GOP) / len(GOP)
    per_frame = VIDEO_FRAME_MS * MS * p["load"]
    name = f"video:threads={w},fps={fps:g},seconds={p['seconds']:g},load={p['load']:g}"
    b = SpecBuilder(name, duration_ns=None)
    tm = b.timer("video.vsync")
    work = [b.sem(f"video.work{i}", 0) for i in range(w)]
    done = b.sem("video.done", 0)
    m_start, m_done = b.mark("frame.start"), b.mark("frame.done")
    base = min(frames, VIDEO_UNROLL_FRAMES)
    master: list[list[dict]] = []                       # per frame of the unrolled sequence
    workers: list[list[list[dict]]] = [[] for _ in range(w)]
    for f in range(base):
        cost = FRAME_COST[GOP[f % len(GOP)]] / gop_mean * float(rng.lognormal(0.0, FRAME_SIGMA))
        shares = rng.lognormal(0.0, SLICE_SIGMA, size=w)
        shares = shares / shares.sum()
        ev = [{"timer": {"id": tm, "period_ns": period, "mode": "relative"}}, {"mark": m_start},
              {"run": round(VIDEO_PARSE_NS * p["load"])}]
        ev += [{"sem_post": s} for s in work]
        ev += [{"sem_wait": done}] * w
        ev += [{"run": round(VIDEO_PRESENT_NS * p["load"])}, {"mark": m_done}]
        master.append(ev)
        for i in range(w):
            workers[i].append([{"sem_wait": work[i]}, {"run": max(1, round(per_frame * cost * shares[i]))},
                               {"sem_post": done}])
    q, r = divmod(frames, base)

    def phases(per_frame_events: list[list[dict]]) -> list[dict]:
        out = [{"loop": q, "events": [e for fr in per_frame_events for e in fr]}]
        if r:
            out.append({"loop": 1, "events": [e for fr in per_frame_events[:r] for e in fr]})
        return out
    b.add(task("video-master", phases(master), nice=VIDEO_MASTER_NICE, perf=VIDEO_PERF))
    for i in range(w):
        b.add(task(f"video-worker-{i}", phases(workers[i]), perf=VIDEO_PERF))
    b.metric("video", {"fps": fps, "period_ns": period, "frames": frames, "skip_s": p["skip_s"]},
             tasks=["video-master"], marks=["frame.start", "frame.done"])
    spec = b.build()
    if p["noise"]:
        add_kworkers(spec, platform_spec, noise_rng(seed, 0x71DE0))
    return spec


@register("video")
def video_metric(d: dict, view: RunView) -> dict:
    """Frames done per 1-s window from t = 0; the first ``skip_s`` windows (warm-up) and the
    last, partial one are left out (Kim et al. left out 2 s at each end); mean and population std
    of the per-window FPS.  ``late_frames``: frames whose decode took longer than a period."""
    mine = set(d["tasks"])
    prm = d["params"]
    starts = [t for t, task_, m in view.marks if m == "frame.start" and task_ in mine]
    dones = [t for t, task_, m in view.marks if m == "frame.done" and task_ in mine]
    out: dict = {"frames": len(dones), "frames_expected": prm["frames"]}
    lat = [(e - s) / 1e6 for s, e in zip(starts, dones)]
    out["frame_time_ms_mean"] = float(np.mean(lat)) if lat else None
    out["frame_time_ms_max"] = float(np.max(lat)) if lat else None
    out["late_frames"] = int(sum(x * 1e6 > prm["period_ns"] for x in lat))
    if not dones:
        out.update({"mean_fps": None, "std_fps": None, "windows": 0})
        return out
    end_ns = dones[-1] if len(dones) == prm["frames"] else view.duration_ns
    n_win = int(end_ns // 1_000_000_000)
    skip = int(prm["skip_s"])
    counts = np.bincount(np.asarray(dones, dtype=np.int64) // 1_000_000_000, minlength=n_win + 1)[:n_win]
    counts = counts[skip:]
    out["windows"] = int(counts.size)
    out["mean_fps"] = float(counts.mean()) if counts.size else None
    out["std_fps"] = float(counts.std()) if counts.size else None
    return out


WORKLOADS: dict[str, WorkloadDef] = {
    "hackbench": WorkloadDef(
        "hackbench",
        (
            Param("groups", int, 10, 1, 100, "groups of fds senders + fds receivers"),
            Param("fds", int, 20, 1, 64, "senders and receivers per group"),
            Param("loops", int, 100, 1, 10_000_000, "messages each sender writes to each receiver"),
            Param("datasize", int, 100, 1, 4096, "bytes per message"),
            Param("ipc", str, "socket", None, None, "AF_UNIX stream sockets or pipes (-p)",
                  choices=("socket", "pipe")),
            Param("mode", str, "process", None, None, "processes, or threads (-t/-T)",
                  choices=("process", "thread")),
            NOISE_PARAM,
        ),
        _hackbench,
        "hackbench / perf bench sched messaging: all-to-all blocking messages; metric: completion time",
    ),
    "job-stream": WorkloadDef(
        "job-stream",
        (
            Param("profile", str, "gcc", None, None, "job profile ('mix': uniform over all but h264ref)",
                  choices=PROFILES + ("mix",)),
            Param("rate", float, 20.0, 0.001, 100_000.0, "arrivals per second"),
            Param("arrival", str, "fixed", None, None, "deterministic or Poisson arrivals",
                  choices=("fixed", "poisson")),
            Param("jobs", int, 100, 1, 100_000, "number of jobs of the stream"),
            Param("h264ref_rate", float, 0.0, 0.0, 100.0,
                  "a second, deterministic h264ref stream per second (Kim et al.: 1/3), 0 = none"),
            Param("nice", int, 0, -20, 19, "nice level of every job"),
            Param("scale_ms", float, 100.0, 0.01, 1_000_000.0,
                  "ms of work per 1000 s of SPEC2000 reference time (SPEC2000 profiles)"),
            Param("job_ms", float, 0.0, 0.0, 1_000_000.0,
                  "ms of work of every job of the main stream (at the biggest core's f_max), 0 = the profile's"),
            Param("h264ref_ms", float, 0.0, 0.0, 1_000_000.0,
                  "ms of work of every job of the h264ref stream, 0 = the profile's (1200)"),
            NOISE_PARAM,
        ),
        _job_stream,
        "CPU-bound jobs (SPEC-like profiles) arriving at a rate; metrics: completion times, throughput",
    ),
    "spec-repeat": WorkloadDef(
        "spec-repeat",
        (
            Param("set", str, "spec2000", None, None, "the 8 benchmarks of Fedorova et al. §2.2 or the 4 of §2.3",
                  choices=tuple(SPEC_SETS)),
            Param("repeats", int, 5, 1, 10_000, "completions of every job (Fedorova et al.: five)"),
            Param("nice", str, "0", None, None, "nice levels by job, ':'-separated, cycled (e.g. 8:0:0:0)"),
            Param("scale_ms", float, 100.0, 0.01, 1_000_000.0, "ms of work per 1000 s of SPEC reference time"),
            Param("copies", int, 0, 0, 1000, "instances of each benchmark; 0 = 4 jobs per CPU as in Fedorova et al."),
            NOISE_PARAM,
        ),
        _spec_repeat,
        "SPEC-like jobs run together and restarted until each completed K times; completion-time jitter",
    ),
    "video": WorkloadDef(
        "video",
        (
            Param("threads", int, 21, 1, 256, "decoder worker threads (Kim et al.: 21)"),
            Param("fps", float, 30.0, 1.0, 240.0, "frame rate of the clip"),
            Param("seconds", float, 10.0, 0.1, 3600.0,
                  "clip length, s (Kim et al.: 31); frames past 300 repeat the first 300"),
            Param("load", float, 1.0, 0.01, 50.0, "multiplies the decode work (1 = 1080p H.264)"),
            Param("skip_s", int, 1, 0, 60, "warm-up windows left out of the FPS statistics"),
            NOISE_PARAM,
        ),
        _video,
        "software video decode: a 30 fps pacing thread feeding ~21 decoder threads; metrics: FPS mean, std",
    ),
}
