//! The energy lower bound (docs/lower-bound.md): at each window boundary, the least energy
//! any schedule could have spent delivering the work each task did in that window.
//!
//! The program of one window (Formulation (6) of Han & Lee, made a linear program per
//! window) has, once the cluster-activity variables are priced at their only sensible
//! value (a cluster is active at OPP k for X[c,k] / n_c, the CPU time at k spread over its
//! CPUs), one variable per (part of the work, cluster, OPP): the CPU time that part gets
//! there. Its rows are few: one time budget per cluster, one "deliver the work" row per
//! part, one "one CPU at a time" row per part of large tasks. So each window is a small
//! dense program, solved here as it closes by the dual simplex method, which starts from
//! the all-idle basis (every cost is non-negative, so that basis is dual feasible) and
//! needs no first phase. The energy reported is not the simplex's own objective but the
//! Lagrangian bound of its final multipliers evaluated from the program's data (weak
//! duality): a lower bound whatever the arithmetic's rounding, equal to the optimum when
//! the simplex ends optimal. The windows share no variable, so the bound of a run is the
//! sum over its windows, and nothing is kept per window: memory is flat in the run's
//! length.
//!
//! `python/hetsched/lower_bound.py` solves the same program with HiGHS from a recorded
//! per-window work table (`LowerBoundMode::Record`); the tests hold the two to 1e-9.
use crate::core::*;
use crate::platform::Platform;
use crate::workload::PerfSpec;
use serde::Deserialize;

/// How a run's energy lower bound is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LowerBoundMode {
    /// solved window by window as the run goes; only the running sum is kept
    #[default]
    Stream,
    /// the per-window work table kept for an outside solver (the LP reference)
    Record,
    /// not computed
    Off,
}

/// Relative margin shaved off the bound against floating-point error (the LP reference
/// shaves the same).
const SAFETY: f64 = 1e-6;
/// The large tasks of a speed class, largest first, get "one CPU at a time" limits in
/// groups of these sizes, the rest one shared limit (a group of k shares a k L limit, which
/// its tasks' own limits imply: grouping only relaxes the program).
const GROUP_SIZES: [usize; 3] = [1, 1, 2];
/// The simplex's tolerances, in the program's units (CPU time in windows, costs in units
/// of the platform's largest power).
const FEAS_TOL: f64 = 1e-12;
const PIVOT_TOL: f64 = 1e-11;

/// A speed class: the work per ns of a task of one performance model at each (cluster,
/// OPP), and the OPPs worth using (each cluster's lower convex hull of cost against speed).
struct SpeedClass {
    key: Option<PerfKey>,
    speed: Vec<f64>,
    min_speed: f64,
    cols: Vec<usize>,
}

/// A performance model's identity (every field of the spec, bitwise).
#[derive(PartialEq)]
struct PerfKey(u64, Option<Vec<u64>>, u64, u64, u64);

impl PerfKey {
    fn of(p: &PerfSpec) -> PerfKey {
        PerfKey(
            p.ipc_exp.to_bits(),
            p.ipc.as_ref().map(|v| v.iter().map(|x| x.to_bits()).collect()),
            p.mem_frac.to_bits(),
            p.cache_ns,
            p.cache_slowdown.to_bits(),
        )
    }
}

/// What one window's program needs of the platform.
pub(crate) struct WindowProgram {
    /// per (cluster, OPP), flattened: the cost of a ns of CPU time there above the
    /// cluster's cheapest idle state, the cluster's share included (µW)
    cost: Vec<f64>,
    cluster_of: Vec<usize>,
    /// CPUs per cluster; in switcher mode, the virtual CPUs (one row for all clusters)
    ncpu: Vec<f64>,
    switcher: bool,
    /// every CPU and cluster in its cheapest idle state (µW)
    idle_uw: f64,
    /// costs are handed to the simplex in units of this power, so it sees numbers near 1
    p_unit: f64,
    /// class 0 is time-bound work (memrun work and runtime time: 1 per ns anywhere)
    classes: Vec<SpeedClass>,
    /// for the speeds: each OPP's frequency, each cluster's capacity_orig and f_max, and
    /// the performance model's reference f_max
    khz: Vec<f64>,
    cap: Vec<f64>,
    fmax_khz: Vec<f64>,
    fbig_khz: f64,
}

/// The bound's state in a run.
pub struct LowerBound {
    pub mode: LowerBoundMode,
    program: Option<WindowProgram>,
    task_class: Vec<usize>,
    /// the bound of the closed windows (fJ)
    energy_fj: f64,
    pub windows: u64,
    last_end: u64,
    /// cumulative (work, memrun work, runtime ns) of each task at the last boundary
    pub last: Vec<[u64; 3]>,
    /// `Record` mode: rows (window, task, work, memrun work, runtime ns) and window ends
    pub rows: Vec<(u32, u32, u64, u64, u64)>,
    pub ends: Vec<u64>,
    pub(crate) next: u64,
}

impl LowerBound {
    /// `perfs`: the performance model of each of the workload's tasks (a forked task
    /// carries its template's, so these are all a run meets).
    pub(crate) fn new<'a>(
        mode: LowerBoundMode,
        platform: &Platform,
        perfs: impl Iterator<Item = Option<&'a PerfSpec>>,
    ) -> LowerBound {
        let program = match mode {
            LowerBoundMode::Stream => WindowProgram::new(platform, perfs),
            _ => None,
        };
        // a platform whose data the streamed program cannot take falls back to the record
        let mode = if mode == LowerBoundMode::Stream && program.is_none() {
            LowerBoundMode::Record
        } else {
            mode
        };
        LowerBound {
            mode,
            program,
            task_class: Vec::new(),
            energy_fj: 0.0,
            windows: 0,
            last_end: 0,
            last: Vec::new(),
            rows: Vec::new(),
            ends: Vec::new(),
            next: 0,
        }
    }

    /// The bound of the closed windows and of the open one up to `now` (J), or None when it
    /// is recorded for an outside solver or off.
    pub(crate) fn energy_j(&self, sim: &Sim) -> Option<f64> {
        let prog = self.program.as_ref()?;
        let mut fj = self.energy_fj;
        if sim.now > self.last_end {
            let classes = self.classes_for(prog, sim);
            fj += prog.window_fj(sim.now - self.last_end, self.deltas(sim, &classes));
        }
        Some(fj * 1e-15 * (1.0 - SAFETY))
    }

    /// The work each task did since the last boundary, with its speed class.
    fn deltas<'a>(&'a self, sim: &'a Sim, classes: &'a [usize]) -> impl Iterator<Item = (usize, u64, u64)> + 'a {
        sim.tasks.iter().enumerate().filter_map(move |(i, t)| {
            let cur = cumulative(t);
            let last = self.last.get(i).copied().unwrap_or([0; 3]);
            (cur != last).then(|| (classes[i], cur[0] - last[0], (cur[1] - last[1]) + (cur[2] - last[2])))
        })
    }

    /// The end of the last closed window.
    pub(crate) fn ends_at(&self) -> u64 {
        self.last_end
    }

    /// The speed class of every task (every model was registered at the start).
    fn classes_for(&self, prog: &WindowProgram, sim: &Sim) -> Vec<usize> {
        let mut out = self.task_class.clone();
        for t in &sim.tasks[out.len()..] {
            out.push(prog.class_of(t.spec.perf.as_ref()).unwrap_or(1));
        }
        out
    }
}

fn cumulative(t: &Task) -> [u64; 3] {
    let s = &t.stats;
    [s.work_done - s.memrun_done, s.memrun_done, s.runtime_busy_ns]
}

impl Sim {
    /// Close a lower-bound window at a tick (every running task's work is accounted up to
    /// now).
    pub(crate) fn lb_record(&mut self) {
        if self.now == 0 || self.lb.mode == LowerBoundMode::Off {
            return;
        }
        let n = self.tasks.len();
        match self.lb.mode {
            LowerBoundMode::Stream => {
                let lb = &self.lb;
                let prog = lb.program.as_ref().expect("a streamed bound has its program");
                let classes = lb.classes_for(prog, self);
                let fj = prog.window_fj(self.now - lb.last_end, lb.deltas(self, &classes));
                self.lb.task_class = classes;
                self.lb.energy_fj += fj;
                self.lb.windows += 1;
                self.lb.last_end = self.now;
                self.lb.last.resize(n, [0; 3]);
                for (i, t) in self.tasks.iter().enumerate() {
                    self.lb.last[i] = cumulative(t);
                }
            }
            LowerBoundMode::Record => {
                let w = self.lb.ends.len() as u32;
                self.lb.last.resize(n, [0; 3]);
                for (i, t) in self.tasks.iter().enumerate() {
                    let cur = cumulative(t);
                    let last = &mut self.lb.last[i];
                    if cur != *last {
                        self.lb
                            .rows
                            .push((w, i as u32, cur[0] - last[0], cur[1] - last[1], cur[2] - last[2]));
                        *last = cur;
                    }
                }
                self.lb.ends.push(self.now);
            }
            LowerBoundMode::Off => {}
        }
    }
}

impl WindowProgram {
    /// None when the platform's power data gives some OPP a negative cost above idle (the
    /// simplex's all-idle start would not be dual feasible; the LP reference takes those).
    fn new<'a>(platform: &Platform, perfs: impl Iterator<Item = Option<&'a PerfSpec>>) -> Option<WindowProgram> {
        let clusters = &platform.clusters;
        let switcher = platform.switcher;
        let min_idle = |c: &crate::platform::Cluster, f: fn(&crate::platform::IdleStateSpec) -> u64| {
            c.idle_states.iter().map(f).min().unwrap_or(0) as f64
        };
        let mut p_idle: Vec<f64> = clusters.iter().map(|c| min_idle(c, |s| s.power_uw)).collect();
        let mut p_cl_idle: Vec<f64> = clusters.iter().map(|c| min_idle(c, |s| s.cluster_power_uw)).collect();
        let mut ncpu: Vec<f64> = clusters.iter().map(|c| c.cpus.len() as f64).collect();
        let idle_uw;
        if switcher {
            // each virtual CPU is backed by a core of either cluster, the other off: idle,
            // it draws at least the cheaper cluster's idle power; a cluster backing
            // nothing draws nothing
            let nv: f64 = ncpu.iter().sum();
            let pmin = p_idle.iter().cloned().fold(f64::INFINITY, f64::min);
            ncpu.iter_mut().for_each(|n| *n = nv);
            p_idle.iter_mut().for_each(|p| *p = pmin);
            p_cl_idle.iter_mut().for_each(|p| *p = 0.0);
            idle_uw = nv * pmin;
        } else {
            idle_uw = (0..clusters.len()).map(|c| ncpu[c] * p_idle[c] + p_cl_idle[c]).sum();
        }
        let mut cost = Vec::new();
        let mut cluster_of = Vec::new();
        let mut khz = Vec::new();
        let mut p_max: f64 = 1.0;
        for (ci, c) in clusters.iter().enumerate() {
            for o in &c.opps {
                let busy = o.power_uw as f64 - p_idle[ci];
                let cl = o.cluster_power_uw as f64 - p_cl_idle[ci];
                if busy < 0.0 || cl < 0.0 {
                    return None;
                }
                p_max = p_max.max(o.power_uw as f64).max(o.cluster_power_uw as f64);
                cost.push(if ncpu[ci] > 0.0 { busy + cl / ncpu[ci] } else { 0.0 });
                cluster_of.push(ci);
                khz.push(o.khz as f64);
            }
        }
        // the engine's performance model takes the biggest core's f_max as its reference
        let fbig_khz = clusters.iter().max_by_key(|c| c.capacity_orig).map_or(1, |c| c.fmax_khz) as f64;
        let mut prog = WindowProgram {
            cost,
            cluster_of,
            ncpu,
            switcher,
            idle_uw,
            p_unit: p_max,
            classes: Vec::new(),
            khz,
            cap: clusters.iter().map(|c| c.capacity_orig as f64).collect(),
            fmax_khz: clusters.iter().map(|c| c.fmax_khz as f64).collect(),
            fbig_khz,
        };
        let unit = vec![1.0; prog.cost.len()];
        prog.add_class(None, unit); // class 0: time-bound work, never looked up by model
        prog.class_of_or_add(None);
        for perf in perfs {
            prog.class_of_or_add(perf);
        }
        Some(prog)
    }

    fn class_of(&self, perf: Option<&PerfSpec>) -> Option<usize> {
        let key = perf.map(PerfKey::of);
        (1..self.classes.len()).find(|&i| {
            let k = &self.classes[i].key;
            match (&key, k) {
                (None, None) => true,
                (Some(a), Some(b)) => a == b,
                _ => false,
            }
        })
    }

    fn class_of_or_add(&mut self, perf: Option<&PerfSpec>) -> usize {
        if let Some(c) = self.class_of(perf) {
            return c;
        }
        let speed = self.speeds(perf);
        self.add_class(perf.map(PerfKey::of), speed);
        self.classes.len() - 1
    }

    /// Work per ns at each (cluster, OPP): without a model, capacity_orig * f / (1024 f_max)
    /// (the engine's integer path); with one, 1 / ((1 - mem_frac) F / (u f) + mem_frac), F
    /// the reference f_max and u the cluster's speed per Hz relative to the biggest core
    /// (workload/rtapp.rs, `perf_model`).
    fn speeds(&self, perf: Option<&PerfSpec>) -> Vec<f64> {
        (0..self.cost.len())
            .map(|j| {
                let ci = self.cluster_of[j];
                let (cap, fmax, f) = (self.cap[ci], self.fmax_khz[ci], self.khz[j]);
                let Some(pf) = perf else {
                    return cap * f / (1024.0 * fmax);
                };
                let uarch = cap * self.fbig_khz / (1024.0 * fmax);
                let u = match &pf.ipc {
                    Some(v) => v[ci],
                    None => uarch.powf(pf.ipc_exp),
                };
                1.0 / ((1.0 - pf.mem_frac) * self.fbig_khz / (u * f) + pf.mem_frac)
            })
            .collect()
    }

    fn add_class(&mut self, key: Option<PerfKey>, speed: Vec<f64>) {
        let min_speed = speed.iter().cloned().fold(f64::INFINITY, f64::min);
        // per cluster, the points (speed, cost) on the lower convex hull from the origin
        // (idle): any other OPP's time can be replaced by a mix of two hull OPPs (or of a
        // hull OPP and idle) delivering the same work in no more time at no more cost
        let mut cols = Vec::new();
        let nclusters = self.ncpu.len();
        for ci in 0..nclusters {
            if self.ncpu[ci] <= 0.0 {
                continue;
            }
            let mut pts: Vec<usize> = (0..self.cost.len()).filter(|&j| self.cluster_of[j] == ci).collect();
            pts.sort_by(|&a, &b| speed[a].total_cmp(&speed[b]).then(self.cost[a].total_cmp(&self.cost[b])));
            let mut hull: Vec<usize> = Vec::new();
            for &j in &pts {
                if let Some(&h) = hull.last() {
                    if speed[h] == speed[j] {
                        continue; // the same speed at no less cost
                    }
                }
                // drop hull points that lie on or above the segment to j
                while let Some(&b) = hull.last() {
                    let (ax, ay) = match hull.len() {
                        1 => (0.0, 0.0),
                        n => (speed[hull[n - 2]], self.cost[hull[n - 2]]),
                    };
                    let (bx, by) = (speed[b], self.cost[b]);
                    let (cx, cy) = (speed[j], self.cost[j]);
                    if (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) <= 0.0 {
                        hull.pop();
                    } else {
                        break;
                    }
                }
                hull.push(j);
            }
            cols.extend(hull);
        }
        self.classes.push(SpeedClass { key, speed, min_speed, cols });
    }

    /// The bound of one window of `len_ns` in which tasks did `rows` (speed class, work,
    /// time-bound work) (fJ): the cheapest idle states throughout, plus the program's
    /// optimum above them.
    fn window_fj(&self, len_ns: u64, rows: impl Iterator<Item = (usize, u64, u64)>) -> f64 {
        let l = len_ns as f64;
        let mut pools = vec![0.0; self.classes.len()];
        let mut singles: Vec<(usize, f64)> = Vec::new();
        for (class, work, timed) in rows {
            let w = work as f64;
            // a task that could do its window's work on the slowest CPU at its lowest OPP
            // never meets the one-CPU limit: pooled, it drops a constraint that cannot bind
            if w > l * self.classes[class].min_speed {
                singles.push((class, w));
            } else if work > 0 {
                pools[class] += w;
            }
            if timed > 0 {
                pools[0] += timed as f64;
            }
        }
        let mut parts: Vec<(usize, f64, usize)> = Vec::new();
        for (c, &w) in pools.iter().enumerate() {
            if w > 0.0 {
                parts.push((c, w, 0));
            }
        }
        singles.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut i = 0;
        while i < singles.len() {
            let class = singles[i].0;
            let end = i + singles[i..].iter().take_while(|s| s.0 == class).count();
            let mut sizes = GROUP_SIZES.iter().copied().chain(std::iter::once(usize::MAX));
            while i < end {
                let k = sizes.next().unwrap().min(end - i);
                parts.push((class, singles[i..i + k].iter().map(|s| s.1).sum(), k));
                i += k;
            }
        }
        let above_idle = if parts.is_empty() { 0.0 } else { self.solve(l, &parts) };
        l * (self.idle_uw + above_idle)
    }

    /// The least cost above idle (µW, averaged over the window) of delivering `parts`
    /// (speed class, work, number of tasks sharing a one-CPU limit or 0 for none) in a
    /// window of `l` ns, as the Lagrangian bound of the dual simplex's final multipliers.
    fn solve(&self, l: f64, parts: &[(usize, f64, usize)]) -> f64 {
        // rows: the time budgets (one per cluster; one in all in switcher mode), one work
        // row per part, one limit row per limited part; columns: (part, hull OPP), then a
        // slack per row
        let nbudget = if self.switcher { 1 } else { self.ncpu.len() };
        let mut nrow = nbudget + parts.len();
        let mut limit_row = Vec::with_capacity(parts.len());
        for p in parts {
            limit_row.push(if p.2 > 0 {
                nrow += 1;
                nrow - 1
            } else {
                usize::MAX
            });
        }
        // each column: (budget row, work row, limit row, speed, cost, upper bound)
        let mut cols: Vec<(usize, usize, usize, f64, f64, f64)> = Vec::new();
        for (pi, &(class, _, ntasks)) in parts.iter().enumerate() {
            let sc = &self.classes[class];
            for &j in &sc.cols {
                let ci = self.cluster_of[j];
                let budget = if self.switcher { 0 } else { ci };
                let mut ub = self.ncpu[ci];
                if ntasks > 0 {
                    ub = ub.min(ntasks as f64);
                }
                cols.push((budget, nbudget + pi, limit_row[pi], sc.speed[j], self.cost[j] / self.p_unit, ub));
            }
        }
        let nt = cols.len();
        let ncol = nt + nrow;
        let mut b = vec![0.0; nrow];
        for r in 0..nbudget {
            b[r] = if self.switcher { self.ncpu[0] } else { self.ncpu[r] };
        }
        for (pi, p) in parts.iter().enumerate() {
            b[nbudget + pi] = -p.1 / l; // -(delivered) <= -(work), in windows of CPU time
            if limit_row[pi] != usize::MAX {
                b[limit_row[pi]] = p.2 as f64;
            }
        }
        // the tableau B^-1 [A | I] with its right-hand side, starting at the slack basis
        let mut tab = vec![0.0; nrow * ncol];
        for (j, c) in cols.iter().enumerate() {
            tab[c.0 * ncol + j] = 1.0;
            tab[c.1 * ncol + j] = -c.3;
            if c.2 != usize::MAX {
                tab[c.2 * ncol + j] = 1.0;
            }
        }
        for r in 0..nrow {
            tab[r * ncol + nt + r] = 1.0;
        }
        let mut rhs = b.clone();
        let mut d: Vec<f64> = cols.iter().map(|c| c.4).chain(std::iter::repeat(0.0).take(nrow)).collect();
        let mut basic: Vec<usize> = (nt..ncol).collect();
        let mut is_basic = vec![false; ncol];
        basic.iter().for_each(|&j| is_basic[j] = true);
        // a row no column can repair is set aside: its work exceeds what the CPUs give at
        // full speed, which a run does only by the rounding of its integer work (parts in
        // 1e10); the others are still brought to their optimum
        let mut set_aside = vec![false; nrow];
        let max_iter = 50 * ncol;
        for _ in 0..max_iter {
            // leaving: the most violated row
            let violated = (0..nrow).filter(|&r| rhs[r] < -FEAS_TOL && !set_aside[r]);
            let Some(r) = violated.min_by(|&a, &c| rhs[a].total_cmp(&rhs[c])) else {
                break; // primal feasible and dual feasible: optimal
            };
            let row = &tab[r * ncol..(r + 1) * ncol];
            // entering: the ratio test keeps every reduced cost non-negative; among ties,
            // the largest pivot
            let mut best: Option<(usize, f64, f64)> = None;
            for j in 0..ncol {
                let a = row[j];
                if is_basic[j] || a >= -PIVOT_TOL {
                    continue;
                }
                let ratio = d[j].max(0.0) / -a;
                let better = match best {
                    None => true,
                    Some((_, br, ba)) => ratio < br || (ratio == br && -a > ba),
                };
                if better {
                    best = Some((j, ratio, -a));
                }
            }
            let Some((e, _, _)) = best else {
                set_aside[r] = true;
                continue;
            };
            let piv = tab[r * ncol + e];
            for j in 0..ncol {
                tab[r * ncol + j] /= piv;
            }
            rhs[r] /= piv;
            let (before, rest) = tab.split_at_mut(r * ncol);
            let (prow, after) = rest.split_at_mut(ncol);
            for (rr, other) in before.chunks_exact_mut(ncol).chain(after.chunks_exact_mut(ncol)).enumerate() {
                let rr = if rr < r { rr } else { rr + 1 };
                let f = other[e];
                if f != 0.0 {
                    for j in 0..ncol {
                        other[j] -= f * prow[j];
                    }
                    rhs[rr] -= f * rhs[r];
                }
            }
            let f = d[e];
            if f != 0.0 {
                for j in 0..ncol {
                    d[j] -= f * prow[j];
                }
            }
            is_basic[basic[r]] = false;
            basic[r] = e;
            is_basic[e] = true;
        }
        // the multipliers y (each row's slack has reduced cost -y; every row is a <= row,
        // so y <= 0), and the bound min over the box of c'x + y'(b - Ax), from the data
        let y: Vec<f64> = (0..nrow).map(|r| (-d[nt + r]).min(0.0)).collect();
        let mut bound: f64 = y.iter().zip(&b).map(|(y, b)| y * b).sum();
        for c in &cols {
            let mut dj = c.4 - y[c.0] + y[c.1] * c.3;
            if c.2 != usize::MAX {
                dj -= y[c.2];
            }
            if dj < 0.0 {
                bound += dj * c.5;
            }
        }
        bound.max(0.0) * self.p_unit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// One cluster of two CPUs (capacity 1024): 1 GHz at 100 mW, 2 GHz at 400 mW; idle
    /// costs nothing.
    fn program() -> WindowProgram {
        let p = Platform::from_json(
            r#"{"name": "t", "clusters": [{"name": "c", "cpus": [0, 1], "capacity_orig": 1024,
            "opps": [{"khz": 1000000, "power_uw": 100000}, {"khz": 2000000, "power_uw": 400000}],
            "idle_states": [{"name": "WFI", "level": "cpu", "exit_latency_ns": 0,
                             "target_residency_ns": 0, "power_uw": 0}]}]}"#,
        )
        .unwrap();
        WindowProgram::new(&p, std::iter::once(None)).unwrap()
    }

    fn bound_mj(works: &[u64]) -> f64 {
        let prog = program();
        prog.window_fj(10 * MS, works.iter().map(|&w| (1, w, 0))) * 1e-12
    }

    #[test]
    fn worked_examples_by_hand() {
        // 1 ms of work in a 10-ms window: 2 ms at 1 GHz x 100 mW = 0.2 mJ (2 GHz: 0.4 mJ)
        assert!((bound_mj(&[MS]) - 0.2).abs() < 1e-12);
        // 8 ms of work on one CPU: t1 + t2 <= 10 ms and t1 / 2 + t2 >= 8 ms, least
        // 100 t1 + 400 t2 at t1 = 4, t2 = 6: 2.8 mJ (over two CPUs it would be 1.6 mJ)
        assert!((bound_mj(&[8 * MS]) - 2.8).abs() < 1e-12);
        // two of them, one per CPU: twice that
        assert!((bound_mj(&[8 * MS, 8 * MS]) - 5.6).abs() < 1e-12);
        // eight 1-ms tasks pool: 16 ms of CPU time at 1 GHz = 1.6 mJ
        assert!((bound_mj(&[MS; 8]) - 1.6).abs() < 1e-12);
        // nothing to do: the idle floor, 0 here
        assert_eq!(bound_mj(&[]), 0.0);
    }

    #[test]
    fn time_bound_work_takes_the_cheapest_opp() {
        // 3 ms of memrun work: 3 ms of CPU time whatever the OPP, at 100 mW: 0.3 mJ
        let prog = program();
        let e = prog.window_fj(10 * MS, std::iter::once((1, 0, 3 * MS))) * 1e-12;
        assert!((e - 0.3).abs() < 1e-12);
    }

    #[test]
    fn more_work_than_the_window_gives_a_finite_bound() {
        // 30 ms of work in 10 ms on one CPU cannot be done: no column can repair the row;
        // what the solver reports is still a Lagrangian bound, finite and at least the
        // all-at-f_max cost of the 10 ms the task could have had
        let e = bound_mj(&[30 * MS]);
        assert!(e.is_finite() && e >= 4.0 - 1e-9, "{e}");
    }
}
