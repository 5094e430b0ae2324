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
    last_end: u64,
    /// cumulative (work, memrun work, runtime ns) of each task at the last boundary
    pub last: Vec<[u64; 3]>,
    /// `Record` mode: rows (window, task, work, memrun work, runtime ns) and window ends
    pub rows: Vec<(u32, u32, u64, u64, u64)>,
    pub ends: Vec<u64>,
    pub(crate) next: u64,
    /// the last window's optimal basis, the next one's start when its program has the same
    /// columns
    basis: Option<Basis>,
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
            last_end: 0,
            last: Vec::new(),
            rows: Vec::new(),
            ends: Vec::new(),
            next: 0,
            basis: None,
        }
    }

    /// The bound of the closed windows and of the open one up to `now` (J), or None when it
    /// is recorded for an outside solver or off.
    pub(crate) fn energy_j(&self, sim: &Sim) -> Option<f64> {
        let prog = self.program.as_ref()?;
        let mut fj = self.energy_fj;
        if sim.now > self.last_end {
            let classes = self.classes_for(prog, sim);
            fj += prog.window_fj(
                sim.now - self.last_end,
                self.window_rows(sim, &classes),
                &mut self.basis.clone(),
            );
        }
        Some(fj * 1e-15 * (1.0 - SAFETY))
    }

    /// Each task's (work, memrun work, runtime ns) since the last boundary, where it did any.
    pub(crate) fn deltas<'a>(&'a self, sim: &'a Sim) -> impl Iterator<Item = (usize, [u64; 3])> + 'a {
        sim.tasks.iter().enumerate().filter_map(move |(i, t)| {
            let cur = cumulative(t);
            let last = self.last.get(i).copied().unwrap_or([0; 3]);
            (cur != last).then(|| (i, [cur[0] - last[0], cur[1] - last[1], cur[2] - last[2]]))
        })
    }

    /// `deltas` as a window's program takes them: (speed class, work, time-bound work).
    fn window_rows<'a>(&'a self, sim: &'a Sim, classes: &'a [usize]) -> impl Iterator<Item = (usize, u64, u64)> + 'a {
        self.deltas(sim).map(|(i, d)| (classes[i], d[0], d[1] + d[2]))
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
                let mut warm = self.lb.basis.take();
                let lb = &self.lb;
                let prog = lb.program.as_ref().expect("a streamed bound has its program");
                let classes = lb.classes_for(prog, self);
                let fj = prog.window_fj(self.now - lb.last_end, lb.window_rows(self, &classes), &mut warm);
                self.lb.basis = warm;
                self.lb.task_class = classes;
                self.lb.energy_fj += fj;
                self.lb.last_end = self.now;
                self.lb.last.resize(n, [0; 3]);
                for (i, t) in self.tasks.iter().enumerate() {
                    self.lb.last[i] = cumulative(t);
                }
            }
            LowerBoundMode::Record => {
                let w = self.lb.ends.len() as u32;
                let rows: Vec<_> = self
                    .lb
                    .deltas(self)
                    .map(|(i, d)| (w, i as u32, d[0], d[1], d[2]))
                    .collect();
                self.lb.rows.extend(rows);
                self.lb.ends.push(self.now);
                self.lb.last.resize(n, [0; 3]);
                for (i, t) in self.tasks.iter().enumerate() {
                    self.lb.last[i] = cumulative(t);
                }
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
        let fbig_khz = clusters
            .iter()
            .max_by_key(|c| c.capacity_orig)
            .map_or(1, |c| c.fmax_khz) as f64;
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
            pts.sort_by(|&a, &b| {
                speed[a]
                    .total_cmp(&speed[b])
                    .then(self.cost[a].total_cmp(&self.cost[b]))
            });
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
        self.classes.push(SpeedClass {
            key,
            speed,
            min_speed,
            cols,
        });
    }

    /// The bound of one window of `len_ns` in which tasks did `rows` (speed class, work,
    /// time-bound work) (fJ): the cheapest idle states throughout, plus the program's
    /// optimum above them.
    fn window_fj(&self, len_ns: u64, rows: impl Iterator<Item = (usize, u64, u64)>, warm: &mut Option<Basis>) -> f64 {
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
        let above_idle = if parts.is_empty() {
            0.0
        } else {
            self.solve(l, &parts, warm)
        };
        l * (self.idle_uw + above_idle)
    }

    /// The least cost above idle (µW, averaged over the window) of delivering `parts`
    /// (speed class, work, number of tasks sharing a one-CPU limit or 0 for none) in a
    /// window of `l` ns, as the Lagrangian bound of the dual simplex's final multipliers.
    ///
    /// The simplex is the revised form: it keeps the basis inverse (rows x rows, a dozen at
    /// most) and prices each column from its three non-zeros (its cluster's budget row, its
    /// part's work row, its part's limit row), rather than carrying the whole tableau.
    /// The steps: the program (`columns`), its starting basis (`start_basis`), the
    /// iterations (`DualSimplex`), the bound (`lagrangian_bound`).
    fn solve(&self, l: f64, parts: &[(usize, f64, usize)], warm: &mut Option<Basis>) -> f64 {
        let (cols, b) = self.columns(l, parts);
        let shape: Vec<(usize, bool)> = parts.iter().map(|p| (p.0, p.2 > 0)).collect();
        let basis = start_basis(&cols, b.len(), shape, warm.take());
        let mut simplex = DualSimplex::new(&cols, &b, basis);
        simplex.run();
        let basis = simplex.basis;
        // the multipliers y (each row's slack has reduced cost -y; every row is a <= row,
        // so y <= 0), and the bound min over the box of c'x + y'(b - Ax), from the data
        let nt = cols.len();
        let y: Vec<f64> = (0..b.len()).map(|r| (-basis.d[nt + r]).min(0.0)).collect();
        *warm = Some(basis);
        lagrangian_bound(&cols, &y, &b).max(0.0) * self.p_unit
    }

    /// The window's program as the simplex takes it: its columns (part, hull OPP), each
    /// with its non-zeros, cost and upper bound, and the right-hand side of its rows, all
    /// of the form A x <= b: the time budgets (one per cluster; one in all in switcher
    /// mode), one work row per part (-(delivered) <= -(work), in windows of CPU time),
    /// one limit row per limited part.
    fn columns(&self, l: f64, parts: &[(usize, f64, usize)]) -> (Vec<Column>, Vec<f64>) {
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
        let mut cols: Vec<Column> = Vec::new();
        for (pi, &(class, _, ntasks)) in parts.iter().enumerate() {
            let sc = &self.classes[class];
            for &j in &sc.cols {
                let ci = self.cluster_of[j];
                let mut ub = self.ncpu[ci];
                if ntasks > 0 {
                    ub = ub.min(ntasks as f64);
                }
                cols.push(Column {
                    budget: if self.switcher { 0 } else { ci },
                    work: nbudget + pi,
                    limit: limit_row[pi],
                    speed: sc.speed[j],
                    cost: self.cost[j] / self.p_unit,
                    ub,
                });
            }
        }
        let mut b = vec![0.0; nrow];
        for (r, br) in b.iter_mut().enumerate().take(nbudget) {
            *br = if self.switcher { self.ncpu[0] } else { self.ncpu[r] };
        }
        for (pi, p) in parts.iter().enumerate() {
            b[nbudget + pi] = -p.1 / l; // -(delivered) <= -(work), in windows of CPU time
            if limit_row[pi] != usize::MAX {
                b[limit_row[pi]] = p.2 as f64;
            }
        }
        (cols, b)
    }
}

/// The simplex's starting basis for a program of `cols` and `nrow` rows whose parts have
/// `shape`: the last window's optimal basis `warm` when this window's program has the
/// same columns. B^-1 and the reduced costs depend on the costs and the matrix, not on
/// the work, so they carry over as they are (still dual feasible, usually a pivot or two
/// from optimal) and only x_B = B^-1 b is new; every REFACTOR_AFTER windows they are
/// computed afresh from the basis, against the drift of repeated pivots. Otherwise the
/// slack basis: B^-1 = I, x_B = b, reduced costs = costs (all >= 0).
fn start_basis(cols: &[Column], nrow: usize, shape: Vec<(usize, bool)>, warm: Option<Basis>) -> Basis {
    let nt = cols.len();
    let mut reuses = 0;
    let carried = warm
        .filter(|w| w.shape == shape && w.basic.len() == nrow)
        .and_then(|w| {
            if w.reuses < REFACTOR_AFTER {
                reuses = w.reuses + 1;
                Some((w.basic, w.binv, w.d))
            } else {
                factor_basis(cols, nt, &w.basic).map(|(binv, d)| (w.basic, binv, d))
            }
        });
    let (basic, binv, d) = carried.unwrap_or_else(|| {
        let mut binv = vec![0.0; nrow * nrow];
        for r in 0..nrow {
            binv[r * nrow + r] = 1.0;
        }
        let d = cols
            .iter()
            .map(|c| c.cost)
            .chain(std::iter::repeat(0.0).take(nrow))
            .collect();
        ((nt..nt + nrow).collect(), binv, d)
    });
    Basis {
        shape,
        basic,
        binv,
        d,
        reuses,
    }
}

/// The min over the box 0 <= x <= ub of c'x + y'(b - Ax) for multipliers `y` <= 0,
/// evaluated from the program's data (weak duality: a lower bound on its optimum
/// whatever the rounding of the iterations that gave `y`).
fn lagrangian_bound(cols: &[Column], y: &[f64], b: &[f64]) -> f64 {
    let mut bound: f64 = y.iter().zip(b).map(|(y, b)| y * b).sum();
    for c in cols {
        let mut dj = c.cost - y[c.budget] + y[c.work] * c.speed;
        if c.limit != usize::MAX {
            dj -= y[c.limit];
        }
        if dj < 0.0 {
            bound += dj * c.ub;
        }
    }
    bound
}

/// The revised dual simplex at work on one window's program: the basis (its columns,
/// B^-1, the reduced costs), x_B = B^-1 b, and the current iteration's pivot row
/// (`alpha`, over every column) and entering column (`u`, over the rows). The work
/// vectors are allocated once per window.
struct DualSimplex<'a> {
    cols: &'a [Column],
    nrow: usize,
    /// structural columns; the slacks follow, one per row
    nt: usize,
    basis: Basis,
    xb: Vec<f64>,
    is_basic: Vec<bool>,
    alpha: Vec<f64>,
    u: Vec<f64>,
}

impl<'a> DualSimplex<'a> {
    fn new(cols: &'a [Column], b: &[f64], basis: Basis) -> Self {
        let (nt, nrow) = (cols.len(), b.len());
        let ncol = nt + nrow;
        let binv = &basis.binv;
        let xb: Vec<f64> = (0..nrow)
            .map(|i| (0..nrow).map(|k| binv[i * nrow + k] * b[k]).sum())
            .collect();
        let mut is_basic = vec![false; ncol];
        basis.basic.iter().for_each(|&j| is_basic[j] = true);
        DualSimplex {
            cols,
            nrow,
            nt,
            basis,
            xb,
            is_basic,
            alpha: vec![0.0; ncol],
            u: vec![0.0; nrow],
        }
    }

    /// Pivots until no row is violated (primal and dual feasible: optimal), at most 50
    /// times per column: the most violated row leaves, the ratio test picks the entering
    /// column. A row no column can repair is set aside: its work exceeds what the CPUs
    /// give at full speed, which a run does only by the rounding of its integer work
    /// (parts in 1e10); the others are still brought to their optimum.
    fn run(&mut self) {
        let nrow = self.nrow;
        let mut set_aside = vec![false; nrow];
        for _ in 0..50 * (self.nt + nrow) {
            // leaving: the most violated row
            let xb = &self.xb;
            let violated = (0..nrow).filter(|&r| xb[r] < -FEAS_TOL && !set_aside[r]);
            let Some(r) = violated.min_by(|&a, &c| xb[a].total_cmp(&xb[c])) else {
                break; // primal feasible and dual feasible: optimal
            };
            self.pivot_row(r);
            let Some(e) = self.ratio_test() else {
                set_aside[r] = true;
                continue;
            };
            self.entering_column(e);
            self.pivot(r, e);
        }
    }

    /// The pivot row alpha = (row r of B^-1) A, from each column's non-zeros.
    #[inline]
    fn pivot_row(&mut self, r: usize) {
        let nrow = self.nrow;
        let rho = &self.basis.binv[r * nrow..(r + 1) * nrow];
        for (j, c) in self.cols.iter().enumerate() {
            let mut a = rho[c.budget] - rho[c.work] * c.speed;
            if c.limit != usize::MAX {
                a += rho[c.limit];
            }
            self.alpha[j] = a;
        }
        self.alpha[self.nt..].copy_from_slice(rho);
    }

    /// The entering column: the ratio test keeps every reduced cost non-negative; among
    /// ties, the largest pivot. None when no column can enter.
    #[inline]
    fn ratio_test(&self) -> Option<usize> {
        let (alpha, is_basic, d) = (&self.alpha, &self.is_basic, &self.basis.d);
        let mut best: Option<(usize, f64, f64)> = None;
        for j in 0..self.nt + self.nrow {
            let a = alpha[j];
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
        best.map(|(e, _, _)| e)
    }

    /// The entering column in the current basis: u = B^-1 A_e.
    #[inline]
    fn entering_column(&mut self, e: usize) {
        let (nrow, nt, binv) = (self.nrow, self.nt, &self.basis.binv);
        if e < nt {
            let c = &self.cols[e];
            for (i, ui) in self.u.iter_mut().enumerate() {
                let row = &binv[i * nrow..(i + 1) * nrow];
                let mut v = row[c.budget] - row[c.work] * c.speed;
                if c.limit != usize::MAX {
                    v += row[c.limit];
                }
                *ui = v;
            }
        } else {
            for (i, ui) in self.u.iter_mut().enumerate() {
                *ui = binv[i * nrow + (e - nt)];
            }
        }
    }

    /// Column `e` enters the basis in row `r`: the reduced costs, x_B and B^-1 updated.
    #[inline]
    fn pivot(&mut self, r: usize, e: usize) {
        let (nrow, ncol) = (self.nrow, self.nt + self.nrow);
        let Basis { basic, binv, d, .. } = &mut self.basis;
        let (alpha, u, xb) = (&self.alpha, &self.u, &mut self.xb);
        let piv = u[r];
        // reduced costs: d_j -= (d_e / alpha_e) alpha_j; the leaving column gets
        // -d_e / alpha_e, the entering one 0
        let step = d[e] / alpha[e];
        if step != 0.0 {
            for j in 0..ncol {
                d[j] -= step * alpha[j];
            }
        }
        d[e] = 0.0;
        for i in 0..nrow {
            if i != r {
                d[basic[i]] = 0.0;
            }
        }
        // x_B and B^-1: row r divided by the pivot, eliminated from the others
        let theta = xb[r] / piv;
        for i in 0..nrow {
            if i != r {
                xb[i] -= theta * u[i];
            }
        }
        xb[r] = theta;
        for k in 0..nrow {
            binv[r * nrow + k] /= piv;
        }
        for i in 0..nrow {
            let f = u[i];
            if i == r || f == 0.0 {
                continue;
            }
            for k in 0..nrow {
                binv[i * nrow + k] -= f * binv[r * nrow + k];
            }
        }
        self.is_basic[basic[r]] = false;
        basic[r] = e;
        self.is_basic[e] = true;
    }
}

/// A window's optimal basis: the program's shape (each part's speed class and whether it
/// has a limit row, which fix its columns), the column basic in each row, B^-1, the reduced
/// costs, and how many windows in a row have carried them over.
#[derive(Clone)]
pub(crate) struct Basis {
    shape: Vec<(usize, bool)>,
    basic: Vec<usize>,
    binv: Vec<f64>,
    d: Vec<f64>,
    reuses: u32,
}

/// Windows a carried-over basis inverse serves before it is computed afresh.
const REFACTOR_AFTER: u32 = 64;

/// B^-1 and the reduced costs of the basis `basic` (column indices, slacks after the `nt`
/// structural columns), or None if it is singular or, by rounding, not dual feasible.
fn factor_basis(cols: &[Column], nt: usize, basic: &[usize]) -> Option<(Vec<f64>, Vec<f64>)> {
    let n = basic.len();
    // [B | I] reduced to [I | B^-1] by Gauss-Jordan with partial pivoting
    let w = 2 * n;
    let mut m = vec![0.0; n * w];
    for (i, &j) in basic.iter().enumerate() {
        if j < nt {
            let c = &cols[j];
            m[c.budget * w + i] += 1.0;
            m[c.work * w + i] -= c.speed;
            if c.limit != usize::MAX {
                m[c.limit * w + i] += 1.0;
            }
        } else {
            m[(j - nt) * w + i] = 1.0;
        }
    }
    for i in 0..n {
        m[i * w + n + i] = 1.0;
    }
    for k in 0..n {
        let p = (k..n).max_by(|&a, &c| m[a * w + k].abs().total_cmp(&m[c * w + k].abs()))?;
        if m[p * w + k].abs() < 1e-12 {
            return None;
        }
        if p != k {
            for q in 0..w {
                m.swap(k * w + q, p * w + q);
            }
        }
        let piv = m[k * w + k];
        for q in 0..w {
            m[k * w + q] /= piv;
        }
        for i in 0..n {
            let f = m[i * w + k];
            if i != k && f != 0.0 {
                for q in 0..w {
                    m[i * w + q] -= f * m[k * w + q];
                }
            }
        }
    }
    let binv: Vec<f64> = (0..n).flat_map(|i| m[i * w + n..(i + 1) * w].to_vec()).collect();
    // y' = c_B' B^-1, then d_j = c_j - y' A_j
    let cb: Vec<f64> = basic.iter().map(|&j| if j < nt { cols[j].cost } else { 0.0 }).collect();
    let y: Vec<f64> = (0..n).map(|k| (0..n).map(|i| cb[i] * binv[i * n + k]).sum()).collect();
    let mut d: Vec<f64> = cols
        .iter()
        .map(|c| {
            let mut a = y[c.budget] - y[c.work] * c.speed;
            if c.limit != usize::MAX {
                a += y[c.limit];
            }
            c.cost - a
        })
        .chain(y.iter().map(|y| -y))
        .collect();
    for &j in basic {
        d[j] = 0.0;
    }
    if d.iter().any(|&v| v < -1e-9) {
        return None;
    }
    Some((binv, d))
}

/// A column of a window's program: a part's CPU time at one (cluster, OPP), with its
/// non-zeros (+1 in its budget row, -speed in its part's work row, +1 in its part's limit
/// row if the part has one), its cost per window of time and its upper bound.
struct Column {
    budget: usize,
    work: usize,
    limit: usize,
    speed: f64,
    cost: f64,
    ub: f64,
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
        prog.window_fj(10 * MS, works.iter().map(|&w| (1, w, 0)), &mut None) * 1e-12
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
    fn a_warm_start_reaches_the_cold_optimum() {
        // windows of mostly the same shape with different work, each solved from the last
        // one's basis and from the slack basis, long enough for the carried basis inverse
        // to be computed afresh twice
        let prog = program();
        let mut warm = None;
        let mut x: u64 = 7;
        for _ in 0..3 * REFACTOR_AFTER {
            let mut next = |m: u64| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 33) % m + 1
            };
            let (a, b, c) = (next(9), next(9), next(3));
            let rows = [(1, a * MS, 0), (1, b * MS, 0), (1, c * MS / 2, 0), (1, c * MS / 3, 0)];
            let hot = prog.window_fj(10 * MS, rows.iter().copied(), &mut warm);
            let cold = prog.window_fj(10 * MS, rows.iter().copied(), &mut None);
            assert!((hot - cold).abs() <= 1e-12 * cold, "{a} {b} {c}: {hot} {cold}");
        }
        assert!(warm.is_some());
    }

    #[test]
    fn time_bound_work_takes_the_cheapest_opp() {
        // 3 ms of memrun work: 3 ms of CPU time whatever the OPP, at 100 mW: 0.3 mJ
        let prog = program();
        let e = prog.window_fj(10 * MS, std::iter::once((1, 0, 3 * MS)), &mut None) * 1e-12;
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
