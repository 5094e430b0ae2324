"""hmc-balance: paper 004 (Fedorova, Vengerov, Doucette), Figs. 1-5 and the §5 TD scheduler.

The paper's experiments (§2.1-2.3, §3) on the built-in twins of its machine:

* Figs. 1, 2, 5: the eight SPEC CPU2000 jobs run together on two CPUs, each restarted
  until it completed five times; per benchmark min, max and standard deviation of its
  run times, normalised to its mean. Fig. 1 homogeneous (cfs), Fig. 2 heterogeneous
  (cfs), Fig. 5 heterogeneous with the balanced core assignment (hcs-balance).
* Figs. 3-4: gzip, mcf, twolf, parser together, one of them at nice 0/4/8/12, the
  others at 0; its mean/min/max/std run time per nice level, homogeneous and heterogeneous.
* §5: the TD(0) benefit-function scheduler (hcs-td), which the paper only outlines: its
  system IPC / CAB / RTF beside cfs and hcs-balance, and how the a, b weights move it.

The text of the paper gives no bar values, only statements about them; every row has
the paper's value None and, where the text states a direction (e.g. "Standard deviations
in the homogeneous setup are also smaller"), the row's direction is checked against that
statement. See docs/studies/hmc-balance.md.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from hetsched.reproduce.core import SAME_TOLERANCE, Context, Row, Run, StudyResult, mean_ci, row_from

STUDY = "hmc-balance"
TITLE = "hmc-balance: balanced core assignment and the TD scheduler (paper 004)"
PAPER = ('A. Fedorova, D. Vengerov, D. Doucette, "Operating System Scheduling On Heterogeneous Core '
         'Systems" (shared/papers/004_665cc04479f740f2.txt)')

HOMO, HETERO = "hetero-2cpu-homogeneous", "hetero-2cpu"
BENCH8 = ("gzip", "mcf", "twolf", "parser", "vortex", "art", "mesa", "equake")  # §2.2
INT4 = ("gzip", "mcf", "twolf", "parser")  # §2.3: "the first four of our eight benchmarks"
NICES = (0, 4, 8, 12)  # §2.3
REPEATS = 5  # §2.2 "until each benchmark completes at least five times"; §2.3 "five times"
FAST_CPU = 0  # hetero-2cpu: CPU 0 at 2.8 GHz, CPU 1 clock-modulated to 1.05 GHz

# Seeds. The engine and spec-repeat are deterministic, so one configuration run twice
# gives one result; what differs between two real runs of the experiment is its start:
# the script launching the jobs starts them a few ms apart, in whatever order and on
# whichever CPU they land. Each seed draws every job's launch offset uniformly in
# [0, LAUNCH_SPREAD_MS) (assumption: about one CFS period on two CPUs, 6-12 ms), and the
# scheduler's dynamics do the rest.
LAUNCH_SPREAD_MS = 10.0


# ----------------------------------------------------------------------------- the computation

def normalised_spread(times: Sequence[float]) -> dict[str, float]:
    """Figs. 1, 2, 5's bars of one benchmark: min, max and standard deviation of its run
    times over their mean ("normalized against the mean ... The mean running time
    corresponds to '1'"). The population standard deviation (ddof 0), as the spec-repeat
    workload's metric: the paper says only "standard deviation from the average"."""
    a = np.asarray(list(times), dtype=float)
    if a.size == 0:
        return {"mean_s": math.nan, "min": math.nan, "max": math.nan, "std": math.nan}
    mu = float(a.mean())
    return {"mean_s": mu, "min": float(a.min()) / mu, "max": float(a.max()) / mu, "std": float(a.std()) / mu}


def runtime_stats(times: Sequence[float]) -> dict[str, float]:
    """Figs. 3-4's bars of one benchmark at one nice level, in seconds: mean, min, max
    and the (population) standard deviation of its run times."""
    a = np.asarray(list(times), dtype=float)
    if a.size == 0:
        return {"mean": math.nan, "min": math.nan, "max": math.nan, "std": math.nan}
    return {"mean": float(a.mean()), "min": float(a.min()), "max": float(a.max()), "std": float(a.std())}


def bench_of(task_name: str) -> str:
    """The benchmark of a job's task: ``spec-<bench>-<copy>`` and its restarts
    (``spec-<bench>-r<i>`` and the forks ``spec-<bench>-r<i>-<nnnn>``)."""
    return task_name.split("-")[1]


def job_runs(doc: dict, mark_names: Sequence[str]) -> dict[str, list[tuple[int, float]]]:
    """Per benchmark, its completed runs in the order they ended, as (end time ns, run
    time s), from the job.start / job.end marks of all its processes (``mark_names``: the
    workload's mark list, which the marks index)."""
    names = [t["name"] for t in doc["tasks"]]
    start_i, end_i = list(mark_names).index("job.start"), list(mark_names).index("job.end")
    open_: dict[str, int] = {}
    out: dict[str, list[tuple[int, float]]] = {}
    for t, ti, mi in doc.get("marks", []):
        task = names[ti]
        if mi == start_i:
            open_[task] = int(t)
        elif mi == end_i and task in open_:
            out.setdefault(bench_of(task), []).append((int(t), (int(t) - open_.pop(task)) / 1e9))
    for v in out.values():
        v.sort()
    return out


def experiment_runs(runs: dict[str, list[tuple[int, float]]], k: int, jobs: Sequence[str],
                    measured: Sequence[str] | None = None) -> dict[str, list[float]] | None:
    """The run times the paper measured, per benchmark (``runs``: :func:`job_runs`).

    §2.2 (``measured`` None): the jobs are restarted "until each benchmark completes at
    least five times", so the experiment ends when the last one completes its k-th run, and
    every run completed by then counts. §2.3 (``measured``: the niced benchmark(s)): each
    is "run five times": its first k runs. ``jobs``: every benchmark. None while a
    benchmark that counts has fewer than k runs."""
    if measured is not None:
        if any(len(runs.get(m, [])) < k for m in measured):
            return None
        return {m: [x for _, x in runs[m][:k]] for m in measured}
    if any(len(runs.get(j, [])) < k for j in jobs):
        return None
    t_stop = max(runs[j][k - 1][0] for j in jobs)
    return {j: [x for end, x in runs[j] if end <= t_stop] for j in jobs}


def launch_offsets_ns(n: int, seed: int, spread_ms: float = LAUNCH_SPREAD_MS) -> list[int]:
    """The jobs' launch offsets of one seed (see LAUNCH_SPREAD_MS)."""
    rng = np.random.default_rng([seed, 0x004])
    return [int(x) for x in rng.uniform(0.0, spread_ms * 1e6, size=n)]



def restart_workload(base: dict, repeats: int, measured: str = "", offsets: Sequence[int] = ()) -> dict:
    """The paper's procedure as a WorkloadSpec, from spec-repeat's jobs (``base``: their
    work, perf models, nice levels): each run of a benchmark is a process of its own, and
    when it finishes the next is started ("we restart each benchmark once it is
    finished"): the last event of a run forks the next run, which the scheduler places
    like any new process, and the finished one exits. spec-repeat instead loops one task,
    which keeps its CPU from one run to the next; where a restarted process lands is what
    changes a job's core from run to run.

    Every benchmark restarts for as long as the experiment runs, except ``measured``
    (§2.3), which runs exactly ``repeats`` times. ``offsets``: each job's launch delay, ns."""
    jobs = [t for t in base["tasks"] if t.get("start", True)]
    start_i, end_i = base["marks"].index("job.start"), base["marks"].index("job.end")
    first, later = [], []
    n = len(jobs)

    def job_task(t: dict, name: str, fork_to: int | None, start: bool, delay: int) -> dict:
        (phase,) = t["phases"]
        work = next(e["run"] for e in phase["events"] if "run" in e)
        events = [{"mark": start_i}, {"run": work}, {"mark": end_i}]
        if fork_to is not None:
            events.append({"fork": fork_to})
        out = {k: v for k, v in t.items() if k not in ("phases", "loop", "delay_ns", "name", "start")}
        return {**out, "name": name, "start": start, "loop": 1, "delay_ns": delay,
                "phases": [{"loop": 1, "events": events}]}

    for i, t in enumerate(jobs):
        bench = bench_of(t["name"])
        delay = int(offsets[i]) if i < len(offsets) else 0
        if bench == measured:
            # a chain of `repeats` processes: run r forks run r + 1, the last forks nothing
            idx = [i] + [n + len(later) + r for r in range(repeats - 1)]
            first.append(job_task(t, t["name"], idx[1] if repeats > 1 else None, True, delay))
            for r in range(1, repeats):
                later.append(job_task(t, f"spec-{bench}-r{r}", idx[r + 1] if r + 1 < repeats else None, False, 0))
        else:
            # one template that forks itself: the restarts never stop
            tpl = n + len(later)
            first.append(job_task(t, t["name"], tpl, True, delay))
            later.append(job_task(t, f"spec-{bench}-r", tpl, False, 0))
    spec = {k: v for k, v in base.items() if k not in ("tasks", "metric_defs", "name")}
    # the run times are read here from the marks (spec-repeat's metric reads one task per job)
    spec["metric_defs"] = []
    spec["name"] = f"hmc-balance restarts of {base.get('name', '')}"
    spec["tasks"] = first + later
    return spec


def simulate(seed: int, platform: str, scheduler: str, jobs: str = "spec2000", nice: str = "0",
             measured: str = "", scale_ms: float = 10_000.0, repeats: int = REPEATS, knobs: tuple = (),
             launch_ms: float = LAUNCH_SPREAD_MS) -> dict:
    """One experiment in a worker (:func:`restart_workload` on ``platform``): ``measured``
    "" (§2.2) until every benchmark completed ``repeats`` runs; ``measured`` a benchmark
    (§2.3) until it has run ``repeats`` times. The jobs start at this seed's launch offsets.

    Returns per measured benchmark B its run-time statistics (``B.min_n``, ``B.max_n``,
    ``B.std_n`` normalised to the mean; ``B.mean_s`` ... in seconds; ``B.n`` runs), the
    share of its CPU time on the fast CPU (``B.fast``), and paper 004's system metrics
    over the experiment's completed runs (``ipc``, ``cab_pct``, ``rtf_pct``, ...)."""
    from hetsched.metrics004 import F_MARGIN, metrics_004
    from hetsched.platforms import load_platform
    from hetsched.sim import Simulation
    from hetsched.workloads.builtin import resolve_workloads

    plat = load_platform(platform)
    # copies=1: the paper ran one instance of each benchmark (8 jobs, §2.2; 4 jobs, §2.3)
    wl = f"spec-repeat:set={jobs},repeats={repeats},nice={nice},scale_ms={scale_ms:g},copies=1"
    base = resolve_workloads([wl], plat.to_spec(), seed)
    benches = [bench_of(t["name"]) for t in base["tasks"]]
    if measured and measured not in benches:
        raise ValueError(f"measured benchmark {measured!r} not in {jobs}")
    work = {bench_of(t["name"]): next(e["run"] for e in t["phases"][0]["events"] if "run" in e)
            for t in base["tasks"]}
    launch = launch_offsets_ns(len(benches), seed, launch_ms)
    spec = restart_workload(base, repeats, measured, launch)
    # governor: one OPP per CPU on both platforms (the study fixed the clocks); performance
    # says so and has no sampling of its own
    sim = Simulation(platform=plat, workload=spec, scheduler=scheduler, governor="performance",
                     knobs=dict(knobs), seed=seed, lower_bound=False)
    cpus = sim.observe()["cpus"]
    cap = sum(c["capacity_orig"] for c in cpus) / 1024.0
    n = len(benches)
    if measured:
        # the measured chain is the only one that ends; every job is CPU-bound and never
        # sleeps after its launch, so it has ended when the runqueues hold one job fewer
        # (twice in a row: a restart forks its successor and exits at one instant)
        step = max(int(repeats * work[measured] / 8), int(launch_ms * 1e6) + 1)
        limit = 1000 * repeats * work[measured] * n / cap
        short = 0
        while short < 2:
            if sim.now_ns > limit:
                raise RuntimeError(f"{measured} did not finish {repeats} runs in {limit / 1e9:.0f} s")
            sim.run_until(sim.now_ns + step)
            short = short + 1 if sum(c["nr_running"] for c in sim.observe()["cpus"]) < n else 0
        doc = sim.result().doc
        runs = job_runs(doc, spec["marks"])
        times = experiment_runs(runs, repeats, benches, [measured])
        t_end = runs[measured][repeats - 1][0] if times else None
    else:
        # the experiment's end (the last benchmark's k-th run) is known only from the marks,
        # i.e. from a result document, which costs about as much as the run: run to 1.3 x
        # the time the longest job needs at an equal share, and on if a benchmark is short
        horizon = 1.3 * repeats * max(work.values()) * n / cap
        sim.run_until(int(horizon))
        while True:
            doc = sim.result().doc
            runs = job_runs(doc, spec["marks"])
            times = experiment_runs(runs, repeats, benches)
            if times is not None:
                break
            if sim.now_ns > 20 * horizon:
                raise RuntimeError(f"a benchmark did not finish {repeats} runs in {sim.now_ns / 1e9:.0f} s")
            sim.run_until(int(sim.now_ns * 1.25))
        t_end = max(runs[b][repeats - 1][0] for b in benches)
    if times is None:
        raise RuntimeError(f"{measured or 'a benchmark'} did not finish {repeats} runs")
    out: dict[str, Any] = {"sim_duration_s": doc["sim_duration_s"], "experiment_s": t_end / 1e9}
    # paper 004's metrics (§4): one job per process (one run of a benchmark), those that
    # completed within the experiment; F for the 8 (or 4) jobs that share the CPUs at any time
    ended = _ended_tasks(doc, spec["marks"], t_end)
    m = metrics_004(doc, tasks=ended, F=F_MARGIN * n / len(cpus))
    out.update({"cab_mean": m["cab_mean"], "cab_pct": m["cab_system_pct"], "rtf_pct": m["rtf_pct"],
                "slowdown_mean": m["slowdown_mean"], "ipc": system_ipc(doc, ended),
                "throughput": len(ended) / (t_end / 1e9), "migrations": doc["counters"]["migrations"]})
    td = doc["counters"]["policy"]
    if "decisions" in td:  # hcs-td's counters
        out["td_migrations"] = td["migrations"]
    cvs = []
    for b, xs in times.items():
        norm = normalised_spread(xs)
        out[f"{b}.n"] = len(xs)
        out.update({f"{b}.{k}_n": v for k, v in norm.items() if k != "mean_s"})
        out.update({f"{b}.{k}_s": v for k, v in runtime_stats(xs).items()})
        cvs.append(norm["std"])
        # the share of the benchmark's CPU time on the fast CPU, over all its processes
        per = [t.get("cpu_time_s") or {} for t in doc["tasks"] if bench_of(t["name"]) == b]
        tot = sum(sum(p.values()) for p in per)
        out[f"{b}.fast"] = sum(p.get(str(FAST_CPU), 0.0) for p in per) / tot if tot > 0 else math.nan
    # completion-time jitter (metrics004's jitter_cv_mean) over the experiment's runs
    out["jitter_cv"] = float(np.mean(cvs))
    return out


def _ended_tasks(doc: dict, mark_names: Sequence[str], t_end: int) -> list[str]:
    """The processes whose run ended at or before ``t_end``."""
    names = [t["name"] for t in doc["tasks"]]
    end_i = list(mark_names).index("job.end")
    return [names[ti] for t, ti, mi in doc.get("marks", []) if mi == end_i and int(t) <= t_end]


def system_ipc(doc: dict, tasks: Sequence[str]) -> float:
    """§4.1's system-wide instruction rate per cycle of the completed processes ``tasks``,
    relative to the capacity-1024 core at its f_max (metrics004's unit): their invariant
    work over the cycles they ran (their CPU time on each CPU times its clock).
    metrics004 divides by every busy cycle of the run, which would count the cycles of the
    runs still under way when the simulation stops but not their work."""
    fref = max(max(int(k) for k in c["freq_residency_s"]) for c in doc["cpus"] if c["capacity"] == 1024)
    fcpu = {}
    for c in doc["cpus"]:
        res = {int(k): s for k, s in c["freq_residency_s"].items()}
        tot = sum(res.values())
        fcpu[str(c["cpu"])] = sum(k * s for k, s in res.items()) / tot if tot > 0 else 0.0
    want = set(tasks)
    work = cycles = 0.0
    for t in doc["tasks"]:
        if t["name"] in want:
            work += t.get("work_completed_us", 0.0) / 1e6
            cycles += sum(s * fcpu[c] for c, s in (t.get("cpu_time_s") or {}).items())
    return work * fref / cycles if cycles > 0 else math.nan


# ----------------------------------------------------------------------------- the study

FN = f"{__name__}:simulate"

# The §2.2 experiment (8 jobs) per configuration: (platform, scheduler, knobs).
# "base_*": the sensitivity check with `baseline`'s count-based balancer (see the notes).
SPREAD = {
    "fig1": (HOMO, "cfs", ()),
    "fig2": (HETERO, "cfs", ()),
    "fig5": (HETERO, "hcs-balance", ()),
    "td": (HETERO, "hcs-td", ()),
    "td_a0": (HETERO, "hcs-td", (("hcs_td.a", 0.0), ("hcs_td.b", 0.0))),
    "td_a10": (HETERO, "hcs-td", (("hcs_td.a", -10.0), ("hcs_td.b", -10.0))),
    "fig1_base": (HOMO, "baseline", ()),
    "fig2_base": (HETERO, "baseline", ()),
}
# The §2.3 experiment (4 jobs, one niced) per configuration: (platform, scheduler).
# "fig4_hcs": Fig. 5's caption reads "for varying priorities ... with the new scheduler"
# while its text says it repeats §2.2; the §2.2 reading gives Fig. 5's rows, this one a plot.
NICE = {
    "fig3": (HOMO, "cfs"),
    "fig4": (HETERO, "cfs"),
    "fig4_hcs": (HETERO, "hcs-balance"),
    "fig3_base": (HOMO, "baseline"),
    "fig4_base": (HETERO, "baseline"),
}
TD_VARIANTS = (("cfs", "fig2"), ("hcs-balance", "fig5"), ("hcs-td (a = b = -1, default)", "td"),
               ("hcs-td (a = b = 0)", "td_a0"), ("hcs-td (a = b = -10)", "td_a10"))

# A difference of normalised run times (Figs. 1, 2, 5) smaller than this counts as none
# when a direction is compared: 1 % of the mean, the framework's SAME_TOLERANCE applied to
# a quantity whose unit is the mean (for the normalised min and max, whose values are near
# 1, it is the same test as the 1 % on their ratio; for the normalised standard deviation,
# whose values are near 0, a ratio would call 0.0002 against 0.0001 a doubling).
NORM_TOL = SAME_TOLERANCE

UP, DOWN, SAME, NOT_UP = frozenset({1}), frozenset({-1}), frozenset({0}), frozenset({-1, 0})
_DIR_WORD = {UP: "higher than", DOWN: "lower than", SAME: "the same as", NOT_UP: "not higher than"}

# The paper's statements of direction (its text gives no bar values; see the module doc)
Q_JITTER = ("§2.2: \"In the homogeneous setup, the minimum and maximum running times are much closer to the "
            "mean than in the heterogeneous setup. Standard deviations in the homogeneous setup are also smaller.\"")
Q_ART = ("§2.2: \"The exception is art, which experiences less jittery performance in the heterogeneous setup "
         "than in the homogeneous setup\"")
Q_FIX = "§3: \"We can see that the new scheduler significantly reduces completion time jitter.\""
Q_ART_FIX = ("§3: the comparison with Fig. 1 \"applies to all benchmarks except art – we are still investigating "
             "the cause for the unexpected behavior in art\": art's direction is not stated")
Q_GZIP_HOMO = ("§2.3: \"Examining gzip in the homogeneous setup, we can see that its running time steadily "
               "increases as its nice level increases.\"")
Q_PRIO = ("§2.3: \"Priorities are enforced less consistently in the heterogeneous setup\" (they are enforced in "
          "the homogeneous one: a higher nice level, a longer run)")
Q_TP_HOMO = ("§2.3: \"Looking at twolf and parser, in the homogeneous setup the difference in running times for "
             "nice levels 8 and 12 is obvious\" (nice 12's fastest run slower than nice 8's slowest)")
Q_TP_HET = ("§2.3: \"in the heterogeneous setup it is not possible to distinguish between the running times at "
            "these two different priority levels\" (nice 12's fastest run not slower than nice 8's slowest)")
Q_GZIP_HET = ("§2.3: \"the minimum running time for nice level 12 is the same as the average running time for "
              "nice level 8\" (gzip, heterogeneous)")
Q_MCF = ("§2.3: \"For all benchmarks except mcf, the distinction between running times for different priority "
         "levels of the same benchmark is not as clear in the heterogeneous setup\": mcf's stays clear")
NO_TEXT = "value read from the figure is not in the text"
NO_TD = ("no published number: §5 only outlines the algorithm (\"Implementing and evaluating this algorithm is "
         "the subject of our future work\")")


def _sign(x: float | None, tol: float) -> int | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return 0 if abs(x) <= tol else (1 if x > 0 else -1)


def claim_row(table: str, row: str, metric: str, unit: str, values: Sequence[float],
              base_values: Sequence[float] | None = None, *, claim: frozenset | None = None, quote: str = "",
              base: str = "", absolute: bool = False, note: str = "") -> Row:
    """A row for a bar whose value the text does not give (paper None). With
    ``base_values`` the simulated ratio over ``base`` is filled; with a ``claim`` (the
    direction the text states, relative to ``base``) ``agree`` says whether the simulated
    direction matches it: the change of the means beyond NORM_TOL (``absolute``, for
    normalised values) or the ratio beyond SAME_TOLERANCE of 1."""
    parts = [NO_TEXT]
    if base:
        parts.append(f"ratio over {base}")
    if claim is not None:
        parts.append(f"direction from the text: {_DIR_WORD[claim]} {base}; {quote}")
    elif quote:
        parts.append(quote)
    if note:
        parts.append(note)
    r = row_from(table, row, metric, unit, None, values, sim_base_values=base_values, note="; ".join(parts))
    if claim is not None and base_values is not None:
        m, mb = mean_ci(values)[0], mean_ci(base_values)[0]
        s = _sign(m - mb, NORM_TOL) if absolute else _sign(None if r.sim_ratio is None else r.sim_ratio - 1.0,
                                                           SAME_TOLERANCE)
        r.agree = None if s is None else s in claim
    return r


def nice_string(position: int, level: int, n: int = len(INT4)) -> str:
    """spec-repeat's nice list with ``level`` on the benchmark at ``position``, 0 elsewhere
    (§2.3: "we ran the remaining three benchmarks at the default priority level")."""
    return ":".join(str(level if i == position else 0) for i in range(n))


def run(ctx: Context) -> StudyResult:
    seeds = ctx.seed_list()
    # work per SPEC reference second: smoke tiny; quick a twentieth of full; full about the
    # paper's scale (gzip 140 s of work on the 2.8 GHz core, as SPEC2000's ratios of the
    # era's ~2.8 GHz Pentium 4 give it)
    scale_ms = ctx.pick(200.0, 5_000.0, 100_000.0)
    k = ctx.pick(2, REPEATS, REPEATS)
    common = dict(scale_ms=scale_ms, repeats=k, launch_ms=LAUNCH_SPREAD_MS)

    spread_runs = {(key, s): Run.call(FN, seed=s, label=f"hmc-balance {key} seed {s}", platform=p, scheduler=sch,
                                      jobs="spec2000", nice="0", measured="", knobs=kn, **common)
                   for key, (p, sch, kn) in SPREAD.items() for s in seeds}
    nice_runs = {(key, b, lvl, s): Run.call(FN, seed=s, label=f"hmc-balance {key} {b} nice {lvl} seed {s}",
                                            platform=p, scheduler=sch, jobs="int4", nice=nice_string(i, lvl),
                                            measured=b, knobs=(), **common)
                 for key, (p, sch) in NICE.items() for i, b in enumerate(INT4) for lvl in NICES for s in seeds}
    runs = list(spread_runs.values()) + list(nice_runs.values())
    results = ctx.runner.run(runs, label="hmc-balance")
    by_run = dict(zip(runs, results))
    sp = {key: [by_run[spread_runs[(key, s)]] for s in seeds] for key in SPREAD}
    nc = {(key, b, lvl): [by_run[nice_runs[(key, b, lvl, s)]] for s in seeds]
          for key in NICE for b in INT4 for lvl in NICES}

    def vals(rs: list[dict], name: str) -> list[float]:
        return [float(r[name]) for r in rs]

    rows: list[Row] = []
    # --- Figs. 1, 2, 5: normalised min / max / std of the eight benchmarks
    fig_names = {"fig1": "Fig. 1 (homogeneous)", "fig2": "Fig. 2 (heterogeneous)",
                 "fig5": "Fig. 5 (heterogeneous, balanced)"}
    for key, base_key in (("fig1", None), ("fig2", "fig1"), ("fig5", "fig2")):
        for b in BENCH8:
            for metric, label, jitter_up in (("min_n", "min / mean", DOWN), ("max_n", "max / mean", UP),
                                             ("std_n", "std / mean", UP)):
                v = vals(sp[key], f"{b}.{metric}")
                if base_key is None:
                    rows.append(claim_row(fig_names[key], b, label, "× mean", v))
                    continue
                bv = vals(sp[base_key], f"{b}.{metric}")
                more_jitter = jitter_up  # the direction of "more jitter" for this bar
                less_jitter = frozenset({-x for x in jitter_up})
                if key == "fig2":
                    claim, quote = (less_jitter, Q_ART) if b == "art" else (more_jitter, Q_JITTER)
                else:
                    claim, quote = (None, Q_ART_FIX) if b == "art" else (less_jitter, Q_FIX)
                rows.append(claim_row(fig_names[key], b, label, "× mean", v, bv, claim=claim, quote=quote,
                                      base=fig_names[base_key].split(" (")[0], absolute=True))
    # --- Figs. 3, 4: run times of gzip, mcf, twolf, parser at nice 0/4/8/12
    unit = f"s (simulated; {scale_ms / 1000:g} ms of work per SPEC reference s)"
    for key, fig in (("fig3", "Fig. 3 (homogeneous)"), ("fig4", "Fig. 4 (heterogeneous)")):
        homo = key == "fig3"
        for b in INT4:
            for lvl in NICES:
                cur = nc[(key, b, lvl)]
                prev = nc[(key, b, lvl - 4)] if lvl else None
                row = f"{b} nice {lvl}"
                # mean: over the previous nice level's mean
                if prev is None:
                    rows.append(claim_row(fig, row, "mean run time", unit, vals(cur, f"{b}.mean_s")))
                else:
                    if homo:
                        claim, quote = UP, (Q_GZIP_HOMO if b == "gzip" else Q_PRIO)
                    elif b == "mcf":
                        claim, quote = UP, Q_MCF
                    else:
                        claim, quote = None, ""
                    rows.append(claim_row(fig, row, "mean run time", unit, vals(cur, f"{b}.mean_s"),
                                          vals(prev, f"{b}.mean_s"), claim=claim, quote=quote,
                                          base=f"nice {lvl - 4}'s mean"))
                # min: the text compares nice 12's fastest run with nice 8
                if lvl == 12 and b in ("twolf", "parser"):
                    claim, quote = (UP, Q_TP_HOMO) if homo else (NOT_UP, Q_TP_HET)
                    rows.append(claim_row(fig, row, "min run time", unit, vals(cur, f"{b}.min_s"),
                                          vals(nc[(key, b, 8)], f"{b}.max_s"), claim=claim, quote=quote,
                                          base="nice 8's max"))
                elif lvl == 12 and b == "gzip" and not homo:
                    rows.append(claim_row(fig, row, "min run time", unit, vals(cur, f"{b}.min_s"),
                                          vals(nc[(key, b, 8)], f"{b}.mean_s"), claim=SAME, quote=Q_GZIP_HET,
                                          base="nice 8's mean"))
                else:
                    rows.append(claim_row(fig, row, "min run time", unit, vals(cur, f"{b}.min_s")))
                rows.append(claim_row(fig, row, "max run time", unit, vals(cur, f"{b}.max_s")))
                rows.append(claim_row(fig, row, "std of run time", unit, vals(cur, f"{b}.std_s")))
    # --- §5: the TD scheduler's trade-off (no published number)
    td_metrics = (("ipc", "system IPC", "per cycle, 2.8 GHz core = 1"),
                  ("cab_pct", "CAB (Def. 2, ε = 0.05)", "% of jobs"),
                  ("cab_mean", "mean CAB_J", "std of time fractions"),
                  ("rtf_pct", "RTF (Def. 4, F = 4.4)", "% of jobs"),
                  ("jitter_cv", "completion-time CV, mean of 8", "× mean"),
                  ("throughput", "throughput", "runs / s"))
    for name, key in TD_VARIANTS[:3]:
        for m, label, u in td_metrics:
            v = vals(sp[key], m)
            if key == "fig2":
                rows.append(row_from("§5 TD scheduler (heterogeneous, 8 jobs)", name, label, u, None, v, note=NO_TD))
            else:
                rows.append(row_from("§5 TD scheduler (heterogeneous, 8 jobs)", name, label, u, None, v,
                                     sim_base_values=vals(sp["fig2"], m), note=NO_TD + "; ratio over cfs"))

    plots = _plots(ctx, sp, nc, scale_ms)
    notes = _notes(rows, sp, nc, scale_ms, k, len(seeds))
    platforms = (f"`{HETERO}` (the paper's heterogeneous setup: two 2.8 GHz Xeon processors, one clock-modulated "
                 f"to 1.05 GHz: CPU 0 capacity 1024, CPU 1 capacity 384, one OPP each) and `{HOMO}` (its homogeneous "
                 "setup: both at 2.8 GHz), built from §2.1 of the paper: one core type at two clocks, as the "
                 "paper's pair. The SoCs' big.LITTLE pairs differ in microarchitecture and cache as well, and have "
                 "more than two CPUs, so they would answer a different question.")
    return StudyResult(STUDY, TITLE, PAPER, platforms, rows, plots, notes)


# ----------------------------------------------------------------------------- plots

def _seed_mean(rs: list[dict], name: str) -> float:
    return float(np.mean([float(r[name]) for r in rs]))


def _plots(ctx: Context, sp: dict, nc: dict, scale_ms: float) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: list[tuple[str, str]] = []
    n = len(next(iter(sp.values())))

    # Figs. 1, 2, 5 (and the baseline check): box = mean ± std, whiskers = min and max,
    # all over the mean; one y range so that the figures compare at a glance
    spread_figs = [("fig1", "Fig. 1: homogeneous setup (cfs)"), ("fig2", "Fig. 2: heterogeneous setup (cfs)"),
                   ("fig5", "Fig. 5: heterogeneous setup, balanced core assignment (hcs-balance)"),
                   ("fig2_base", "Check: heterogeneous setup, count-based balancer (baseline)")]
    lo = min(_seed_mean(sp[k], f"{b}.min_n") for k, _ in spread_figs for b in BENCH8)
    hi = max(_seed_mean(sp[k], f"{b}.max_n") for k, _ in spread_figs for b in BENCH8)
    pad = max(0.01, 0.05 * (hi - lo))
    for key, title in spread_figs:
        stats = []
        for b in BENCH8:
            sd = _seed_mean(sp[key], f"{b}.std_n")
            stats.append({"label": b, "med": 1.0, "q1": 1.0 - sd, "q3": 1.0 + sd,
                          "whislo": _seed_mean(sp[key], f"{b}.min_n"), "whishi": _seed_mean(sp[key], f"{b}.max_n")})
        fig, ax = plt.subplots(figsize=(7.5, 3.6))
        ax.bxp(stats, showfliers=False, widths=0.5)
        ax.axhline(1.0, color="#888", lw=0.6, zorder=0)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_ylabel("run time / mean")
        ax.set_title(title, fontsize=10)
        fig.tight_layout()
        name = f"hmc-balance_{key}.png"
        fig.savefig(ctx.out_dir / name, dpi=110)
        plt.close(fig)
        out.append((name, f"{title}. SPEC CPU2000 run times normalised to each benchmark's mean: box = ±1 standard "
                          f"deviation, whiskers = min and max; each the mean over {n} seed(s)."))

    # Figs. 3, 4 (and the checks): per benchmark, run time at nice 0/4/8/12
    nice_figs = [("fig3", "Fig. 3: homogeneous setup (cfs)"), ("fig4", "Fig. 4: heterogeneous setup (cfs)"),
                 ("fig4_hcs", "Fig. 5 as its caption reads: heterogeneous, hcs-balance"),
                 ("fig3_base", "Check: homogeneous setup, count-based balancer (baseline)"),
                 ("fig4_base", "Check: heterogeneous setup, count-based balancer (baseline)")]
    for key, title in nice_figs:
        fig, axes = plt.subplots(1, len(INT4), figsize=(10, 3.2))
        for ax, b in zip(axes, INT4):
            stats = []
            for lvl in NICES:
                rs = nc[(key, b, lvl)]
                m, sd = _seed_mean(rs, f"{b}.mean_s"), _seed_mean(rs, f"{b}.std_s")
                stats.append({"label": str(lvl), "med": m, "q1": m - sd, "q3": m + sd,
                              "whislo": _seed_mean(rs, f"{b}.min_s"), "whishi": _seed_mean(rs, f"{b}.max_s")})
            ax.bxp(stats, showfliers=False, widths=0.5)
            ax.set_title(b, fontsize=9)
            ax.set_xlabel("nice")
            ax.set_ylim(bottom=0)
        axes[0].set_ylabel("run time, s (simulated)")
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        name = f"hmc-balance_{key}.png"
        fig.savefig(ctx.out_dir / name, dpi=110)
        plt.close(fig)
        out.append((name, f"{title}. One benchmark niced, the other three at nice 0; line = mean, box = ±1 standard "
                          f"deviation, whiskers = min and max of its five runs; each the mean over {n} seed(s); "
                          f"{scale_ms / 1000:g} ms of work per SPEC reference second."))

    # §5: the TD scheduler's trade-off: system IPC against CAB and against RTF
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
    for (label, key), colour in zip(TD_VARIANTS, ("#444", "#1f77b4", "#d62728", "#ff7f0e", "#9467bd")):
        ipc = mean_ci([r["ipc"] for r in sp[key]])
        for ax, m in zip(axes, ("cab_pct", "rtf_pct")):
            x = mean_ci([r[m] for r in sp[key]])
            xerr = None if math.isnan(x[1]) else [[x[0] - x[1]], [x[2] - x[0]]]
            yerr = None if math.isnan(ipc[1]) else [[ipc[0] - ipc[1]], [ipc[2] - ipc[0]]]
            ax.errorbar([x[0]], [ipc[0]], xerr=xerr, yerr=yerr, fmt="o", color=colour, capsize=3,
                        label=label if ax is axes[0] else None)
    axes[0].set_xlabel("CAB: % of jobs with CAB_J ≤ 0.05")
    axes[1].set_xlabel("RTF: % of jobs with slowdown ≤ 4.4")
    axes[0].set_ylabel("system IPC (2.8 GHz core = 1)")
    for ax in axes:
        ax.set_xlim(-5, 105)
    axes[0].legend(fontsize=7, loc="best")
    fig.suptitle("§5: the TD(0) scheduler's trade-off, heterogeneous setup, 8 jobs", fontsize=10)
    fig.tight_layout()
    name = "hmc-balance_td_tradeoff.png"
    fig.savefig(ctx.out_dir / name, dpi=110)
    plt.close(fig)
    out.append((name, "§5's three objectives for cfs, hcs-balance and hcs-td (three settings of eq. 4's a, b): system "
                      f"IPC against core assignment balance and against response-time fairness; 95 % CIs over {n} "
                      "seed(s). The paper publishes no evaluation of this scheduler."))
    return out


# ----------------------------------------------------------------------------- notes

def _fmt(x: float, d: int = 3) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}g}"


def _cv(sp: dict, key: str, benches: Sequence[str] = BENCH8) -> float:
    return float(np.mean([_seed_mean(sp[key], f"{b}.std_n") for b in benches]))


def _spread(nc: dict, key: str, levels: Sequence[int] = NICES[1:]) -> float:
    """The niced job's (max - min) / mean over its runs, averaged over the four
    benchmarks and ``levels``: how far apart one nice level's runs are."""
    xs = [(_seed_mean(nc[(key, b, l)], f"{b}.max_s") - _seed_mean(nc[(key, b, l)], f"{b}.min_s"))
          / _seed_mean(nc[(key, b, l)], f"{b}.mean_s") for b in INT4 for l in levels]
    return float(np.mean(xs))


def _pct(x: float) -> str:
    return f"{100 * x:.2g} %"


def _notes(rows: list[Row], sp: dict, nc: dict, scale_ms: float, k: int, n_seeds: int) -> list[str]:
    from hetsched.reproduce.core import wilcoxon_p

    notes: list[str] = []
    claimed = [r for r in rows if r.agree is not None]
    agree = sum(1 for r in claimed if r.agree)
    notes.append(
        "**What the paper publishes.** Figs. 1-5 are bar charts whose values the text (the OCR of the paper) "
        "does not give, and §5's TD scheduler is a blueprint the paper does not evaluate; so no row has a "
        f"paper value. {len(claimed)} rows carry a direction that the text states in words (quoted in each row's "
        "note: heterogeneous jitter above homogeneous, balanced below heterogeneous, run time rising with "
        f"the nice level, and Fig. 4's overlaps); the simulation agrees on {agree} of them. The \"paper ratio\" "
        "column is empty for the same reason; \"sim ratio\" is the simulated value over the row's stated "
        "baseline. A change smaller than 1 % (of the mean for Figs. 1, 2, 5; of the baseline for Figs. 3-4) "
        "counts as no change.")
    notes.append(
        "**How the experiments are rebuilt.** The jobs are spec-repeat's SPEC CPU2000 profiles (work = SPEC "
        f"reference time × {scale_ms / 1000:g} ms per s, perf models with memory-boundedness and a cold cache "
        "after a migration), one instance each, on both platforms with the `performance` governor (one OPP per "
        "CPU: the paper fixed the clocks). The paper restarts each benchmark as a new process, so each run "
        "is a process here too: the end of a run forks the next one, which the scheduler places like any new "
        "process (spec-repeat loops one task instead, which never leaves its CPU at a restart). §2.2 (Figs. 1, "
        f"2, 5): all eight restart until each has completed {k} runs; every run completed by then counts (the "
        "shorter benchmarks complete more). §2.3 (Figs. 3-4): gzip, mcf, twolf, parser, one of them at nice "
        f"0/4/8/12 and run {k} times while the other three keep restarting at nice 0. Standard deviations are "
        f"population ones (ddof 0). The engine is deterministic, so the {n_seeds} seeds differ in the jobs' "
        f"launch offsets (uniform in 0-{LAUNCH_SPREAD_MS:g} ms, a launch script's spread): the 95 % CIs are over "
        "these repetitions of the whole experiment, which the paper ran once.")

    # Figs. 1, 2, 5
    def cvs(key: str) -> list[float]:
        return [float(np.mean([r[f"{b}.std_n"] for b in BENCH8])) for r in sp[key]]

    cv1, cv2, cv5 = _cv(sp, "fig1"), _cv(sp, "fig2"), _cv(sp, "fig5")
    p21, p52 = wilcoxon_p(cvs("fig1"), cvs("fig2")), wilcoxon_p(cvs("fig2"), cvs("fig5"))
    dis = [r for r in rows if r.table.startswith(("Fig. 2", "Fig. 5")) and r.agree is False]
    text = (f"**Figs. 1, 2, 5 (jitter).** Normalised standard deviation, mean of the eight benchmarks: "
            f"homogeneous {_fmt(cv1)}, heterogeneous {_fmt(cv2)}, heterogeneous balanced {_fmt(cv5)} (Wilcoxon "
            f"signed-rank over the {n_seeds} paired seeds, Fig. 2 against Fig. 1: p = {_fmt(p21, 2)}; Fig. 5 "
            f"against Fig. 2: p = {_fmt(p52, 2)}; with 3 seeds the smallest p the test can give is 0.25). Under "
            "cfs on the heterogeneous pair a restarted job is placed on either CPU and mostly stays there for "
            f"the run (mean CAB_J of a run {_fmt(_seed_mean(sp['fig2'], 'cab_mean'))}, where 0.5 is a whole run "
            "on one CPU), so each run gets a different share of the fast CPU (the share over all of a "
            "benchmark's runs: " +
            ", ".join(f"{b} {_fmt(_seed_mean(sp['fig2'], f'{b}.fast'), 2)}" for b in BENCH8) +
            "): the paper's explanation of the jitter. hcs-balance moves every job after each slice, so "
            f"every run splits its time evenly (mean CAB_J {_fmt(_seed_mean(sp['fig5'], 'cab_mean'))}); Fig. 5 "
            f"against Fig. 1: {_fmt(cv5)} against {_fmt(cv1)} (the paper: \"comparable\"; Fig. 5 per seed: "
            f"{', '.join(_fmt(x, 2) for x in cvs('fig5'))}). ")
    if dis:
        text += ("Rows whose direction disagrees: " + "; ".join(
            f"{r.table.split(' (')[0]} {r.row} {r.metric} {_fmt(r.sim)} against "
            f"{_fmt(r.sim / r.sim_ratio) if r.sim_ratio else '—'}" for r in dis) + ". ")
    art2, art1 = _seed_mean(sp["fig2"], "art.std_n"), _seed_mean(sp["fig1"], "art.std_n")
    if art2 > art1 + NORM_TOL:
        text += (f"art is more jittery in the heterogeneous setup here (std {_fmt(art2)} against {_fmt(art1)}), "
                 "like the other seven and unlike the paper's art, which the authors could not explain either; "
                 "nothing in the model sets art apart from the other memory-bound jobs (mcf, equake). ")
    if cv1 < 0.005:
        text += (f"The homogeneous jitter is almost zero here ({_fmt(cv1)}): the model has no OS noise, no "
                 "co-runner interference in shared caches or on the memory bus and no variation of a "
                 "benchmark's own work, which the paper's Fig. 1 contains; so the sim ratios of Fig. 2 over "
                 "Fig. 1's standard deviations are large, and only their direction means anything.")
    notes.append(text.rstrip())

    # Figs. 3, 4
    def rng(key: str, b: str, lvl: int) -> str:
        rs = nc[(key, b, lvl)]
        return f"{_fmt(_seed_mean(rs, f'{b}.min_s'))}-{_fmt(_seed_mean(rs, f'{b}.max_s'))} s"

    dis3 = [r for r in rows if r.table.startswith("Fig. 3") and r.agree is False]
    dis4 = [r for r in rows if r.table.startswith("Fig. 4") and r.agree is False]
    fast = ", ".join(f"{b} {_fmt(np.mean([_seed_mean(nc[('fig4', b, l)], f'{b}.fast') for l in NICES[1:]]), 2)}"
                     for b in INT4)
    text = ("**Figs. 3-4 (nice levels).** How far apart one nice level's runs are ((max − min) / mean, mean over "
            f"the four benchmarks at nice 4-12): homogeneous {_pct(_spread(nc, 'fig3'))}, heterogeneous "
            f"{_pct(_spread(nc, 'fig4'))}. gzip nice 8 / 12: homogeneous {rng('fig3', 'gzip', 8)} / "
            f"{rng('fig3', 'gzip', 12)}, heterogeneous {rng('fig4', 'gzip', 8)} / {rng('fig4', 'gzip', 12)}. "
            f"Fig. 3's stated directions: {'all agree' if not dis3 else f'{len(dis3)} disagree'}; Fig. 4's: "
            f"{'all agree' if not dis4 else f'{len(dis4)} disagree'}. ")
    if dis4:
        text += ("Rows whose direction disagrees: " + "; ".join(
            f"{r.table.split(' (')[0]} {r.row} {r.metric} {_fmt(r.sim)} s against "
            f"{_fmt(r.sim / r.sim_ratio) if r.sim_ratio else '—'} s (the text: "
            f"{r.note.split('direction from the text: ')[-1].split(';')[0]})"
            for r in dis4) + ". ")
    text += (
        "Why Fig. 4's inconsistency is missing here: the cfs balancer (weighted by nice and by CPU "
        "capacity) puts the niced job in the same place at every restart (its share of the fast CPU at nice "
        f"4-12: {fast}), so its run time does not depend on the run. The paper's kernel, 2.6.15, had the O(1) "
        "scheduler: its balancer counted runnable tasks (nice-weighted balancing, smpnice, came in 2.6.16) and "
        "did not know that the clock-modulated CPU was slower, so a niced job could share either CPU, with one "
        "other job or with three, from run to run. Its nice levels also act through time slices (100 / 80 / "
        "60 / 40 ms for nice 0 / 4 / 8 / 12) instead of CFS's weights (1024 / 423 / 172 / 70: nice 12 gets a "
        "fifteenth of a nice-0 job's CPU time, not two fifths), so the paper's niced runs are far shorter relative "
        "to nice 0 than these.")
    notes.append(text)
    def holds(b: str, metric: str, base_lvl: int, base_metric: str, claim: frozenset) -> str:
        r = claim_row("", "", "", "", [x[f"{b}.{metric}"] for x in nc[("fig4_base", b, 12)]],
                      [x[f"{b}.{base_metric}"] for x in nc[("fig4_base", b, base_lvl)]], claim=claim, base="b")
        return f"{b} {'holds' if r.agree else 'does not hold'} (ratio {_fmt(r.sim_ratio)})"

    overlaps = ", ".join((holds("gzip", "min_s", 8, "mean_s", SAME), holds("twolf", "min_s", 8, "max_s", NOT_UP),
                          holds("parser", "min_s", 8, "max_s", NOT_UP)))
    notes.append(
        "**Check with a count-based balancer (`baseline`).** To see whether the balancer explains Fig. 4, the "
        "same experiments ran with the `baseline` scheduler, whose periodic pull balances runnable-task counts "
        "and ignores nice, as 2.6.15's did (it still sees the capacities when it places a task on an idle CPU). "
        f"Heterogeneous jitter (Fig. 2's experiment): {_fmt(_cv(sp, 'fig2_base'))} against cfs's {_fmt(cv2)} "
        f"(homogeneous {_fmt(_cv(sp, 'fig1_base'))}). Spread of one nice level's runs: homogeneous "
        f"{_pct(_spread(nc, 'fig3_base'))}, heterogeneous {_pct(_spread(nc, 'fig4_base'))}; heterogeneous gzip "
        f"nice 4 / 8 / 12 {rng('fig4_base', 'gzip', 4)} / {rng('fig4_base', 'gzip', 8)} / "
        f"{rng('fig4_base', 'gzip', 12)}, twolf nice 8 / 12 {rng('fig4_base', 'twolf', 8)} / "
        f"{rng('fig4_base', 'twolf', 12)}; homogeneous twolf nice 0 / 12 {rng('fig3_base', 'twolf', 0)} / "
        f"{rng('fig3_base', 'twolf', 12)}; Fig. 4's three stated overlaps under baseline: {overlaps} (plots "
        "`hmc-balance_fig2_base.png`, `hmc-balance_fig3_base.png`, `hmc-balance_fig4_base.png`). These are not "
        "rows: `baseline` is not 2.6.15's scheduler either: it has CFS's "
        "weights (nice 8 against 12 is 172 against 70, where O(1)'s slices were 60 against 40 ms, so two nice "
        "levels stay further apart than in the paper's kernel), no expired array, and its own placement of new "
        "tasks. A faithful Fig. 4 "
        "needs an engine change this study may not make: a 2.6.15-like balancer (nr_running-based, blind to "
        "nice and to capacity) with O(1)-style time slices.")
    hcs_tp = ", ".join(f"{b} nice 8 {rng('fig4_hcs', b, 8)} / nice 12 {rng('fig4_hcs', b, 12)}"
                       for b in ("gzip", "twolf", "parser"))
    notes.append(
        "**Fig. 5's two readings.** Its caption says \"SPEC benchmark runtimes for varying priorities on the "
        "heterogeneous setup with the new scheduler\", its text \"the normalized running times ... the same "
        "experiment that we described in Section 2.2 ... compared with Figure 2\". The rows follow the text "
        "(and the issue); the caption's reading is the plot `hmc-balance_fig4_hcs.png` (spread of one nice "
        f"level's runs {_pct(_spread(nc, 'fig4_hcs'))}): {hcs_tp}.")

    # §5
    def m(key: str, name: str) -> str:
        return _fmt(_seed_mean(sp[key], name))

    p_ipc = wilcoxon_p([r["ipc"] for r in sp["fig2"]], [r["ipc"] for r in sp["td"]])
    notes.append(
        "**§5, the TD scheduler (no published numbers).** The paper proposes eq. 2-5 and leaves the evaluation "
        "to future work; hcs-td is this project's implementation (docs/schedulers.md, with its knobs' "
        "assumptions). On this workload (cfs / hcs-balance / hcs-td): system IPC "
        f"{m('fig2', 'ipc')} / {m('fig5', 'ipc')} / {m('td', 'ipc')} (hcs-td against cfs, Wilcoxon p = "
        f"{_fmt(p_ipc, 2)}; hcs-td with a = b = 0: {m('td_a0', 'ipc')}, with −10: {m('td_a10', 'ipc')}); CAB, % of "
        f"jobs within ε: {m('fig2', 'cab_pct')} / {m('fig5', 'cab_pct')} / {m('td', 'cab_pct')}; RTF, %: "
        f"{m('fig2', 'rtf_pct')} / {m('fig5', 'rtf_pct')} / {m('td', 'rtf_pct')} (a = b = 0: "
        f"{m('td_a0', 'rtf_pct')}, −10: {m('td_a10', 'rtf_pct')}); completion-time CV {m('fig2', 'jitter_cv')} / "
        f"{m('fig5', 'jitter_cv')} / {m('td', 'jitter_cv')}; migrations {m('fig2', 'migrations')} / "
        f"{m('fig5', 'migrations')} / {m('td', 'migrations')}. A job is one run of a benchmark (one process), "
        "so CAB and RTF are over all the experiment's runs; F = 1.1 × 8 jobs / 2 CPUs = 4.4 and ε = 0.05 are "
        "metrics004's assumptions (the paper leaves both open). hcs-balance's IPC cost is the cold cache after "
        "each of its migrations, which §3 anticipates (\"This could decrease performance\").")
    return notes
