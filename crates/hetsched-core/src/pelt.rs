//! Per-Entity Load Tracking, after kernel/sched/pelt.c (v6.12).
//!
//! Same integer arithmetic as the kernel: 1024 µs periods (time in ns >> 10), the decay
//! table of `sched_pelt.rs`, `period_contrib` carried between updates, averages that change
//! only when a period boundary is crossed. The time base is the rq's `clock_pelt`
//! (`Sim::update_rq_clock` in core.rs, `update_idle_rq_clock_pelt` in idle.rs), which makes
//! util frequency- and capacity-invariant. util_est is here too, in its v6.12 form and the
//! v4.19 form of the android-4.19 profile.
//!
//! android-4.19 profile: 4.19 had no clock_pelt. Its time base is the task clock and
//! accumulate_sum() makes the signals invariant by scaling each contribution instead
//! (`ContribScale`): the time is scaled by the current frequency (cap_scale with
//! arch_scale_freq_capacity), load and util alike, and util once more by the CPU's
//! capacity (arch_scale_cpu_capacity). A task always running on a CPU at half its f_max
//! then converges to half that CPU's capacity, where v6.12's converges to 1024.
//!
//! Differences: removed load leaves its cfs_rq at once, not at the next update; no IRQ or DL
//! signal; attachment is a flag, not `last_update_time == 0` (the clock starts at 0).
//! docs/mechanisms/pelt.md works the ramp and the invariance by hand.

pub use crate::sched_pelt::{LOAD_AVG_MAX, LOAD_AVG_PERIOD, RUNNABLE_AVG_YN_INV};

pub const PELT_MIN_DIVIDER: u32 = LOAD_AVG_MAX - 1024;
const SHIFT: u32 = crate::platform::SCHED_CAPACITY_SHIFT;

/// util_est flag (bit 31): the ewma has not changed since the last dequeue.
pub const UTIL_AVG_UNCHANGED: u32 = 0x8000_0000;
/// 4.19's flag (pelt.h): the LSB of `enqueued`, part of the value wherever it is read
/// (5.13 moved it to bit 31 and masked it).
pub const UTIL_AVG_UNCHANGED_V4_19: u32 = 0x1;

/// 4.19's accumulate_sum() factors: arch_scale_freq_capacity (current / max frequency,
/// 1024 at f_max) and arch_scale_cpu_capacity (capacity_orig) of the CPU at the update.
#[derive(Debug, Clone, Copy)]
pub struct ContribScale {
    pub freq: u64,
    pub cpu: u64,
}

#[derive(Debug, Clone, Default)]
pub struct SchedAvg {
    pub last_update_time: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    pub period_contrib: u32,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// util_est ewma | UTIL_AVG_UNCHANGED (tasks only)
    pub util_est: u32,
    /// the pre-6.8 util_est's `enqueued` field | UTIL_AVG_UNCHANGED_V4_19 (android-4.19
    /// profile only; stays 0 in the v6.12 form)
    pub util_est_enqueued: u32,
}

#[inline]
fn mul_u64_u32_shr(a: u64, mul: u32, shift: u32) -> u64 {
    ((a as u128 * mul as u128) >> shift) as u64
}

/// decay_load(): val * y^n
#[inline]
pub fn decay_load(mut val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD as u64 * 63 {
        return 0;
    }
    let mut local_n = n as u32;
    if local_n >= LOAD_AVG_PERIOD {
        val >>= local_n / LOAD_AVG_PERIOD;
        local_n %= LOAD_AVG_PERIOD;
    }
    mul_u64_u32_shr(val, RUNNABLE_AVG_YN_INV[local_n as usize], 32)
}

/// __accumulate_pelt_segments(): d1 (rest of the old period, decayed), the full periods in
/// between (a geometric series, via LOAD_AVG_MAX), and d3 (the new, undecayed part).
#[inline]
fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    let c1 = decay_load(d1 as u64, periods) as u32;
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX as u64, periods) as u32 - 1024;
    c1 + c2 + d3
}

impl SchedAvg {
    #[inline]
    pub fn pelt_divider(&self) -> u32 {
        PELT_MIN_DIVIDER + self.period_contrib
    }

    /// accumulate_sum(); returns the number of periods crossed. `scale`: 4.19's scaled
    /// contribution (None: v6.12, whose time base is already invariant).
    #[inline]
    fn accumulate_sum(
        &mut self,
        mut delta: u64,
        load: u64,
        runnable: u64,
        running: bool,
        scale: Option<ContribScale>,
    ) -> u64 {
        let mut contrib = delta as u32; // raw delta; period_contrib was already counted
        delta += self.period_contrib as u64;
        let periods = delta / 1024;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            delta %= 1024;
            if load > 0 {
                contrib = accumulate_pelt_segments(periods, 1024 - self.period_contrib, delta as u32);
            }
        }
        self.period_contrib = delta as u32;
        // v6.12 weighs util by SCHED_CAPACITY_SCALE; 4.19 by the CPU's capacity after
        // cap_scale(contrib, scale_freq)
        let (contrib, scale_cpu) = match scale {
            None => (contrib as u64, 1 << SHIFT),
            Some(s) => ((contrib as u64 * s.freq) >> SHIFT, s.cpu),
        };
        if load > 0 {
            self.load_sum += load * contrib;
        }
        if runnable > 0 {
            self.runnable_sum += runnable * contrib * scale_cpu;
        }
        if running {
            self.util_sum += contrib * scale_cpu;
        }
        periods
    }

    /// ___update_load_sum(); returns true when at least one period boundary was crossed.
    #[inline]
    pub fn update_load_sum(
        &mut self,
        now: u64,
        load: u64,
        mut runnable: u64,
        mut running: bool,
        scale: Option<ContribScale>,
    ) -> bool {
        if now < self.last_update_time {
            self.last_update_time = now;
            return false;
        }
        let delta = (now - self.last_update_time) >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        if load == 0 {
            runnable = 0;
            running = false;
        }
        self.accumulate_sum(delta, load, runnable, running, scale) > 0
    }

    /// ___update_load_avg()
    #[inline]
    pub fn update_load_avg(&mut self, load_weight: u64) {
        let divider = self.pelt_divider() as u64;
        self.load_avg = load_weight * self.load_sum / divider;
        self.runnable_avg = self.runnable_sum / divider;
        self.util_avg = self.util_sum / divider;
    }

    /// One full update: sum, then averages if a period was crossed (what
    /// __update_load_avg_se / __update_load_avg_cfs_rq / update_rt_rq_load_avg do).
    #[inline]
    pub fn update(&mut self, now: u64, load: u64, runnable: u64, running: bool, weight: u64) -> bool {
        self.update_scaled(now, load, runnable, running, weight, None)
    }

    /// `update()` with 4.19's scaled contribution when `scale` is given.
    #[inline]
    pub fn update_scaled(
        &mut self,
        now: u64,
        load: u64,
        runnable: u64,
        running: bool,
        weight: u64,
        scale: Option<ContribScale>,
    ) -> bool {
        if self.update_load_sum(now, load, runnable, running, scale) {
            self.update_load_avg(weight);
            true
        } else {
            false
        }
    }

    /// _task_util_est(): the ewma (v6.12); max(ewma, enqueued) in the 4.19 form, whose
    /// `enqueued` is read with its LSB flag (0 in the v6.12 form).
    #[inline]
    pub fn ewma(&self) -> u64 {
        let e = (self.util_est & !UTIL_AVG_UNCHANGED) as u64;
        e.max(self.util_est_enqueued as u64)
    }
}

#[inline]
fn sub_positive(a: &mut u64, b: u64) {
    *a = a.saturating_sub(b);
}

/// attach_entity_load_avg() + enqueue_load_avg(): align the entity with the cfs_rq's
/// period and add it. `se_weight` is the task's load weight.
pub fn attach_entity_load_avg(cfs: &mut SchedAvg, se: &mut SchedAvg, se_weight: u64) {
    let divider = cfs.pelt_divider() as u64;
    se.last_update_time = cfs.last_update_time;
    se.period_contrib = cfs.period_contrib;
    se.util_sum = se.util_avg * divider;
    se.runnable_sum = se.runnable_avg * divider;
    se.load_sum = (se.load_avg * divider).checked_div(se_weight).unwrap_or(se.load_sum);
    cfs.util_avg += se.util_avg;
    cfs.util_sum += se.util_sum;
    cfs.runnable_avg += se.runnable_avg;
    cfs.runnable_sum += se.runnable_sum;
    cfs.load_avg += se.load_avg;
    cfs.load_sum += se_weight * se.load_sum;
}

/// detach_entity_load_avg(): subtract, floored at 0 and so that no sum falls below
/// avg * PELT_MIN_DIVIDER (the kernel's guard against sum/avg drift).
pub fn detach_entity_load_avg(cfs: &mut SchedAvg, se: &SchedAvg, se_weight: u64) {
    let min_div = PELT_MIN_DIVIDER as u64;
    sub_positive(&mut cfs.util_avg, se.util_avg);
    sub_positive(&mut cfs.util_sum, se.util_sum);
    cfs.util_sum = cfs.util_sum.max(cfs.util_avg * min_div);
    sub_positive(&mut cfs.runnable_avg, se.runnable_avg);
    sub_positive(&mut cfs.runnable_sum, se.runnable_sum);
    cfs.runnable_sum = cfs.runnable_sum.max(cfs.runnable_avg * min_div);
    sub_positive(&mut cfs.load_avg, se.load_avg);
    sub_positive(&mut cfs.load_sum, se_weight * se.load_sum);
    cfs.load_sum = cfs.load_sum.max(cfs.load_avg * min_div);
}

/// util_est_update() (v6.12 single-word form), on a dequeue for sleep. `util_avg` is the
/// task's util at its last PELT recomputation, as in the kernel.
pub fn util_est_update(se: &mut SchedAvg, capacity_orig: u64) {
    if se.util_est & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let mut ewma = se.util_est as u64;
    let dequeued = se.util_avg;
    let store = |se: &mut SchedAvg, ewma: u64| se.util_est = ewma as u32 | UTIL_AVG_UNCHANGED;
    if ewma <= dequeued {
        return store(se, dequeued);
    }
    let last_ewma_diff = ewma - dequeued;
    if last_ewma_diff < 10 {
        // within 1% of SCHED_CAPACITY_SCALE: keep
        return store(se, ewma);
    }
    if dequeued > capacity_orig {
        return; // the task could not show its real util here; no store, flag stays clear
    }
    if dequeued + 10 < se.runnable_avg {
        return store(se, ewma); // starved: util_avg underestimates the task
    }
    // ewma(t) = w * dequeued + (1 - w) * ewma(t-1), w = 1/4, computed as the kernel does
    ewma <<= 2;
    ewma -= last_ewma_diff;
    ewma >>= 2;
    store(se, ewma)
}

/// util_est_dequeue()'s task part in the 4.19 form (fair.c, after the PELT update of the
/// dequeue). Nothing is done until util_avg has been recomputed since the last sample (the
/// LSB flag). The sample is task_util | flag; within 1 % of SCHED_CAPACITY_SCALE of the
/// ewma the kernel returns from a local copy, so neither `enqueued` nor the ewma is
/// written: the old `enqueued` (its flag cleared) still counts in _task_util_est() and the
/// next dequeue samples again. Otherwise the ewma moves a quarter of the way, both ways
/// (no fast-up before 5.6), and both fields are stored.
pub fn util_est_dequeue_v4_19(se: &mut SchedAvg) {
    if se.util_est_enqueued & UTIL_AVG_UNCHANGED_V4_19 != 0 {
        return;
    }
    let enqueued = se.util_avg as u32 | UTIL_AVG_UNCHANGED_V4_19;
    let ewma = se.util_est as i64;
    let last_ewma_diff = enqueued as i64 - ewma;
    if last_ewma_diff.abs() < 10 {
        return; // within_margin(last_ewma_diff, SCHED_CAPACITY_SCALE / 100)
    }
    se.util_est = (((ewma << 2) + last_ewma_diff) >> 2) as u32;
    se.util_est_enqueued = enqueued;
}

/// util_est_update() of the Pixel's 5.10 kernel (the vendor hook
/// rvh_util_est_update_pixel_mod() replaces the GKI's; at the end of the dequeue, as 4.19):
/// nothing until util_avg has been recomputed since the last sample; the sample is task_util
/// at most the task's uclamp.max; an ewma below it jumps to it (UTIL_EST_FASTUP, 5.7);
/// within 1 % nothing is written; a task whose util exceeds the CPU's capacity_orig (no idle
/// time to measure it by) is not sampled; otherwise the ewma moves a quarter of the way down,
/// at most uclamp.max. The flag is kept out of the value (the module reads
/// `enqueued & ~UTIL_AVG_UNCHANGED`): here in the ewma word's top bit, which ewma() masks, with
/// `enqueued` stored bare.
pub fn util_est_update_v5_10(se: &mut SchedAvg, uclamp_max: u64, capacity_orig: u64) {
    if se.util_est & UTIL_AVG_UNCHANGED != 0 {
        return;
    }
    let enqueued = se.util_avg.min(uclamp_max) as u32;
    let ewma = se.util_est as i64;
    if ewma < enqueued as i64 {
        se.util_est = enqueued | UTIL_AVG_UNCHANGED;
        se.util_est_enqueued = enqueued;
        return;
    }
    let last_ewma_diff = enqueued as i64 - ewma;
    if last_ewma_diff.abs() < 10 || se.util_avg > capacity_orig {
        return;
    }
    let ewma = (((ewma << 2) + last_ewma_diff) >> 2).min(uclamp_max as i64);
    se.util_est = ewma as u32 | UTIL_AVG_UNCHANGED;
    se.util_est_enqueued = enqueued;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run a fresh signal for `ms` milliseconds (exactly 1024-µs periods = 1 "PELT ms").
    fn run_for(sa: &mut SchedAvg, start: u64, periods: u64, running: bool) -> u64 {
        let mut t = start;
        for _ in 0..periods {
            t += 1024 * 1024; // one period in ns
            sa.update(t, running as u64, running as u64, running, 1024);
        }
        t
    }

    fn y() -> f64 {
        0.5f64.powf(1.0 / 32.0)
    }

    #[test]
    fn util_est_v5_10_jumps_up_and_decays_a_quarter_under_the_clamp() {
        let f = UTIL_AVG_UNCHANGED;
        // fast-up: ewma 100, sample 300 -> ewma 300 at once; the flag is not in the value
        let mut se = SchedAvg {
            util_avg: 300,
            util_est: 100,
            ..Default::default()
        };
        util_est_update_v5_10(&mut se, 1024, 1024);
        assert_eq!((se.util_est, se.util_est_enqueued, se.ewma()), (300 | f, 300, 300));
        // flagged: no new sample until PELT recomputes util_avg
        se.util_avg = 100;
        util_est_update_v5_10(&mut se, 1024, 1024);
        assert_eq!(se.ewma(), 300);
        // down: (300 * 4 + (100 - 300)) / 4 = 250; _task_util_est = max(250, 100)
        se.util_est &= !f;
        util_est_update_v5_10(&mut se, 1024, 1024);
        assert_eq!((se.util_est, se.util_est_enqueued, se.ewma()), (250 | f, 100, 250));
        // uclamp.max 200: the sample is 200 and the ewma at most 200: (250*4 - 50) / 4 = 237 -> 200
        se.util_est &= !f;
        se.util_avg = 900;
        util_est_update_v5_10(&mut se, 200, 1024);
        assert_eq!((se.util_est, se.util_est_enqueued), (200 | f, 200));
        // within 1 %: nothing written (the flag stays clear)
        se.util_est &= !f;
        se.util_avg = 195;
        util_est_update_v5_10(&mut se, 1024, 1024);
        assert_eq!((se.util_est, se.util_est_enqueued), (200, 200));
    }

    #[test]
    fn load_avg_max_is_the_kernel_constant() {
        assert_eq!(LOAD_AVG_MAX, 47742);
        assert_eq!(PELT_MIN_DIVIDER, 46718);
        assert_eq!(RUNNABLE_AVG_YN_INV[16], 0xb504f333); // (2^32-1)/sqrt(2)
    }

    #[test]
    fn decay_is_half_after_32_periods() {
        // (v >> 1) * 0xffffffff >> 32: the kernel's table entry 0 is 2^32 - 1, so one unit
        // is lost to truncation, as in the kernel
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        assert_eq!(decay_load(12345, 32 * 63 + 1), 0);
        let v = decay_load(1_000_000, 5);
        let exact = 1_000_000.0 * y().powi(5);
        assert!((v as f64 - exact).abs() <= 1.0, "{v} vs {exact}");
    }

    #[test]
    fn util_ramps_like_1024_times_one_minus_y_pow_t() {
        // From zero, running continuously for t periods: util = 1024 * (1 - y^t), within
        // the truncation of the integer arithmetic (a few units).
        for &t in &[8u64, 32, 74, 106, 200] {
            let mut sa = SchedAvg::default();
            run_for(&mut sa, 0, t, true);
            let expect = 1024.0 * (1.0 - y().powi(t as i32));
            assert!(
                (sa.util_avg as f64 - expect).abs() <= 3.0,
                "t={t}: util {} vs formula {expect:.1}",
                sa.util_avg
            );
        }
        let mut sa = SchedAvg::default();
        run_for(&mut sa, 0, 32, true);
        assert!((509..=513).contains(&sa.util_avg), "50% at 32 ms, got {}", sa.util_avg);
    }

    #[test]
    fn util_decays_by_half_every_32_periods_when_blocked() {
        let mut sa = SchedAvg::default();
        let t = run_for(&mut sa, 0, 400, true);
        let full = sa.util_avg;
        assert!(full >= 1000, "saturated {full}");
        run_for(&mut sa, t, 32, false);
        let half = sa.util_avg as f64;
        assert!((half - full as f64 / 2.0).abs() <= 3.0, "{half} vs {}", full / 2);
    }

    #[test]
    fn sub_period_update_does_not_change_the_average() {
        let mut sa = SchedAvg::default();
        run_for(&mut sa, 0, 40, true);
        let before = sa.util_avg;
        let t0 = sa.last_update_time;
        assert!(!sa.update(t0 + 500 * 1024, 1, 1, true, 1024));
        assert_eq!(sa.util_avg, before);
        assert_eq!(sa.period_contrib, 500);
    }

    #[test]
    fn util_est_v4_19_form() {
        // 4.19's fields: ewma without a flag, enqueued = task_util | 1 (LSB flag)
        let mut se = SchedAvg {
            util_avg: 100,
            util_est: 500,
            ..Default::default()
        };
        util_est_dequeue_v4_19(&mut se);
        // enqueued 100|1 = 101; diff 101 - 500 = -399; ewma (4*500 - 399) >> 2 = 1601 >> 2
        // = 400; _task_util_est = max(400, 101)
        assert_eq!((se.util_est, se.util_est_enqueued), (400, 101));
        assert_eq!(se.ewma(), 400);
        // no PELT update since: the flag is still set, nothing changes
        se.util_avg = 800;
        util_est_dequeue_v4_19(&mut se);
        assert_eq!((se.util_est, se.util_est_enqueued), (400, 101));
        // cfs_se_util_change() clears the LSB (101 -> 100); rising, with no fast-up before
        // 5.6: 801 - 400 = 401, (1600 + 401) >> 2 = 500; the value read is max(500, 801)
        se.util_est_enqueued &= !UTIL_AVG_UNCHANGED_V4_19;
        util_est_dequeue_v4_19(&mut se);
        assert_eq!((se.util_est, se.util_est_enqueued), (500, 801));
        assert_eq!(se.ewma(), 801, "the enqueued value counts until the ewma catches up");
    }

    #[test]
    fn util_est_v4_19_within_the_margin_writes_nothing() {
        // ewma 500, the last sample 800 (flag cleared by a PELT update); the task now
        // dequeues at util 505: sample 505|1 = 505, last_ewma_diff 5, within_margin(5, 10)
        // -> return before WRITE_ONCE: enqueued stays 800 and _task_util_est = max(500, 800)
        // = 800 (what the rq's util_est gets at the next enqueue)
        let mut se = SchedAvg {
            util_avg: 505,
            util_est: 500,
            util_est_enqueued: 800,
            ..Default::default()
        };
        util_est_dequeue_v4_19(&mut se);
        assert_eq!((se.util_est, se.util_est_enqueued), (500, 800));
        assert_eq!(se.ewma(), 800);
        // the flag was not set either: the next dequeue samples again (util 300: 301 - 500
        // = -199 -> (2000 - 199) >> 2 = 450, enqueued 301, read max(450, 301) = 450)
        se.util_avg = 300;
        util_est_dequeue_v4_19(&mut se);
        assert_eq!((se.util_est, se.util_est_enqueued), (450, 301));
        assert_eq!(se.ewma(), 450);
        // v6.12 on the same dequeue (ewma 500, util 505): 500 <= 505, the ewma jumps to the
        // sample (fast-up): 505
        let mut se = SchedAvg {
            util_avg: 505,
            util_est: 500,
            ..Default::default()
        };
        util_est_update(&mut se, 1024);
        assert_eq!(se.ewma(), 505);
    }

    /// 8 ms (8 periods of 1024 µs) of running from a zero signal on a CPU of capacity 512
    /// at half its f_max (freq scale 512), one update per period. A full period's
    /// contribution is __accumulate_pelt_segments(1, 1024, 0) = decay_load(1024, 1) +
    /// (47742 - decay_load(47742, 1) - 1024) = 1002 + (47742 - 46718 - 1024) = 1002.
    ///  * 4.19 (task clock, scaled contribution): cap_scale(1002, 512) = 501, times
    ///    scale_cpu 512 per period: util_sum = 256512 * (1 - y^8)/(1 - y) = 1904612 with
    ///    the kernel's truncations; util_avg = 1904612 / 46718 = 40 (the formula
    ///    256 * (1 - y^8) = 40.7).
    ///  * v6.12 (clock_pelt advances 1048576 * 512/1024 * 512/1024 = 262144 ns per wall
    ///    period: 2 PELT periods in 8 ms, contribution 1002 << 10 each): util_sum =
    ///    1026048 * y + 1026048 = 2029184; util_avg = 2029184 / 46718 = 43 (the formula
    ///    1024 * (1 - y^2) = 43.4).
    #[test]
    fn eight_ms_at_half_frequency_on_a_half_capacity_cpu() {
        let scale = ContribScale { freq: 512, cpu: 512 };
        let mut sa = SchedAvg::default();
        for k in 1..=8u64 {
            sa.update_scaled(k << 20, 1, 1, true, 1024, Some(scale));
        }
        assert_eq!((sa.util_sum, sa.util_avg), (1904612, 40));
        let mut sa = SchedAvg::default();
        let mut clock_pelt = 0;
        for _ in 0..8 {
            clock_pelt += ((((1u64 << 20) * 512) >> 10) * 512) >> 10;
            sa.update(clock_pelt, 1, 1, true, 1024);
        }
        assert_eq!(clock_pelt, 2 << 20);
        assert_eq!((sa.util_sum, sa.util_avg), (2029184, 43));
        // always running, 4.19's util tends to 1024 * 1/2 * 1/2 = 256 (500 periods:
        // 256 * (1 - y^500) = 255.99, less the kernel's truncations), v6.12's to 1024
        let mut sa = SchedAvg::default();
        for k in 1..=500u64 {
            sa.update_scaled(k << 20, 1, 1, true, 1024, Some(scale));
        }
        assert!((253..=256).contains(&sa.util_avg), "{}", sa.util_avg);
    }

    #[test]
    fn util_est_ewma_quarter_weight() {
        let mut se = SchedAvg {
            util_avg: 100,
            util_est: 500,
            ..Default::default()
        };
        util_est_update(&mut se, 1024);
        // 500 - (500-100)/4 = 400
        assert_eq!(se.ewma(), 400);
        assert!(se.util_est & UTIL_AVG_UNCHANGED != 0);
        // rising: jumps to util_avg at once
        let mut se = SchedAvg {
            util_avg: 700,
            util_est: 300,
            ..Default::default()
        };
        util_est_update(&mut se, 1024);
        assert_eq!(se.ewma(), 700);
    }
}
