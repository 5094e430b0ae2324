//! schedutil, after kernel/sched/cpufreq_schedutil.c (v6.12).
//!
//! The hook (`cpufreq_update_util(rq, flags)`) first does the per-CPU bookkeeping that runs
//! even when the rate limit then stops it: the iowait boost (`sugov_iowait_boost()`) and
//! `last_update`. If `rate_limit_us` has passed since the last committed change
//! (`sugov_should_update_freq()`), the policy is evaluated:
//!   shared policy (more than one CPU, `sugov_update_shared`): every CPU's boost is consumed
//!   (`sugov_iowait_apply()`: halved when no new request came, reset after a tick without
//!   an update) and its util computed; the frequency follows the most utilised CPU;
//!   single-CPU policy (`sugov_update_single_freq`): the same for the one CPU, and
//!   `sugov_hold_freq()` keeps the frequency from dropping while the CPU has not been idle
//!   since the last evaluation (unless uclamp_max caps its rq).
//! Per CPU (sugov_get_util + effective_cpu_util + sugov_effective_cpu_perf):
//!   u = max(min(cpu_util_cfs_boost + util_rt, capacity_orig), boost);
//!   min = rq uclamp_min with uclamp in use, else capacity_orig if an RT task is runnable, else 0;
//!   max = min(rq uclamp_max, capacity_orig);  util = max(min, min(u / target_load, max))
//! get_next_freq(): raw = f_max * util / capacity_orig, cached (`cached_raw_freq`), resolved
//! with CPUFREQ_RELATION_LE: the lowest *efficient* OPP >= raw (the Energy Model's
//! EM_PERF_STATE_INEFFICIENT states are skipped, em_cpufreq_update_efficiencies()).
//!
//! android-4.19 profile (ACK android-4.19's file): the CFS util is cpu_util_cfs(), without
//! v6.5's runnable boost (`CpuUtil::cfs`); the boost starts at, and decays to zero
//! below, the lowest OPP's capacity (1024 · cpuinfo.min_freq / cpuinfo.max_freq) rather than
//! IOWAIT_BOOST_MIN; the util is clamped by uclamp before the 1.25 headroom, which is applied
//! to the frequency (map_util_freq); the single-CPU busy hold has no uclamp exception; no
//! OPP is marked inefficient (that came with 5.16).
//!
//! msm-4.14 profile (Qualcomm's file of that tree): on WALT, `msm_update`; built without
//! WALT (`sched_walt=0`, the Pixel 4), `msm_pelt_update`: schedtune's boosted_cpu_util() on
//! PELT plus the rq->rt_avg share, separate up and down rate limits, the stale-CPU skip
//! and (single-CPU policies) the busy hold; docs/mechanisms/walt.md.
//!
//! Differences: no IRQ or DL utilisation, no policy-limit changes; the busy hold's idle
//! calls follow menu's stop_tick decision at each idle entry only (idle.rs).
//! docs/mechanisms/cpufreq_schedutil.md works the OPP choice, the boost, the hold and the
//! inefficient-OPP skip by hand.

use super::{CpuUtil, Governor};
use crate::energy_model::inefficient_opps;
use crate::features::Knobs;
use crate::platform::{Cluster, Platform};

/// SCHED_CPUFREQ_IOWAIT (include/linux/sched/cpufreq.h): the enqueue of a task waking from
/// an I/O wait.
pub const SCHED_CPUFREQ_IOWAIT: u32 = 1 << 0;
/// SCHED_CAPACITY_SCALE / 8: the first boost after a quiet period (v6.12).
pub const IOWAIT_BOOST_MIN: u64 = 1024 / 8;

/// struct sugov_cpu: the per-CPU boost state and the busy-hold snapshot.
#[derive(Debug, Clone, Default)]
pub struct SgCpu {
    pub iowait_boost: u64,
    pub iowait_boost_pending: bool,
    pub last_update: u64,
    pub saved_idle_calls: u64,
    /// msm-4.14 without WALT: the util this CPU reported at its last update (sg_cpu->util),
    /// which a shared policy's evaluation reads for the CPUs not reporting now
    pub util: u64,
}

impl SgCpu {
    /// sugov_iowait_reset(): a CPU not updated for more than a tick has been idle, so a
    /// boost sequence starts over (at `floor` if this update is itself an I/O wakeup).
    fn iowait_reset(&mut self, now: u64, set: bool, floor: u64, tick_ns: u64) -> bool {
        if now.saturating_sub(self.last_update) <= tick_ns {
            return false;
        }
        self.iowait_boost = if set { floor } else { 0 };
        self.iowait_boost_pending = set;
        true
    }

    /// sugov_iowait_boost(): an I/O wakeup doubles the boost (once per evaluation, up to
    /// the full scale), the first one sets it to `floor`.
    pub fn iowait_boost(&mut self, now: u64, flags: u32, floor: u64, tick_ns: u64) {
        let set = flags & SCHED_CPUFREQ_IOWAIT != 0;
        if self.iowait_boost != 0 && self.iowait_reset(now, set, floor, tick_ns) {
            return;
        }
        if !set || self.iowait_boost_pending {
            return;
        }
        self.iowait_boost_pending = true;
        self.iowait_boost = if self.iowait_boost != 0 {
            (self.iowait_boost << 1).min(1024)
        } else {
            floor
        };
    }

    /// sugov_iowait_apply(): the boost in capacity units for this evaluation; without a
    /// new request since the last one it is halved first, and dropped below `floor`.
    pub fn iowait_apply(&mut self, now: u64, max_cap: u64, floor: u64, tick_ns: u64) -> u64 {
        if self.iowait_boost == 0 || self.iowait_reset(now, false, floor, tick_ns) {
            return 0;
        }
        if !self.iowait_boost_pending {
            self.iowait_boost >>= 1;
            if self.iowait_boost < floor {
                self.iowait_boost = 0;
                return 0;
            }
        }
        self.iowait_boost_pending = false;
        (self.iowait_boost * max_cap) >> 10
    }
}

/// struct sugov_policy, with the efficiency flags cpufreq holds for its table.
#[derive(Debug, Clone, Default)]
struct PolicyState {
    last_freq_update_time: Option<u64>,
    next_freq: u64,
    cached_raw_freq: u64,
    cpus: Vec<SgCpu>,
    /// CPUFREQ_INEFFICIENT_FREQ of each OPP (all false in the android-4.19 profile)
    inefficient: Vec<bool>,
    /// the boost's start and floor: IOWAIT_BOOST_MIN, or 4.19's lowest-OPP capacity
    boost_floor: u64,
    /// msm-4.14: the frequency cycles of the current WALT window (sugov_track_cycles),
    /// the window they count in, and the capacity the last whole window delivered
    curr_cycles: u128,
    last_cyc_update_time: u64,
    last_ws: u64,
    avg_cap: u64,
}

/// Qualcomm's schedutil of the msm-4.14 profile, in the tree's two builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MsmBuild {
    /// not the msm-4.14 profile: the kernel.org file
    None,
    /// CONFIG_SCHED_WALT: WALT's reports only (msm_update)
    Walt,
    /// built without WALT, use_pelt() true (msm_pelt_update)
    Pelt,
}

pub struct Schedutil {
    policies: Vec<PolicyState>,
    legacy: bool,
    /// which file's schedutil runs: the kernel.org one, or Qualcomm's of msm-4.14
    msm: MsmBuild,
    /// sched_pixel (pixel-5.10): a raise waits up_rate_limit_us, a cut down_rate_limit_us
    /// (sched_pixel_rate_limited()); its util is mainline's (schedutil_cpu_util_pixel_mod():
    /// the 1.25 headroom on the util, then uclamp; f_max · util / capacity; iowait boost from
    /// IOWAIT_BOOST_MIN) on 5.10's table, which flags no inefficient OPP
    up_down: bool,
    /// sugov_walt_adjust()'s raises: hispeed, nl, pl
    pub walt_raises: [u64; 3],
}

/// NL_RATIO: new tasks' share of a high load that sends the policy to its top (msm-4.14)
pub const NL_RATIO: u64 = 75;

/// What sugov_walt_adjust() changed (result.json counters.walt).
#[derive(Debug, Clone, Copy, Default)]
pub struct WaltAdjust {
    pub hispeed: bool,
    pub nl: bool,
    pub pl: bool,
}

/// sugov_walt_adjust() (msm-4.14) for one CPU: a CPU busy for at least hispeed_load % of
/// the capacity its policy delivered over the last window (avg_cap) asks for at least
/// hispeed_freq (not on an inter-cluster migration's report); if new tasks make
/// NL_RATIO % of that load, for the top; with `pl`, at least the queued tasks' predicted
/// demand.
#[allow(clippy::too_many_arguments)]
pub fn walt_adjust(
    util: u64,
    cpu_util: u64,
    max: u64,
    load: &crate::walt::WaltCpuLoad,
    avg_cap: u64,
    hispeed_load: u64,
    hispeed_util: u64,
    pl_on: bool,
) -> (u64, WaltAdjust) {
    let mut u = util;
    let mut a = WaltAdjust::default();
    let hiload = cpu_util >= avg_cap * hispeed_load / 100;
    if hiload && hispeed_util > u {
        u = hispeed_util;
        a.hispeed = true;
    }
    if hiload && load.nl >= cpu_util * NL_RATIO / 100 && u < max {
        u = max;
        a.nl = true;
    }
    if pl_on && load.pl > u {
        u = load.pl;
        a.pl = true;
    }
    (u, a)
}

impl Schedutil {
    pub fn new(platform: &Platform, legacy: bool) -> Self {
        let policies = platform
            .clusters
            .iter()
            .map(|c| PolicyState {
                cpus: vec![SgCpu::default(); c.cpus.len()],
                inefficient: if legacy {
                    vec![false; c.opps.len()]
                } else {
                    inefficient_opps(c)
                },
                boost_floor: if legacy {
                    // sugov_start() of 4.19: sg_cpu->min = SCALE · cpuinfo.min_freq / max_freq
                    1024 * c.opps[0].khz / c.fmax_khz
                } else {
                    IOWAIT_BOOST_MIN
                },
                ..Default::default()
            })
            .collect();
        Schedutil {
            policies,
            legacy,
            msm: MsmBuild::None,
            up_down: false,
            walt_raises: [0; 3],
        }
    }

    /// sugov_track_cycles(): the policy ran at `prev_khz` up to `upto`, counted no further
    /// than the end of the window being tracked.
    fn track_cycles(pol: &mut PolicyState, prev_khz: u64, upto: u64, window: u64) {
        let upto = upto.min(pol.last_ws + window);
        let delta = upto.saturating_sub(pol.last_cyc_update_time) as u128;
        pol.curr_cycles += delta * prev_khz as u128 / 1_000_000;
        pol.last_cyc_update_time = upto;
    }

    /// sugov_calc_avg_cap(): at the first report of a new window, the capacity the policy
    /// delivered over the window that ended (its mean frequency as util); after skipped
    /// windows, the current frequency's.
    fn calc_avg_cap(pol: &mut PolicyState, ws: u64, prev_khz: u64, window: u64, cluster: &Cluster) {
        if ws <= pol.last_ws && pol.avg_cap != 0 {
            return;
        }
        // the first report (the kernel's first window start is past last_ws = 0) counts as
        // after skipped windows: the current frequency's capacity
        let avg_khz = if ws > pol.last_ws + window || pol.avg_cap == 0 {
            pol.last_cyc_update_time = ws;
            prev_khz
        } else {
            Self::track_cycles(pol, prev_khz, ws, window);
            (pol.curr_cycles / (window as u128 / 1_000_000).max(1)) as u64
        };
        pol.avg_cap = cluster.capacity_orig * avg_khz / cluster.fmax_khz;
        pol.curr_cycles = 0;
        pol.last_ws = ws;
    }

    /// Qualcomm's schedutil of msm-4.14 on WALT (sugov_update_shared, sugov_next_freq_shared,
    /// sugov_walt_adjust, get_next_freq, sugov_update_commit): each CPU's util is WALT's
    /// boosted load, raised by the hispeed, new-task and predicted-load rules; the frequency
    /// is 1.25 · f_max · util / capacity, resolved to the lowest OPP at or above it, and a
    /// change waits for the up or down rate limit since the last one.
    fn msm_update(&mut self, ci: usize, now: u64, cluster: &Cluster, utils: &[CpuUtil], knobs: &Knobs) -> Option<u64> {
        let d = &knobs.derived;
        let pol = &mut self.policies[ci];
        if pol.next_freq == 0 {
            pol.next_freq = cluster.opps[0].khz;
        }
        let cap = cluster.capacity_orig;
        let ws = utils.iter().filter_map(|u| u.walt).map(|l| l.ws).max().unwrap_or(0);
        let cur = pol.next_freq;
        Self::calc_avg_cap(pol, ws, cur, d.walt_window_ns, cluster);
        // hispeed_util: freq_to_util(hispeed_freq) · TARGET_LOAD / 100, so that the 1.25
        // headroom brings the request back to hispeed_freq
        let hs_util = cap * knobs.hispeed_khz(ci) / cluster.fmax_khz * 80 / 100;
        let mut util = 0;
        for u in utils {
            let Some(load) = u.walt.as_ref() else { continue };
            // sugov_walt_adjust() reads each CPU's own flags: a CPU whose last report was an
            // inter-cluster migration's takes no hispeed raise, the cluster's others do
            let hs = if load.migration { 0 } else { hs_util };
            let (v, a) = walt_adjust(u.cfs, u.cfs, cap, load, pol.avg_cap, d.hispeed_load, hs, d.pl);
            self.walt_raises[0] += a.hispeed as u64;
            self.walt_raises[1] += a.nl as u64;
            self.walt_raises[2] += a.pl as u64;
            util = util.max(v);
        }
        // get_next_freq(): (f_max + f_max/4) · util / max (TARGET_LOAD 80; Learning EAS's
        // per-cluster TARGET_LOAD replaces the 80), cached
        let raw = raw_freq(cluster, util, true, knobs.target_load_permyriad_for(ci));
        let f = if raw == pol.cached_raw_freq {
            pol.next_freq
        } else {
            pol.cached_raw_freq = raw;
            resolve_freq(cluster, &pol.inefficient, raw)
        };
        // sugov_update_commit(): sugov_up_down_rate_limit()
        let since = pol.last_freq_update_time.map_or(u64::MAX, |t| now - t);
        if (f > pol.next_freq && since < knobs.up_rate_ns(ci)) || (f < pol.next_freq && since < knobs.down_rate_ns(ci))
        {
            return None;
        }
        if f == pol.next_freq {
            return None;
        }
        Self::track_cycles(pol, pol.next_freq, now, d.walt_window_ns);
        pol.next_freq = f;
        pol.last_freq_update_time = Some(now);
        Some(f)
    }

    /// Qualcomm's schedutil of msm-4.14 in the tree built without WALT, where use_pelt() is
    /// true (sugov_update_shared / sugov_update_single, sugov_next_freq_shared,
    /// get_next_freq, sugov_update_commit). The reporting CPU's util (boosted_cpu_util() on
    /// PELT plus the rq->rt_avg share, `CpuUtil::cfs`) is kept before the rate limit is
    /// looked at. Past the shorter of the two limits the policy is evaluated: a shared
    /// policy takes the largest util among its CPUs updated within stale_ns (9/8 of
    /// sched_ravg_window, which is TICK_NSEC without WALT); a single-CPU policy does not
    /// lower its frequency while the CPU has not been idle since the last evaluation
    /// (sugov_cpu_is_busy(), on PELT only). The frequency is 1.25 · f_max · util /
    /// capacity resolved to the lowest OPP at or above it; a change waits for the up or
    /// down rate limit since the last one, and a change so held back forgets the cached raw
    /// frequency. sugov_walt_adjust() (hispeed_freq, hispeed_load, the new-task rule, pl)
    /// and the window's average capacity are WALT-only and do not run; iowait boosting is
    /// off (iowait_boost_enable defaults to false).
    fn msm_pelt_update(
        &mut self,
        ci: usize,
        idx: usize,
        now: u64,
        cluster: &Cluster,
        utils: &[CpuUtil],
        knobs: &Knobs,
    ) -> Option<u64> {
        let d = &knobs.derived;
        let pol = &mut self.policies[ci];
        if pol.next_freq == 0 {
            pol.next_freq = cluster.opps[0].khz;
        }
        if pol.cpus.len() < utils.len() {
            pol.cpus.resize(utils.len(), SgCpu::default());
        }
        let idx = idx.min(utils.len() - 1);
        pol.cpus[idx].util = utils[idx].cfs;
        // sugov_should_update_freq(): min_rate_limit_ns, the shorter of the two limits
        let min_rate = knobs.up_rate_ns(ci).min(knobs.down_rate_ns(ci));
        if pol.last_freq_update_time.is_some_and(|last| now - last < min_rate) {
            return None;
        }
        let tl = knobs.target_load_permyriad_for(ci);
        let mut f;
        if utils.len() == 1 {
            let sg = &mut pol.cpus[0];
            let busy = utils[0].idle_calls == sg.saved_idle_calls;
            sg.saved_idle_calls = utils[0].idle_calls;
            let util = sg.util;
            f = Self::get_next_freq_msm(pol, cluster, util, tl);
            if busy && f < pol.next_freq {
                f = pol.next_freq;
                pol.cached_raw_freq = 0;
            }
        } else {
            let stale_ns = d.tick_ns + (d.tick_ns >> 3);
            let util = pol
                .cpus
                .iter()
                .filter(|sg| now - sg.last_update <= stale_ns)
                .map(|sg| sg.util)
                .max()
                .unwrap_or(0);
            f = Self::get_next_freq_msm(pol, cluster, util, tl);
        }
        // sugov_update_commit()
        if f == pol.next_freq {
            return None;
        }
        let since = pol.last_freq_update_time.map_or(u64::MAX, |t| now - t);
        if (f > pol.next_freq && since < knobs.up_rate_ns(ci)) || (f < pol.next_freq && since < knobs.down_rate_ns(ci))
        {
            pol.cached_raw_freq = 0;
            return None;
        }
        pol.next_freq = f;
        pol.last_freq_update_time = Some(now);
        Some(f)
    }

    /// get_next_freq() of msm-4.14 (frequency-invariant): (f_max + f_max/4) · util /
    /// capacity, the last answer again for the same raw value, else the lowest OPP at or
    /// above it.
    fn get_next_freq_msm(pol: &mut PolicyState, cluster: &Cluster, util: u64, tl: u64) -> u64 {
        let raw = raw_freq(cluster, util, true, tl);
        if raw == pol.cached_raw_freq {
            return pol.next_freq;
        }
        pol.cached_raw_freq = raw;
        resolve_freq(cluster, &pol.inefficient, raw)
    }

    /// The boost state of CPU `idx` of cluster `ci` (for tests and traces).
    pub fn sg_cpu(&self, ci: usize, idx: usize) -> &SgCpu {
        &self.policies[ci].cpus[idx]
    }
}

/// sugov_get_util() of msm-4.14 built without WALT, for one CPU of capacity `cap`:
/// boosted_cpu_util(), which is cpu_util_freq() (cpu_util(), max(`util_avg`, `util_est`)
/// capped, plus RT's PELT `util_rt`, capped) raised by schedtune_margin() of the CPU's
/// `boost` (a share of 1024 - util, as the kernel's signal-proportional compensation
/// takes it), then plus `rt_avg` (the rq->rt_avg share, `RtAvg::rt_util`), capped.
pub fn msm_pelt_cpu_util(util_avg: u64, util_est: u64, util_rt: u64, boost: i64, rt_avg: u64, cap: u64) -> u64 {
    let freq = (util_avg.max(util_est).min(cap) + util_rt).min(cap);
    (crate::schedtune::boosted_util(freq, boost) + rt_avg).min(cap)
}

/// map_util_perf(): util + util/4 at the default target load 0.8, computed in integers so
/// that 0.8 (8000 per myriad) gives exactly the kernel's `util + (util >> 2)`.
#[inline]
pub fn apply_headroom(util: u64, target_load_permyriad: u64) -> u64 {
    if target_load_permyriad == 8000 {
        return util + (util >> 2); // the kernel's own form, and no division
    }
    util * 10_000 / target_load_permyriad
}

/// sugov_get_util() + sugov_effective_cpu_perf() for one CPU: its util, raised to the iowait
/// `boost`, with headroom, within its [min, max].
#[inline]
pub fn effective_cpu_perf(u: &CpuUtil, capacity_orig: u64, target_load_permyriad: u64, boost: u64) -> u64 {
    let s = capacity_orig;
    // effective_cpu_util(): min is the running DL bandwidth or the rq's uclamp_min,
    // whichever is higher, max the rq's uclamp_max; without uclamp a runnable RT task asks
    // for the top
    let (min, max) = match u.uclamp {
        Some([umin, umax]) => (umin.max(u.dl_bw), umax.min(s)),
        None => (if u.rt_runnable { s } else { u.dl_bw }, s),
    };
    let actual = (u.cfs + u.rt).min(s).max(boost);
    min.max(apply_headroom(actual, target_load_permyriad).min(max))
}

/// schedutil_cpu_util(FREQUENCY_UTIL) of ACK android-4.19, then its sugov_iowait_apply():
/// cfs + rt clamped by the rq's uclamp, capped at the capacity, raised to the boost; the
/// headroom comes later, on the frequency.
#[inline]
pub fn cpu_util_v4_19(u: &CpuUtil, capacity_orig: u64, boost: u64) -> u64 {
    let s = capacity_orig;
    let util = match u.uclamp {
        None if u.rt_runnable => s,
        None => (u.cfs + u.rt).min(s),
        Some([umin, umax]) => (u.cfs + u.rt).clamp(umin, umax.max(umin)).min(s),
    };
    util.max(boost)
}

/// sched_pixel's schedutil_cpu_util_pixel_mod(FREQUENCY_UTIL) and sugov_iowait_apply():
/// cfs + rt with the 1.25 headroom, then the rq's clamps (all of the capacity while an RT
/// task is runnable and uclamp is unused); the I/O-wait boost, clamped alike, without the
/// headroom; at most the capacity.
#[inline]
pub fn cpu_util_sched_pixel(u: &CpuUtil, capacity_orig: u64, target_load_permyriad: u64, boost: u64) -> u64 {
    let s = capacity_orig;
    let clamp = |x: u64| match u.uclamp {
        None => x,
        Some([umin, umax]) => x.clamp(umin, umax.max(umin)),
    };
    let util = match u.uclamp {
        None if u.rt_runnable => s,
        _ => clamp(apply_headroom(u.cfs + u.rt, target_load_permyriad)),
    };
    util.max(clamp(boost)).min(s)
}

/// get_next_freq()'s raw request: f_ref · util / capacity (v6.12, the headroom being in
/// the util already); 4.19's map_util_freq() puts the 1.25 on the frequency.
#[inline]
pub fn raw_freq(cluster: &Cluster, util: u64, legacy: bool, target_load_permyriad: u64) -> u64 {
    if legacy {
        apply_headroom(cluster.fmax_khz, target_load_permyriad) * util / cluster.capacity_orig
    } else {
        cluster.fmax_khz * util / cluster.capacity_orig
    }
}

/// sched_pixel's sugov_up_down_rate_limit(): a raise from `cur` to `next` kHz waits
/// up_rate_limit_us after the last change; a cut waits down_rate_limit_us scaled by
/// (next / cur)^down_rate_limit_scale_pow, computed in the kernel's integer steps, so a deep
/// cut comes sooner.
pub fn sched_pixel_rate_limited(cur: u64, next: u64, now: u64, last: Option<u64>, ci: usize, knobs: &Knobs) -> bool {
    let Some(last) = last else { return false };
    let since = now - last;
    if next > cur {
        return since < knobs.up_rate_ns(ci);
    }
    if next < cur && cur > 0 {
        let pow = knobs.derived.down_rate_scale_pow.get(ci).copied().unwrap_or(1);
        let mut comp = knobs.down_rate_ns(ci) as u128 * next as u128;
        for _ in 1..pow {
            comp = comp / cur as u128 * next as u128;
        }
        return (since as u128) * (cur as u128) < comp;
    }
    false
}

/// cpufreq_driver_resolve_freq() with CPUFREQ_RELATION_LE (cpufreq_table_find_index_al()
/// over the efficient entries): the lowest efficient table frequency >= khz, else the
/// highest efficient one. Plain RELATION_L when no OPP is flagged.
pub fn resolve_freq(cluster: &Cluster, inefficient: &[bool], khz: u64) -> u64 {
    let mut best = None;
    for (i, o) in cluster.opps.iter().enumerate() {
        if inefficient.get(i).copied().unwrap_or(false) {
            continue;
        }
        if o.khz >= khz {
            return o.khz;
        }
        best = Some(o.khz);
    }
    best.unwrap_or(cluster.opps[cluster.opps.len() - 1].khz)
}

/// get_next_freq() without the cache and the efficiency flags: f_max · util / capacity,
/// the lowest OPP at or above it.
pub fn next_freq(cluster: &Cluster, util: u64) -> u64 {
    let raw = cluster.fmax_khz * util / cluster.capacity_orig;
    cluster.opps[cluster.opp_at_least(raw)].khz
}

impl Governor for Schedutil {
    fn name(&self) -> &'static str {
        "schedutil"
    }

    fn needs_util(&self) -> bool {
        true
    }

    fn set_msm(&mut self, walt: bool) {
        self.msm = if walt { MsmBuild::Walt } else { MsmBuild::Pelt };
    }

    fn set_sched_pixel(&mut self) {
        self.up_down = true;
        for pol in self.policies.iter_mut() {
            pol.boost_floor = IOWAIT_BOOST_MIN;
        }
    }

    fn walt_raises(&self) -> [u64; 3] {
        self.walt_raises
    }

    fn hook(&mut self, ci: usize, idx: usize, now: u64, flags: u32, knobs: &Knobs) -> bool {
        if self.msm == MsmBuild::Pelt {
            // sugov_update_shared() / _single() on PELT: the CPU's last_update, then the
            // evaluation, which keeps the CPU's util before it looks at the rate limit
            let pol = &mut self.policies[ci];
            if idx < pol.cpus.len() {
                pol.cpus[idx].last_update = now;
            }
            return true;
        }
        if self.msm == MsmBuild::Walt {
            // sugov_should_update_freq(): the shorter of the two rate limits
            let min_rate = knobs.up_rate_ns(ci).min(knobs.down_rate_ns(ci));
            return self.policies[ci]
                .last_freq_update_time
                .is_none_or(|last| now - last >= min_rate);
        }
        let pol = &mut self.policies[ci];
        if idx >= pol.cpus.len() {
            pol.cpus.resize(idx + 1, SgCpu::default()); // switcher: a cluster grew
        }
        let floor = pol.boost_floor;
        let sg = &mut pol.cpus[idx];
        sg.iowait_boost(now, flags, floor, knobs.derived.tick_ns);
        sg.last_update = now;
        // sugov_should_update_freq(): sched_pixel waits the shorter of its two limits
        let rate_limit_ns = if self.up_down {
            knobs.up_rate_ns(ci).min(knobs.down_rate_ns(ci))
        } else {
            knobs.derived.rate_limit_ns
        };
        match pol.last_freq_update_time {
            Some(last) => now - last >= rate_limit_ns,
            None => true,
        }
    }

    fn update(
        &mut self,
        ci: usize,
        idx: usize,
        now: u64,
        cluster: &Cluster,
        utils: &[CpuUtil],
        knobs: &Knobs,
    ) -> Option<u64> {
        if self.msm == MsmBuild::Pelt {
            return self.msm_pelt_update(ci, idx, now, cluster, utils, knobs);
        }
        if self.msm == MsmBuild::Walt {
            return self.msm_update(ci, now, cluster, utils, knobs);
        }
        // sched_pixel computes its util as mainline does (the up_down field)
        let legacy = self.legacy && !self.up_down;
        let pol = &mut self.policies[ci];
        if pol.next_freq == 0 {
            pol.next_freq = cluster.opps[0].khz;
        }
        if pol.cpus.len() < utils.len() {
            pol.cpus.resize(utils.len(), SgCpu::default());
        }
        let tl = knobs.target_load_permyriad_for(ci); // Learning EAS: a per-cluster override
        let (cap, floor, tick) = (cluster.capacity_orig, pol.boost_floor, knobs.derived.tick_ns);
        let sched_pixel = self.up_down;
        let mut util = 0;
        for (j, u) in utils.iter().enumerate() {
            let boost = pol.cpus[j].iowait_apply(now, cap, floor, tick);
            let perf = if legacy {
                cpu_util_v4_19(u, cap, boost)
            } else if sched_pixel {
                cpu_util_sched_pixel(u, cap, tl, boost)
            } else {
                effective_cpu_perf(u, cap, tl, boost)
            };
            util = util.max(perf);
        }
        // get_next_freq()
        let cached = pol.cached_raw_freq;
        let raw = raw_freq(cluster, util, legacy, tl);
        let mut f = if raw == pol.cached_raw_freq {
            pol.next_freq
        } else {
            pol.cached_raw_freq = raw;
            resolve_freq(cluster, &pol.inefficient, raw)
        };
        if utils.len() == 1 {
            // sugov_update_single_freq(): do not lower the frequency of a CPU that has not
            // been idle since the last evaluation (sugov_hold_freq(); 4.19's
            // sugov_cpu_is_busy() without the uclamp exception)
            let u = &utils[idx.min(utils.len() - 1)];
            let sg = &mut pol.cpus[idx.min(utils.len() - 1)];
            let hold = if !legacy && !sched_pixel && u.uclamp_capped {
                false
            } else {
                let busy = u.idle_calls == sg.saved_idle_calls;
                sg.saved_idle_calls = u.idle_calls;
                busy
            };
            if hold && f < pol.next_freq {
                f = pol.next_freq;
                pol.cached_raw_freq = cached;
            }
        }
        // sugov_update_next_freq()
        if f == pol.next_freq {
            return None;
        }
        if self.up_down && sched_pixel_rate_limited(pol.next_freq, f, now, pol.last_freq_update_time, ci, knobs) {
            // sugov_update_next_freq(): the cached request goes back to the one before
            pol.cached_raw_freq = cached;
            return None;
        }
        pol.next_freq = f;
        pol.last_freq_update_time = Some(now);
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::{ClusterSpec, IdleLevel, OppSpec, PlatformSpec};
    use crate::testutils::{idle, two_cluster_platform};

    fn cu(cfs: u64) -> CpuUtil {
        CpuUtil {
            cfs,
            ..Default::default()
        }
    }

    /// effective_cpu_util()'s min is max(cpu_bw_dl, uclamp_min): the fair server's
    /// 50 ms / 1000 ms is to_ratio() = (50e6 << 20) / 1e9 = 52428, 52428 · 1024 >> 20 = 51
    /// capacity units, a floor under a lightly used CPU; a runnable RT task without uclamp
    /// still asks for the top.
    #[test]
    fn the_running_dl_bandwidth_floors_the_frequency_util() {
        let with_bw = |cfs: u64, uclamp: Option<[u64; 2]>, rt: bool| CpuUtil {
            cfs,
            dl_bw: 51,
            uclamp,
            rt_runnable: rt,
            ..Default::default()
        };
        // util 10: headroom 10 + 10/4 = 12 < 51
        assert_eq!(effective_cpu_perf(&with_bw(10, None, false), 1024, 8000, 0), 51);
        assert_eq!(effective_cpu_perf(&cu(10), 1024, 8000, 0), 12);
        // util 100: 125 > 51
        assert_eq!(effective_cpu_perf(&with_bw(100, None, false), 1024, 8000, 0), 125);
        // a uclamp_min above the bandwidth wins, one below it does not
        assert_eq!(
            effective_cpu_perf(&with_bw(10, Some([200, 1024]), false), 1024, 8000, 0),
            200
        );
        assert_eq!(
            effective_cpu_perf(&with_bw(10, Some([20, 1024]), false), 1024, 8000, 0),
            51
        );
        assert_eq!(effective_cpu_perf(&with_bw(10, None, true), 1024, 8000, 0), 1024);
    }

    /// One cluster of `nr_cpus` CPUs, capacity 1024, OPPs 0.5/1/1.5/2 GHz; `powers` in mW.
    /// [100, 250, 450, 700] makes every OPP efficient (EM costs 10·P/perf = 3906, 4882,
    /// 5859, 6835 at performance 256, 512, 768, 1024: rising).
    pub(super) fn four_opp_platform(powers: [u64; 4], nr_cpus: usize) -> Platform {
        let khz = [500_000, 1_000_000, 1_500_000, 2_000_000];
        Platform::from_spec(PlatformSpec {
            switcher: false,
            idle_domains: vec![],
            shared_llc: false,
            device_init: None,
            name: "test-4opp".into(),
            power_model: "dt".into(),
            clusters: vec![ClusterSpec {
                name: "big".into(),
                cpus: (0..nr_cpus).collect(),
                capacity_orig: 1024,
                opps: (0..4)
                    .map(|i| OppSpec {
                        khz: khz[i],
                        power_uw: powers[i] * 1000,
                        cluster_power_uw: 0,
                    })
                    .collect(),
                idle_states: vec![idle("WFI", IdleLevel::Cpu, 1, 1, 10, 0)],
                context_switch_ns: None,
            }],
        })
        .unwrap()
    }

    fn knobs_no_rate_limit() -> Knobs {
        let mut k = Knobs::default();
        k.set("schedutil.rate_limit_us", 0.0).unwrap();
        k
    }

    /// Hook + evaluation as cpufreq_update_util() runs them; the frequency schedutil holds
    /// afterwards (a commit or not).
    fn kick(g: &mut Schedutil, p: &Platform, idx: usize, now: u64, flags: u32, utils: &[CpuUtil], k: &Knobs) -> u64 {
        if g.hook(0, idx, now, flags, k) {
            g.update(0, idx, now, &p.clusters[0], utils, k);
        }
        g.policies[0].next_freq
    }

    #[test]
    fn headroom_is_util_plus_quarter_at_target_load_0_8() {
        for u in [0u64, 1, 3, 100, 599, 600, 819, 1023] {
            assert_eq!(apply_headroom(u, 8000), u + (u >> 2));
        }
        assert_eq!(apply_headroom(500, 5000), 1000);
    }

    #[test]
    fn worked_example_util_600_on_2ghz_big() {
        // linux-eas.md §3: util 600 at cap 1024 with f_max 2 GHz -> 1.465 GHz raw, rounded
        // up to the next OPP (here the 2 GHz one).
        let p = two_cluster_platform();
        let big = &p.clusters[1];
        let u = effective_cpu_perf(&cu(600), 1024, 8000, 0);
        assert_eq!(u, 750);
        assert_eq!(big.fmax_khz * u / 1024, 1_464_843);
        assert_eq!(next_freq(big, u), 2_000_000);
        // util/cap = 0.8 requests f_max; below 1 GHz-equivalent stays at the lowest OPP
        assert_eq!(next_freq(big, effective_cpu_perf(&cu(819), 1024, 8000, 0)), 2_000_000);
        assert_eq!(next_freq(big, effective_cpu_perf(&cu(400), 1024, 8000, 0)), 1_000_000);
        // an RT task runnable asks for the top
        let rt = CpuUtil {
            rt_runnable: true,
            ..Default::default()
        };
        assert_eq!(effective_cpu_perf(&rt, 512, 8000, 0), 512);
    }

    #[test]
    fn rate_limit_counts_from_the_last_commit_only() {
        let p = two_cluster_platform();
        let mut knobs = Knobs::default();
        knobs.set("schedutil.rate_limit_us", 1000.0).unwrap();
        let mut g = Schedutil::new(&p, false);
        let big = &p.clusters[1];
        let hi = [cu(900), cu(0)];
        let lo = [cu(10), cu(0)];
        let step = |g: &mut Schedutil, now: u64, u: &[CpuUtil]| {
            if g.hook(1, 0, now, 0, &knobs) {
                g.update(1, 0, now, big, u, &knobs)
            } else {
                None
            }
        };
        assert_eq!(step(&mut g, 0, &hi), Some(2_000_000));
        assert_eq!(step(&mut g, 500_000, &lo), None); // rate limited
        assert_eq!(step(&mut g, 1_000_000, &lo), Some(1_000_000));
        // same OPP again: no commit, and the window does not restart
        assert_eq!(step(&mut g, 2_500_000, &lo), None);
        assert_eq!(step(&mut g, 2_600_000, &hi), Some(2_000_000));
    }

    #[test]
    fn iowait_boost_doubles_decays_and_resets_after_a_tick() {
        // Shared 2-CPU policy, cap 1024, OPPs 0.5/1/1.5/2 GHz, idle CPUs (util 0), HZ=250
        // (TICK_NSEC 4 ms), no rate limit. An I/O wakeup on CPU 0 every 1 ms:
        //   boost 128 -> perf 128 + 32 = 160 -> raw 2e6·160/1024 = 312,500 kHz -> 0.5 GHz
        //   boost 256 -> 320 -> 625,000 -> 1 GHz
        //   boost 512 -> 640 -> 1,250,000 -> 1.5 GHz
        //   boost 1024 -> 1280, capped at max 1024 -> 2,000,000 -> 2 GHz (and it stays 1024)
        // Then updates without IOWAIT, 1 ms apart: the boost halves at each evaluation,
        // 1024 -> 512 (1.5 GHz) -> 256 (1 GHz) -> 128 (0.5 GHz) -> 64 < 128: dropped.
        let p = four_opp_platform([100, 250, 450, 700], 2);
        let k = knobs_no_rate_limit();
        let mut g = Schedutil::new(&p, false);
        let idle = [cu(0), cu(0)];
        let ms = 1_000_000;
        let io = SCHED_CPUFREQ_IOWAIT;
        let seq: Vec<(u64, u64)> = (1..=5)
            .map(|i| (kick(&mut g, &p, 0, i * ms, io, &idle, &k), g.sg_cpu(0, 0).iowait_boost))
            .collect();
        assert_eq!(
            seq,
            [
                (500_000, 128),
                (1_000_000, 256),
                (1_500_000, 512),
                (2_000_000, 1024),
                (2_000_000, 1024)
            ]
        );
        let decay: Vec<(u64, u64)> = (6..=9)
            .map(|i| (kick(&mut g, &p, 0, i * ms, 0, &idle, &k), g.sg_cpu(0, 0).iowait_boost))
            .collect();
        assert_eq!(
            decay,
            [(1_500_000, 512), (1_000_000, 256), (500_000, 128), (500_000, 0)]
        );

        // Reset: boost 256 at 20 ms; the next I/O wakeup comes 5 ms later (> a 4-ms tick
        // since the CPU's last update), so the sequence restarts at 128, not 512.
        kick(&mut g, &p, 0, 19 * ms, io, &idle, &k);
        kick(&mut g, &p, 0, 20 * ms, io, &idle, &k);
        assert_eq!(g.sg_cpu(0, 0).iowait_boost, 256);
        assert_eq!(kick(&mut g, &p, 0, 25 * ms, io, &idle, &k), 500_000);
        assert_eq!(g.sg_cpu(0, 0).iowait_boost, 128);
        // CPU 1's update evaluates CPU 0 too. At 31 ms CPU 0 was last updated 4 ms before,
        // not more than a tick: its boost 256 only halves to 128 (0.5 GHz). At 36 ms (5 ms
        // since CPU 0's last update) the boost is reset to 0.
        kick(&mut g, &p, 0, 27 * ms, io, &idle, &k); // 256, 1 GHz
        assert_eq!(g.policies[0].next_freq, 1_000_000);
        assert_eq!(kick(&mut g, &p, 1, 31 * ms, 0, &idle, &k), 500_000);
        assert_eq!(g.sg_cpu(0, 0).iowait_boost, 128);
        kick(&mut g, &p, 0, 31 * ms, io, &idle, &k); // 256 again, 1 GHz
        assert_eq!(g.policies[0].next_freq, 1_000_000);
        assert_eq!(kick(&mut g, &p, 1, 36 * ms, 0, &idle, &k), 500_000);
        assert_eq!(g.sg_cpu(0, 0).iowait_boost, 0);
    }

    #[test]
    fn iowait_boost_of_the_android_4_19_profile_starts_at_the_lowest_opp() {
        // 4.19: floor = 1024 · 500,000 / 2,000,000 = 256; the headroom is on the frequency:
        // boost 256 -> raw 2.5e6 · 256 / 1024 = 625,000 kHz -> 1 GHz; then 512 -> 1.25e6
        // -> 1.5 GHz; halving without I/O: 256 (1 GHz), then 128 < 256: dropped (0.5 GHz).
        let p = four_opp_platform([100, 250, 450, 700], 2);
        let k = knobs_no_rate_limit();
        let mut g = Schedutil::new(&p, true);
        let idle = [cu(0), cu(0)];
        let ms = 1_000_000;
        let io = SCHED_CPUFREQ_IOWAIT;
        assert_eq!(kick(&mut g, &p, 0, ms, io, &idle, &k), 1_000_000);
        assert_eq!(g.sg_cpu(0, 0).iowait_boost, 256);
        assert_eq!(kick(&mut g, &p, 0, 2 * ms, io, &idle, &k), 1_500_000);
        assert_eq!(kick(&mut g, &p, 0, 3 * ms, 0, &idle, &k), 1_000_000);
        assert_eq!(kick(&mut g, &p, 0, 4 * ms, 0, &idle, &k), 500_000);
        assert_eq!(g.sg_cpu(0, 0).iowait_boost, 0);
    }

    #[test]
    fn inefficient_opp_is_skipped() {
        // Powers 100/500/600/1200 mW at performance 256/512/768/1024: EM costs
        // 10·P/perf = 3906, 9765, 7812, 11718 (µW units). From the top, 1 GHz's 9765 is not
        // below 1.5 GHz's 7812: inefficient. util 300 -> 375 -> raw 2e6·375/1024 =
        // 732,421 kHz: RELATION_L would give 1 GHz; v6.12 skips it for 1.5 GHz. The
        // android-4.19 profile keeps 1 GHz (headroom on the frequency: 2.5e6·300/1024 =
        // 732,421 kHz as well).
        let p = four_opp_platform([100, 500, 600, 1200], 2);
        assert_eq!(inefficient_opps(&p.clusters[0]), [false, true, false, false]);
        let k = knobs_no_rate_limit();
        let u = [cu(300), cu(0)];
        let mut g = Schedutil::new(&p, false);
        assert_eq!(kick(&mut g, &p, 0, 1_000, 0, &u, &k), 1_500_000);
        let mut g = Schedutil::new(&p, true);
        assert_eq!(kick(&mut g, &p, 0, 1_000, 0, &u, &k), 1_000_000);
        // a request above 1.5 GHz still gets 2 GHz, one below 0.5 GHz stays at 0.5 GHz
        let ineff = inefficient_opps(&p.clusters[0]);
        assert_eq!(resolve_freq(&p.clusters[0], &ineff, 1_600_000), 2_000_000);
        assert_eq!(resolve_freq(&p.clusters[0], &ineff, 400_000), 500_000);
    }

    #[test]
    fn single_cpu_policy_holds_its_frequency_while_busy() {
        // One-CPU cluster: util 700 -> 875 -> raw 1,708,984 -> 2 GHz at 1 ms. At 2 ms util
        // 300 asks for 1 GHz (375 -> 732,421 kHz), but the CPU has not been idle since (its
        // idle-call count is unchanged): sugov_hold_freq() keeps 2 GHz. After an idle entry
        // (count 1 -> 2) the drop goes through. A uclamp_max-capped rq is never held.
        let p = four_opp_platform([100, 250, 450, 700], 1);
        let k = knobs_no_rate_limit();
        let mut g = Schedutil::new(&p, false);
        let ms = 1_000_000;
        let busy = |cfs, idle_calls| {
            [CpuUtil {
                cfs,
                idle_calls,
                ..Default::default()
            }]
        };
        assert_eq!(kick(&mut g, &p, 0, ms, 0, &busy(700, 1), &k), 2_000_000);
        assert_eq!(kick(&mut g, &p, 0, 2 * ms, 0, &busy(300, 1), &k), 2_000_000);
        assert_eq!(kick(&mut g, &p, 0, 3 * ms, 0, &busy(300, 2), &k), 1_000_000);
        kick(&mut g, &p, 0, 4 * ms, 0, &busy(700, 3), &k);
        let capped = [CpuUtil {
            cfs: 300,
            idle_calls: 3,
            uclamp: Some([0, 300]),
            uclamp_capped: true,
            ..Default::default()
        }];
        assert_eq!(kick(&mut g, &p, 0, 5 * ms, 0, &capped, &k), 1_000_000);
        // 4.19's sugov_cpu_is_busy() has no uclamp exception: util 700 -> raw 2.5e6 · 700 /
        // 1024 = 1,708,984 -> 2 GHz; then the capped rq (300, clamped: 732,421 kHz -> 1 GHz
        // wanted) is held at 2 GHz while no idle entry came between
        let mut g = Schedutil::new(&p, true);
        assert_eq!(kick(&mut g, &p, 0, ms, 0, &busy(700, 1), &k), 2_000_000);
        let capped_419 = [CpuUtil {
            idle_calls: 1,
            ..capped[0]
        }];
        assert_eq!(kick(&mut g, &p, 0, 2 * ms, 0, &capped_419, &k), 2_000_000);
        // a shared policy has no such hold
        let p2 = four_opp_platform([100, 250, 450, 700], 2);
        let mut g = Schedutil::new(&p2, false);
        assert_eq!(kick(&mut g, &p2, 0, ms, 0, &[cu(700), cu(0)], &k), 2_000_000);
        assert_eq!(kick(&mut g, &p2, 0, 2 * ms, 0, &[cu(300), cu(0)], &k), 1_000_000);
    }
}

#[cfg(test)]
mod msm_tests {
    use super::tests::four_opp_platform;
    use super::*;
    use crate::testutils::two_cluster_platform;
    use crate::walt::WaltCpuLoad;

    fn load(util: u64, nl: u64, pl: u64) -> WaltCpuLoad {
        WaltCpuLoad {
            util,
            nl,
            pl,
            ws: 0,
            migration: false,
        }
    }

    #[test]
    fn hispeed_raises_a_cpu_busy_for_90_percent_of_what_the_window_delivered() {
        // sm8150 gold: capacity 871 at f_max 2419200 kHz, hispeed_freq 1612800:
        // hispeed_util = 871 · 1612800 / 2419200 · 80 / 100 = 580 · 0.8 = 464
        let hs = 871 * 1_612_800 / 2_419_200 * 80 / 100;
        assert_eq!(hs, 464);
        // the window ran at 825600 kHz: avg_cap = 871 · 825600 / 2419200 = 297; a CPU with
        // util 280 >= 90 % of 297 (267) is high-loaded: raised to 464
        let avg_cap = 871 * 825_600 / 2_419_200;
        assert_eq!(avg_cap, 297);
        let (u, a) = walt_adjust(280, 280, 871, &load(280, 0, 0), avg_cap, 90, hs, false);
        assert_eq!((u, a.hispeed, a.nl), (464, true, false));
        // util 260 < 267: not high-loaded, unchanged
        let (u, a) = walt_adjust(260, 260, 871, &load(260, 0, 0), avg_cap, 90, hs, false);
        assert_eq!((u, a.hispeed), (260, false));
        // high-loaded and new tasks made 75 % of it (210 of 280): the top
        let (u, a) = walt_adjust(280, 280, 871, &load(280, 210, 0), avg_cap, 90, hs, false);
        assert_eq!((u, a.nl), (871, true));
        // pl above the util, with the pl tunable: the prediction
        let (u, a) = walt_adjust(100, 100, 871, &load(100, 0, 300), avg_cap, 90, hs, true);
        assert_eq!((u, a.pl), (300, true));
        let (u, _) = walt_adjust(100, 100, 871, &load(100, 0, 300), avg_cap, 90, hs, false);
        assert_eq!(u, 100);
    }

    /// sugov_walt_adjust() reads each CPU's own flags: in a report that marks one CPU as
    /// an inter-cluster migration's, that CPU takes no hispeed raise and the cluster's other
    /// high-loaded CPU does. One cluster, capacity 1024, OPPs 0.5/1/1.5/2 GHz, at 0.5 GHz:
    /// avg_cap = 256, high load from 90 % of it (230.4); hispeed_freq 2 GHz: hispeed_util =
    /// 1024 · 0.8 = 819. Both CPUs at util 240: the unmarked one is raised to 819, so
    /// 1.25 · 2 GHz · 819 / 1024 = 1999.5 MHz -> 2 GHz (with no raise: 585.9 MHz -> 1 GHz).
    #[test]
    fn the_hispeed_raise_skips_only_the_cpus_a_migration_marked() {
        let p = super::tests::four_opp_platform([100, 250, 450, 700], 2);
        let mut k = Knobs::default();
        k.set_legacy(true);
        k.set("schedutil.hispeed_freq.cluster0", 2_000_000.0).unwrap();
        k.set("schedutil.up_rate_limit_us", 0.0).unwrap();
        k.set("schedutil.down_rate_limit_us", 0.0).unwrap();
        let at = |mig0: bool, mig1: bool| {
            let walt = |migration| CpuUtil {
                cfs: 240,
                walt: Some(WaltCpuLoad {
                    util: 240,
                    nl: 0,
                    pl: 0,
                    ws: 0,
                    migration,
                }),
                ..Default::default()
            };
            [walt(mig0), walt(mig1)]
        };
        let flags = crate::cpufreq::SCHED_CPUFREQ_WALT | crate::cpufreq::SCHED_CPUFREQ_INTERCLUSTER_MIG;
        let run = |utils: &[CpuUtil]| {
            let mut g = Schedutil::new(&p, true);
            g.set_msm(true);
            if g.hook(0, 1, 1_000_000, flags, &k) {
                g.update(0, 1, 1_000_000, &p.clusters[0], utils, &k);
            }
            g.policies[0].next_freq
        };
        assert_eq!(run(&at(true, false)), 2_000_000);
        assert_eq!(run(&at(true, true)), 1_000_000);
    }

    /// msm-4.14 built without WALT: schedutil on PELT for `p`, with these rate limits.
    fn pelt_governor(p: &Platform, up_us: f64, down_us: f64) -> (Schedutil, Knobs) {
        let mut g = Schedutil::new(p, true);
        g.set_msm(false);
        let mut k = Knobs::default();
        k.set_legacy(true);
        k.set("schedutil.up_rate_limit_us", up_us).unwrap();
        k.set("schedutil.down_rate_limit_us", down_us).unwrap();
        (g, k)
    }

    /// The hook, then the evaluation, as cpufreq_update_util() runs them for CPU `idx` of
    /// cluster `ci`; the frequency the policy holds afterwards.
    fn report(g: &mut Schedutil, p: &Platform, ci: usize, idx: usize, now: u64, utils: &[CpuUtil], k: &Knobs) -> u64 {
        if g.hook(ci, idx, now, 0, k) {
            g.update(ci, idx, now, &p.clusters[ci], utils, k);
        }
        g.policies[ci].next_freq
    }

    fn pelt(cfs: u64) -> CpuUtil {
        CpuUtil {
            cfs,
            ..Default::default()
        }
    }

    #[test]
    fn pelt_util_takes_schedtunes_margin_on_1024_and_the_rt_signals() {
        // boosted_cpu_util() = cpu_util_freq() + schedtune_margin(), the margin being the
        // boost's share of SCHED_CAPACITY_SCALE - util (not of the CPU's capacity).
        // Little CPU of test-2x2: capacity 512, OPPs 0.5 / 1 GHz. PELT util 150, top-app
        // boost 10: margin = (1024 - 150) · 10 / 100 = 87.4 -> 87, util 237;
        // get_next_freq(): (1 GHz + 1 GHz / 4) · 237 / 512 = 578,613 kHz -> the lowest OPP
        // at or above it, 1 GHz. Without the boost: 1.25e6 · 150 / 512 = 366,210 -> 0.5 GHz.
        // (A margin on the capacity, (512 - 150) · 10 / 100 = 36 -> 186 -> 454,101 kHz, would
        // have stayed at 0.5 GHz.)
        let p = two_cluster_platform();
        assert_eq!(msm_pelt_cpu_util(150, 0, 0, 10, 0, 512), 237);
        assert_eq!(raw_freq(&p.clusters[0], 237, true, 8000), 578_613);
        let (mut g, k) = pelt_governor(&p, 0.0, 0.0);
        assert_eq!(report(&mut g, &p, 0, 0, 1_000, &[pelt(237), pelt(0)], &k), 1_000_000);
        let (mut g, k) = pelt_governor(&p, 0.0, 0.0);
        assert_eq!(report(&mut g, &p, 0, 0, 1_000, &[pelt(150), pelt(0)], &k), 500_000);
        // cpu_util(): max(util_avg 100, util_est 120) = 120; plus RT's PELT util 30 -> 150;
        // boost 10 -> 237 as above; plus an rq->rt_avg share of 20 -> 257, below the
        // capacity 512. A big CPU (1024) with util 1000 and boost 10: 1000 + 2 = 1002, plus
        // rt_avg 40 -> 1042, capped at 1024.
        assert_eq!(msm_pelt_cpu_util(100, 120, 30, 10, 20, 512), 257);
        assert_eq!(msm_pelt_cpu_util(1000, 0, 0, 10, 40, 1024), 1024);
        // a negative boost takes its share of the util: 300 - 300 · 20 / 100 = 240
        assert_eq!(msm_pelt_cpu_util(300, 0, 0, -20, 0, 1024), 240);
    }

    #[test]
    fn rt_avg_halves_every_500_ms_and_is_read_over_the_period_and_the_time_since() {
        use crate::rt::RtAvg;
        // 100 ms of RT at f_max (scale 1024) by 300 ms: rt_avg = 1e8 · 1024; the span is
        // sched_avg_period() 500 ms + 300 ms since age_stamp 0: 1.024e11 / 8e8 = 128 (of
        // 1024), times capacity 512 >> 10 = 64
        let mut a = RtAvg {
            rt_avg: 100_000_000 * 1024,
            age_stamp: 0,
            last: 300_000_000,
        };
        assert_eq!(a.rt_util(300_000_000, 512), 64);
        // at 600 ms one period has passed: rt_avg halves to 5.12e10, age_stamp 500 ms; the
        // span 500 + 100 ms: 5.12e10 / 6e8 = 85, times 512 >> 10 = 42
        assert_eq!(a.rt_util(600_000_000, 512), 42);
        assert_eq!(a.age_stamp, 500_000_000);
    }

    #[test]
    fn sched_pixel_scales_the_down_rate_limit_by_the_depth_of_the_cut() {
        // gs101 little: up 500 us, down 5 ms, scale_pow 2
        let mut k = Knobs::default();
        k.set("schedutil.up_rate_limit_us", 500.0).unwrap();
        k.set("schedutil.down_rate_limit_us.cluster0", 5000.0).unwrap();
        k.set("schedutil.down_rate_limit_scale_pow.cluster0", 2.0).unwrap();
        let last = Some(0);
        // a raise waits 500 us
        assert!(sched_pixel_rate_limited(300_000, 574_000, 499_999, last, 0, &k));
        assert!(!sched_pixel_rate_limited(300_000, 574_000, 500_000, last, 0, &k));
        // 1,803 -> 1,401 MHz: 5 ms x (1401/1803)^2 = 3,018,942 ns
        assert!(sched_pixel_rate_limited(1_803_000, 1_401_000, 3_018_000, last, 0, &k));
        assert!(!sched_pixel_rate_limited(1_803_000, 1_401_000, 3_019_000, last, 0, &k));
        // 1,803 -> 300 MHz: 5 ms x (300/1803)^2 = 138,427 ns
        assert!(sched_pixel_rate_limited(1_803_000, 300_000, 138_000, last, 0, &k));
        assert!(!sched_pixel_rate_limited(1_803_000, 300_000, 139_000, last, 0, &k));
        // the default pow 1 on the mid cluster: 20 ms x 1024/2253 = 9,090,102 ns
        k.set("schedutil.down_rate_limit_us.cluster1", 20_000.0).unwrap();
        assert!(sched_pixel_rate_limited(2_253_000, 1_024_000, 9_090_000, last, 1, &k));
        assert!(!sched_pixel_rate_limited(2_253_000, 1_024_000, 9_091_000, last, 1, &k));
    }

    #[test]
    fn pelt_rate_limits_hold_a_lower_frequency_until_down_rate_limit_us() {
        // The Pixel 4's values: up_rate_limit_us 500, down_rate_limit_us 20000. One cluster
        // of two CPUs (capacity 1024, 0.5 / 1 / 1.5 / 2 GHz); tick 4 ms (tick_hz 250), so a
        // CPU not updated for more than stale_ns = 4 ms + 4 ms / 8 = 4.5 ms is left out.
        let p = four_opp_platform([100, 250, 450, 700], 2);
        let (mut g, k) = pelt_governor(&p, 500.0, 20_000.0);
        let ms = 1_000_000;
        let at = |g: &mut Schedutil, idx, now, u| {
            let mut utils = [pelt(0), pelt(0)];
            utils[idx] = pelt(u);
            report(g, &p, 0, idx, now, &utils, &k)
        };
        // t = 0: CPU 1 reports 900: 2.5e6 · 900 / 1024 = 2,197,265 kHz -> 2 GHz, committed
        // (no earlier change). CPU 0's 700 at the same instant is kept but not evaluated:
        // 0 < min(500 µs, 20 ms) since the commit.
        assert_eq!(at(&mut g, 1, 0, 900), 2_000_000);
        assert_eq!(at(&mut g, 0, 0, 700), 2_000_000);
        // 1 ms: CPU 0 reports 100, but CPU 1 (updated 1 ms ago) still counts: max 900, 2 GHz
        assert_eq!(at(&mut g, 0, ms, 100), 2_000_000);
        // 5 ms: CPU 1 is stale (5 ms > 4.5 ms): util 100 -> 244,140 kHz -> 0.5 GHz wanted,
        // lower, and only 5 ms since the last change: held at 2 GHz (and the cached raw
        // frequency forgotten, so that the same request is worked out again next time)
        assert_eq!(at(&mut g, 0, 5 * ms, 100), 2_000_000);
        assert_eq!(at(&mut g, 0, 19_999_999, 100), 2_000_000);
        // 20 ms since the change: the drop goes through
        assert_eq!(at(&mut g, 0, 20 * ms, 100), 500_000);
        // a rise 300 µs later is not even evaluated (300 µs < min_rate_limit 500 µs); at
        // 500 µs it is, and up_rate_limit_us has passed: util 700 -> 1,708,984 -> 2 GHz
        assert_eq!(at(&mut g, 0, 20 * ms + 300_000, 700), 500_000);
        assert_eq!(at(&mut g, 0, 20 * ms + 500_000, 700), 2_000_000);
    }

    #[test]
    fn a_single_cpu_policy_on_pelt_holds_its_frequency_while_busy() {
        // sugov_update_single() with use_pelt(): a CPU whose idle-call count has not moved
        // since the last evaluation keeps its frequency (sugov_cpu_is_busy()); WALT's build
        // has no such hold. No rate limits: util 700 -> 2 GHz; util 100 (0.5 GHz wanted)
        // with no idle entry in between: still 2 GHz; after one: 0.5 GHz.
        let p = four_opp_platform([100, 250, 450, 700], 1);
        let (mut g, k) = pelt_governor(&p, 0.0, 0.0);
        let u = |cfs, idle_calls| {
            [CpuUtil {
                cfs,
                idle_calls,
                ..Default::default()
            }]
        };
        assert_eq!(report(&mut g, &p, 0, 0, 1_000_000, &u(700, 1), &k), 2_000_000);
        assert_eq!(report(&mut g, &p, 0, 0, 2_000_000, &u(100, 1), &k), 2_000_000);
        assert_eq!(report(&mut g, &p, 0, 0, 3_000_000, &u(100, 2), &k), 500_000);
    }
}
