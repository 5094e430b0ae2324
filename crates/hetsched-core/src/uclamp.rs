//! Utilization clamping, after kernel/sched/core.c and sched.h (v6.12; linux-eas.md §9).
//!
//! A task's request [uclamp_min, uclamp_max] comes from rt-app's util_min/util_max; the
//! defaults are [0, 1024] for CFS and [1024, 1024] for RT (sched_util_clamp_min_rt_default).
//! No cgroups, so the effective value is the request. Each rq aggregates the clamps of its
//! runnable tasks per clamp id in UCLAMP_BUCKETS = 5 buckets (`bucket = min(v / 205, 4)`):
//! a bucket counts its tasks and keeps the largest value it has seen while non-empty; the
//! rq value is that of the highest non-empty bucket. When the last task leaves, the max
//! clamp keeps its last value (UCLAMP_FLAG_IDLE) and the min clamp drops to 0; the next
//! enqueue resets both. All of it is bypassed until some task sets a clamp
//! (`uclamp_is_used()`).
//!
//! Differences: no cgroup clamps and no system-wide limits; util_fits_cpu()'s actual capacity
//! is capacity_orig (no thermal or cpufreq pressure). docs/mechanisms/uclamp.md.

pub const UCLAMP_BUCKETS: usize = 5;
/// DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, UCLAMP_BUCKETS)
pub const UCLAMP_BUCKET_DELTA: u64 = 205;
pub const UCLAMP_MIN: usize = 0;
pub const UCLAMP_MAX: usize = 1;

#[inline]
pub fn bucket_id(v: u64) -> usize {
    ((v / UCLAMP_BUCKET_DELTA) as usize).min(UCLAMP_BUCKETS - 1)
}

#[derive(Debug, Clone)]
pub struct UclampRq {
    tasks: [[u32; UCLAMP_BUCKETS]; 2],
    bucket_value: [[u64; UCLAMP_BUCKETS]; 2],
    /// the rq's clamp values, [min, max]
    pub value: [u64; 2],
    /// UCLAMP_FLAG_IDLE
    pub idle: bool,
}

impl Default for UclampRq {
    fn default() -> Self {
        // init_uclamp_rq(): uclamp_none() values, flagged idle
        UclampRq {
            tasks: [[0; 5]; 2],
            bucket_value: [[0; 5]; 2],
            value: [0, 1024],
            idle: true,
        }
    }
}

impl UclampRq {
    /// uclamp_rq_inc(): a task with clamps [min, max] becomes runnable here.
    pub fn inc(&mut self, clamps: [u64; 2]) {
        for id in [UCLAMP_MIN, UCLAMP_MAX] {
            let v = clamps[id];
            if self.idle {
                self.value[id] = v; // uclamp_idle_reset(): retention ends on idle exit
            }
            let b = bucket_id(v);
            self.tasks[id][b] += 1;
            if self.tasks[id][b] == 1 || v > self.bucket_value[id][b] {
                self.bucket_value[id][b] = v;
            }
            if v > self.value[id] {
                self.value[id] = v;
            }
        }
        self.idle = false;
    }

    /// uclamp_rq_dec(): the task leaves.
    pub fn dec(&mut self, clamps: [u64; 2]) {
        for id in [UCLAMP_MIN, UCLAMP_MAX] {
            let b = bucket_id(clamps[id]);
            debug_assert!(self.tasks[id][b] > 0);
            self.tasks[id][b] -= 1;
            if self.tasks[id][b] > 0 {
                continue; // a bucket may overboost its remaining tasks (the kernel's choice)
            }
            if self.bucket_value[id][b] >= self.value[id] {
                self.value[id] = match (0..UCLAMP_BUCKETS).rev().find(|&k| self.tasks[id][k] > 0) {
                    Some(k) => self.bucket_value[id][k],
                    None if id == UCLAMP_MAX => {
                        self.idle = true; // keep the last max clamp while idle
                        clamps[id]
                    }
                    None => 0,
                };
            }
        }
    }
}

/// util_fits_cpu() (v6.12): 1 fits, 0 does not, -1 fits but uclamp_min cannot be met.
/// `capacity` is capacity_of(), `capacity_orig` arch_scale_cpu_capacity(), and the actual
/// capacity (without thermal or cpufreq pressure here) is capacity_orig.
pub fn util_fits_cpu(util: u64, umin: u64, umax: u64, capacity: u64, capacity_orig: u64, uclamp_used: bool) -> i32 {
    let mut fits = crate::fair::fits_capacity(util, capacity);
    if !uclamp_used {
        return fits as i32;
    }
    let max_is_none = capacity_orig == 1024 && umax == 1024;
    fits = fits || (!max_is_none && umax <= capacity_orig);
    let umin = umin.min(umax);
    if fits && util < umin && umin > capacity_orig {
        return -1;
    }
    fits as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_aggregation_in_buckets_and_idle_retention() {
        let mut rq = UclampRq::default();
        rq.inc([100, 300]);
        rq.inc([500, 1024]);
        assert_eq!(rq.value, [500, 1024]);
        rq.dec([500, 1024]);
        // min: the 100 task's bucket (0) -> 100; max: bucket of 300 (1) -> 300
        assert_eq!(rq.value, [100, 300]);
        // two tasks in one bucket (205..409): the bucket keeps its max while non-empty
        rq.inc([0, 400]);
        assert_eq!(rq.value[1], 400);
        rq.dec([0, 400]);
        assert_eq!(rq.value[1], 400, "the bucket still has the 300 task and keeps 400");
        rq.dec([100, 300]);
        // idle: min 0, max retained as the last task's (uclamp_idle_value)
        assert_eq!(rq.value, [0, 300]);
        assert!(rq.idle);
        rq.inc([0, 200]);
        assert_eq!(rq.value, [0, 200], "idle exit resets the retained max");
    }

    #[test]
    fn util_fits_cpu_cases() {
        // no uclamp: plain 80% margin
        assert_eq!(util_fits_cpu(400, 0, 1024, 512, 512, false), 1);
        assert_eq!(util_fits_cpu(420, 0, 1024, 512, 512, false), 0);
        // uclamp_max 300 <= 512: a capped task fits the little CPU even at util 500
        assert_eq!(util_fits_cpu(500, 0, 300, 512, 512, true), 1);
        // uclamp_min 800 on a 512 CPU: fits by util, but the boost cannot be met
        assert_eq!(util_fits_cpu(100, 800, 1024, 512, 512, true), -1);
        // on the big CPU the same task fits fully
        assert_eq!(util_fits_cpu(100, 800, 1024, 1024, 1024, true), 1);
    }
}
