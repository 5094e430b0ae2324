//! Knobs: every tunable a run or a study varies, declared once with its kernel name, unit,
//! default, range and source (the role `features.h` and the sysctl tables play in the
//! kernel). The CLI, the Python API and the docs read this table through `_engine.knobs()`.

use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy)]
pub struct KnobDecl {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    pub unit: &'static str,
    pub source: &'static str,
    pub description: &'static str,
}

macro_rules! knobs {
    ($( $id:ident = ($name:expr, $default:expr, $min:expr, $max:expr, $unit:expr, $source:expr, $desc:expr) ),* $(,)?) => {
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(usize)]
        pub enum Knob { $( $id ),* }
        pub const KNOBS: &[KnobDecl] = &[ $( KnobDecl { name: $name, default: $default, min: $min, max: $max, unit: $unit, source: $source, description: $desc } ),* ];
    };
}

knobs! {
    TickHz = ("tick_hz", 250.0, 100.0, 1000.0, "Hz", "CONFIG_HZ",
        "Scheduler tick frequency; one global jiffy grid, busy CPUs only (NO_HZ idle)."),
    SchedLatencyNs = ("sched_latency_ns", 6_000_000.0, 100_000.0, 1_000_000_000.0, "ns",
        "kernel/sched/fair.c normalized_sysctl_sched_latency",
        "CFS target latency before tunable scaling; effective = value * (1 + ilog2(min(nr_cpus, 8)))."),
    SchedMinGranularityNs = ("sched_min_granularity_ns", 750_000.0, 100_000.0, 1_000_000_000.0, "ns",
        "kernel/sched/fair.c normalized_sysctl_sched_min_granularity",
        "CFS minimum slice before tunable scaling (same factor as sched_latency_ns)."),
    SchedWakeupGranularityNs = ("sched_wakeup_granularity_ns", 1_000_000.0, 0.0, 1_000_000_000.0, "ns",
        "kernel/sched/fair.c normalized_sysctl_sched_wakeup_granularity",
        "CFS wakeup-preemption granularity before tunable scaling (same factor)."),
    SchedMigrationCostNs = ("sched_migration_cost_ns", 500_000.0, 0.0, 1_000_000_000.0, "ns",
        "kernel/sched/fair.c sysctl_sched_migration_cost",
        "A task that ran within this time is cache hot (task_hot) and is not pulled by the balancer."),
    SchedRrTimesliceMs = ("sched_rr_timeslice_ms", 100.0, 1.0, 10_000.0, "ms",
        "kernel/sched/rt.c sched_rr_timeslice (RR_TIMESLICE)", "SCHED_RR time slice."),
    SchedutilTargetLoad = ("schedutil.target_load", 0.8, 0.05, 1.0, "ratio",
        "kernel/sched/cpufreq_schedutil.c map_util_perf (util + util>>2 = util / 0.8)",
        "Utilisation at which schedutil asks for the next OPP up; headroom = 1 / target_load."),
    // Learning EAS (Han & Lee 2020) Algorithm 1: one TARGET_LOAD per cluster
    SchedutilTargetLoadCluster0 = ("schedutil.target_load.cluster0", 0.0, 0.0, 1.0, "ratio",
        "Learning EAS (Han & Lee 2020) Algorithm 1: TARGET_LOAD for cluster (x)",
        "schedutil.target_load for cluster 0 only; 0 = use schedutil.target_load (values below 0.05 are raised to 0.05)."),
    SchedutilTargetLoadCluster1 = ("schedutil.target_load.cluster1", 0.0, 0.0, 1.0, "ratio",
        "Learning EAS (Han & Lee 2020) Algorithm 1: TARGET_LOAD for cluster (x)",
        "schedutil.target_load for cluster 1 only; 0 = use schedutil.target_load."),
    SchedutilTargetLoadCluster2 = ("schedutil.target_load.cluster2", 0.0, 0.0, 1.0, "ratio",
        "Learning EAS (Han & Lee 2020) Algorithm 1: TARGET_LOAD for cluster (x)",
        "schedutil.target_load for cluster 2 only; 0 = use schedutil.target_load."),
    SchedutilTargetLoadCluster3 = ("schedutil.target_load.cluster3", 0.0, 0.0, 1.0, "ratio",
        "Learning EAS (Han & Lee 2020) Algorithm 1: TARGET_LOAD for cluster (x)",
        "schedutil.target_load for cluster 3 only; 0 = use schedutil.target_load."),
    SchedutilRateLimitUs = ("schedutil.rate_limit_us", -1.0, -1.0, 10_000_000.0, "us",
        "drivers/cpufreq/cpufreq.c cpufreq_policy_transition_delay_us (v6.12)",
        "Minimum time between two frequency commits; -1 = the kernel default, 1.5 x transition latency (1000 us if none)."),
    CpufreqTransitionLatencyUs = ("cpufreq.transition_latency_us", 100.0, 0.0, 100_000.0, "us",
        "assumption: the platform files carry no clock-latency-ns",
        "Time from a frequency commit to the new OPP taking effect, per cluster."),
    BalanceBusyFactor = ("balance.busy_factor", 16.0, 1.0, 1024.0, "x",
        "kernel/sched/topology.c sd_init busy_factor",
        "The periodic balance interval of a busy CPU is multiplied by this."),
    OndemandUpThreshold = ("ondemand.up_threshold", 95.0, 1.0, 100.0, "%",
        "drivers/cpufreq/cpufreq_ondemand.c MICRO_FREQUENCY_UP_THRESHOLD (95; 80 without micro idle accounting)",
        "Busy load above which ondemand goes to f_max."),
    OndemandSamplingDownFactor = ("ondemand.sampling_down_factor", 1.0, 1.0, 100000.0, "x",
        "drivers/cpufreq/cpufreq_ondemand.c DEF_SAMPLING_DOWN_FACTOR",
        "After a jump to f_max, the next sample waits this many sampling periods."),
    OndemandSamplingRateUs = ("ondemand.sampling_rate_us", -1.0, -1.0, 10_000_000.0, "us",
        "drivers/cpufreq/cpufreq_governor.c cpufreq_dbs_governor_init",
        "Sampling period; -1 = the kernel default, max(2 ticks, the transition delay)."),
    ConservativeUpThreshold = ("conservative.up_threshold", 80.0, 1.0, 100.0, "%",
        "drivers/cpufreq/cpufreq_conservative.c DEF_FREQUENCY_UP_THRESHOLD", "Load above which conservative steps up."),
    ConservativeDownThreshold = ("conservative.down_threshold", 20.0, 0.0, 99.0, "%",
        "drivers/cpufreq/cpufreq_conservative.c DEF_FREQUENCY_DOWN_THRESHOLD", "Load below which conservative steps down."),
    ConservativeFreqStep = ("conservative.freq_step", 5.0, 0.0, 100.0, "% of f_max",
        "drivers/cpufreq/cpufreq_conservative.c DEF_FREQUENCY_STEP", "Size of one step; 0 freezes the frequency."),
    ConservativeSamplingDownFactor = ("conservative.sampling_down_factor", 1.0, 1.0, 10.0, "x",
        "drivers/cpufreq/cpufreq_conservative.c DEF_SAMPLING_DOWN_FACTOR / MAX_SAMPLING_DOWN_FACTOR",
        "A step down is considered every this many samples."),
    ConservativeSamplingRateUs = ("conservative.sampling_rate_us", -1.0, -1.0, 10_000_000.0, "us",
        "drivers/cpufreq/cpufreq_governor.c cpufreq_dbs_governor_init",
        "Sampling period; -1 = the kernel default, max(2 ticks, the transition delay)."),
    UserspaceKhz = ("userspace.khz", 0.0, 0.0, 100_000_000.0, "kHz",
        "drivers/cpufreq/cpufreq_userspace.c scaling_setspeed",
        "The userspace governor's frequency, resolved per cluster to the lowest OPP at or above it (0: the lowest OPP)."),
    InteractiveTimerRateUs = ("interactive.timer_rate_us", 20_000.0, 1_000.0, 10_000_000.0, "us",
        "drivers/cpufreq/cpufreq_interactive.c DEFAULT_TIMER_RATE", "Sampling period of the interactive governor."),
    InteractiveGoHispeedLoad = ("interactive.go_hispeed_load", 99.0, 1.0, 100.0, "%",
        "drivers/cpufreq/cpufreq_interactive.c DEFAULT_GO_HISPEED_LOAD", "Load at which a CPU jumps to hispeed_freq."),
    InteractiveHispeedKhz = ("interactive.hispeed_khz", 0.0, 0.0, 100_000_000.0, "kHz",
        "drivers/cpufreq/cpufreq_interactive.c hispeed_freq (default policy->max)",
        "The jump frequency, resolved per cluster (lowest OPP at or above it); 0 = f_max."),
    InteractiveTargetLoad = ("interactive.target_load", 90.0, 1.0, 100.0, "%",
        "drivers/cpufreq/cpufreq_interactive.c DEFAULT_TARGET_LOAD", "Load each frequency is chosen to stay under."),
    InteractiveMinSampleTimeUs = ("interactive.min_sample_time_us", 80_000.0, 0.0, 10_000_000.0, "us",
        "drivers/cpufreq/cpufreq_interactive.c DEFAULT_MIN_SAMPLE_TIME", "Minimum time at a frequency before lowering it."),
    InteractiveAboveHispeedDelayUs = ("interactive.above_hispeed_delay_us", 20_000.0, 0.0, 10_000_000.0, "us",
        "drivers/cpufreq/cpufreq_interactive.c DEFAULT_ABOVE_HISPEED_DELAY", "Wait before raising above hispeed_freq."),
    // --- the fair class's form and v6.12's EEVDF features (fair.rs; docs/mechanisms/fair.md) ---
    FairEevdf = ("fair.eevdf", -1.0, -1.0, 1.0, "-1/0/1",
        "kernel/sched/fair.c (v6.6+): EEVDF pick_eevdf, place_entity with lag, update_deadline; v6.5 and 4.19: CFS",
        "The fair class: -1 = the kernel profile's (mainline-6.12 EEVDF, android-4.19 CFS; a policy that needs one form gets it), 1 = EEVDF as v6.12 runs it, 0 = CFS in its v6.5 form."),
    FairDelayDequeue = ("fair.delay_dequeue", 1.0, 0.0, 1.0, "0/1",
        "kernel/sched/features.h SCHED_FEAT(DELAY_DEQUEUE, true) and DELAY_ZERO (v6.12); fair.c dequeue_entity, requeue_delayed_entity, pick_next_entity",
        "EEVDF only: a task that sleeps while ineligible (negative lag) stays queued, counted in nr_running, load and runnable PELT, until it is picked (then it leaves with its lag clipped to at most 0) or wakes (then it is requeued in place)."),
    FairPreemptShort = ("fair.preempt_short", 1.0, 0.0, 1.0, "0/1",
        "kernel/sched/features.h SCHED_FEAT(PREEMPT_SHORT, true) (v6.12); fair.c do_preempt_short, did_preempt_short",
        "EEVDF only: a woken eligible task with a shorter slice and an earlier deadline than curr (or an ineligible curr) cancels curr's RUN_TO_PARITY protection."),
    // --- the RT class (rt.rs; docs/mechanisms/rt.md) ---
    UclampMinRtDefault = ("uclamp.min_rt_default", 1024.0, 0.0, 1024.0, "of 1024",
        "kernel/sched/core.c sysctl_sched_uclamp_util_min_rt_default (v6.12 default SCHED_CAPACITY_SCALE); the android-4.19 profile takes 0, the value phones' init scripts write (e.g. MediaTek device/*/init.mt6789.power.rc: on init, write /proc/sys/kernel/sched_util_clamp_min_rt_default 0)",
        "uclamp_min of an RT task that asks for none: 1024 sends it to the biggest CPUs (rt_task_fits_capacity) and its CPU to the top OPP; a value other than 1024 turns uclamp on (the sysctl write enables sched_uclamp_used)."),
    FairServerRuntimeUs = ("fair_server.runtime_us", 50_000.0, 0.0, 1_000_000.0, "us",
        "kernel/sched/deadline.c dl_server_start (v6.12: 50 ms; debugfs sched/fair_server/cpuN/runtime)",
        "Runtime of each CPU's deferred fair server, which runs starved fair tasks ahead of RT (v6.12's replacement for RT throttling); 0 = no server. The android-4.19 profile has none."),
    FairServerPeriodUs = ("fair_server.period_us", 1_000_000.0, 10_000.0, 10_000_000.0, "us",
        "kernel/sched/deadline.c dl_server_start (v6.12: 1000 ms; debugfs sched/fair_server/cpuN/period)",
        "Period (and relative deadline) of the fair server."),
    SchedRtPeriodUs = ("sched_rt_period_us", 1_000_000.0, 1.0, 10_000_000.0, "us",
        "kernel/sched/core.c sysctl_sched_rt_period (v4.19: 1 s)",
        "android-4.19 profile: the period of RT bandwidth control. v6.12 without RT_GROUP_SCHED throttles no RT runqueue (its fair server does the job), so mainline ignores it."),
    SchedRtRuntimeUs = ("sched_rt_runtime_us", 950_000.0, -1.0, 10_000_000.0, "us",
        "kernel/sched/core.c sysctl_sched_rt_runtime (v4.19: 0.95 s; -1 = RUNTIME_INF)",
        "android-4.19 profile: RT tasks may run this long per sched_rt_period_us on a CPU before its RT runqueue is throttled until the next period; -1 = never."),
    RtRuntimeShare = ("sched_feat.rt_runtime_share", 1.0, 0.0, 1.0, "bool",
        "kernel/sched/features.h RT_RUNTIME_SHARE (v4.19: true; false from v5.10)",
        "android-4.19 profile: a CPU that used up its RT runtime borrows the unused runtime of the others (do_balance_runtime), up to a whole period."),
    // --- end RT knobs ---
    // --- WALT, schedtune and the msm schedutil (walt.rs, schedtune.rs; the msm-4.14 profile) ---
    SchedWalt = ("sched_walt", 1.0, 0.0, 1.0, "0/1",
        "msm-4.14 CONFIG_SCHED_WALT (and CONFIG_SCHED_CORE_CTL with it): set in Qualcomm's sm8150 defconfigs; unset in floral_defconfig, the Pixel 4's build of the same tree (e.g. GrapheneOS-Archive/kernel_msm-coral arch/arm64/configs/floral_defconfig)",
        "msm-4.14 profile only (refused as 0 under another profile), set when the simulation is built: 1 = the tree built with WALT and core_ctl; 0 = built without them, as the Pixel 4: PELT drives EAS, the fits and schedutil (boosted_cpu_util() on PELT plus the RT average, 1.25 headroom, up/down rate limits; hispeed_freq, hispeed_load, pl and the new-task rule are WALT-only and do nothing), schedtune as with WALT, no core_ctl (vendor.cpu_isolation isolates nothing)."),
    SchedRavgWindow = ("sched_ravg_window", 0.0, 0.0, 1_000_000_000.0, "ns",
        "msm-4.14 kernel/sched/walt.c MIN_SCHED_RAVG_WINDOW (20 ms; 6 ticks of 3333333 ns at HZ=300), MAX_SCHED_RAVG_WINDOW 1 s, boot parameter sched_ravg_window",
        "msm-4.14 profile: WALT's window; 0 = the kernel default (20 ms, or 19999998 ns at tick_hz 300). Values below the minimum or above 1 s are refused, as the kernel does."),
    SchedRavgHistSize = ("sched_ravg_hist_size", 5.0, 1.0, 5.0, "windows",
        "msm-4.14 walt.c sched_ravg_hist_size (5, RAVG_HIST_SIZE_MAX)",
        "msm-4.14 profile: windows of busy time a task's demand remembers."),
    SchedWindowStatsPolicy = ("sched_window_stats_policy", 2.0, 0.0, 3.0, "0-3",
        "msm-4.14 walt.c sched_window_stats_policy (WINDOW_STATS_MAX_RECENT_AVG)",
        "msm-4.14 profile: a task's demand from its history: 0 the last window, 1 the maximum, 2 max(last, average), 3 the average."),
    SchedInitTaskLoadPct = ("sched_init_task_load_pct", 15.0, 0.0, 100.0, "% of a window",
        "msm-4.14 walt.c sysctl_sched_init_task_load_pct (15)",
        "msm-4.14 profile: the demand (and history) of a new task."),
    SchedPredl = ("sched_predl", 1.0, 0.0, 1.0, "0/1",
        "msm-4.14 walt.c sched_predl (boot parameter, on)",
        "msm-4.14 profile: tasks keep a predicted demand (busy buckets); a CPU's queued predictions are the pl schedutil may read."),
    SchedIoIsBusy = ("sched_io_is_busy", 1.0, 0.0, 1.0, "0/1",
        "msm-4.14 walt.c sched_io_is_busy (1)",
        "msm-4.14 profile: an idle CPU with a task blocked in I/O there counts as busy in its window."),
    SchedFreqReportingPolicy = ("sched_freq_reporting_policy", 0.0, 0.0, 2.0, "0-2",
        "msm-4.14 walt.c sysctl_sched_freq_reporting_policy (FREQ_REPORT_MAX_CPU_LOAD_TOP_TASK)",
        "msm-4.14 profile: the load reported to schedutil: 0 max(CPU busy time, biggest task), 1 the biggest task, 2 the CPU's busy time."),
    SchedutilHispeedLoad = ("schedutil.hispeed_load", 90.0, 0.0, 100.0, "%",
        "msm-4.14 kernel/sched/cpufreq_schedutil.c DEFAULT_HISPEED_LOAD (90)",
        "msm-4.14 profile: when a CPU's load reaches this % of the policy's average capacity, schedutil asks for at least hispeed_freq."),
    SchedutilHispeedFreqCluster0 = ("schedutil.hispeed_freq.cluster0", 0.0, 0.0, 100_000_000.0, "kHz",
        "msm-4.14 cpufreq_schedutil.c hispeed_freq (0 unless written); sm8150 init.qcom.post_boot.sh (msmnile): 1209600 for policy0",
        "msm-4.14 profile: cluster 0's hispeed frequency; 0 = none."),
    SchedutilHispeedFreqCluster1 = ("schedutil.hispeed_freq.cluster1", 0.0, 0.0, 100_000_000.0, "kHz",
        "msm-4.14 cpufreq_schedutil.c hispeed_freq; sm8150 init.qcom.post_boot.sh (msmnile): 1612800 for policy4",
        "msm-4.14 profile: cluster 1's hispeed frequency; 0 = none."),
    SchedutilHispeedFreqCluster2 = ("schedutil.hispeed_freq.cluster2", 0.0, 0.0, 100_000_000.0, "kHz",
        "msm-4.14 cpufreq_schedutil.c hispeed_freq; sm8150 init.qcom.post_boot.sh (msmnile): 1612800 for policy7",
        "msm-4.14 profile: cluster 2's hispeed frequency; 0 = none."),
    SchedutilHispeedFreqCluster3 = ("schedutil.hispeed_freq.cluster3", 0.0, 0.0, 100_000_000.0, "kHz",
        "msm-4.14 cpufreq_schedutil.c hispeed_freq",
        "msm-4.14 profile: cluster 3's hispeed frequency; 0 = none."),
    SchedutilPl = ("schedutil.pl", 0.0, 0.0, 1.0, "0/1",
        "msm-4.14 cpufreq_schedutil.c tunables->pl (0 unless written); sm8150 init.qcom.post_boot.sh (msmnile) writes 1 for every policy",
        "msm-4.14 profile: schedutil takes WALT's predicted load of a CPU when it exceeds the measured one."),
    SchedutilUpRateLimitUs = ("schedutil.up_rate_limit_us", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c up_rate_limit_us (default the policy's transition delay)",
        "msm-4.14 and pixel-5.10 (sched_pixel) profiles: minimum time before schedutil raises a frequency; -1 = the kernel default. Per cluster: schedutil.up_rate_limit_us.clusterN."),
    SchedutilDownRateLimitUs = ("schedutil.down_rate_limit_us", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c down_rate_limit_us (default the policy's transition delay)",
        "msm-4.14 and pixel-5.10 (sched_pixel) profiles: minimum time before schedutil lowers a frequency; -1 = the kernel default. Per cluster: schedutil.down_rate_limit_us.clusterN."),
    SchedutilUpRateLimitUsCluster0 = ("schedutil.up_rate_limit_us.cluster0", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c up_rate_limit_us of policy0", "-1 = schedutil.up_rate_limit_us."),
    SchedutilUpRateLimitUsCluster1 = ("schedutil.up_rate_limit_us.cluster1", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c up_rate_limit_us", "-1 = schedutil.up_rate_limit_us."),
    SchedutilUpRateLimitUsCluster2 = ("schedutil.up_rate_limit_us.cluster2", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c up_rate_limit_us", "-1 = schedutil.up_rate_limit_us."),
    SchedutilUpRateLimitUsCluster3 = ("schedutil.up_rate_limit_us.cluster3", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c up_rate_limit_us", "-1 = schedutil.up_rate_limit_us."),
    SchedutilDownRateLimitUsCluster0 = ("schedutil.down_rate_limit_us.cluster0", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c down_rate_limit_us of policy0", "-1 = schedutil.down_rate_limit_us."),
    SchedutilDownRateLimitUsCluster1 = ("schedutil.down_rate_limit_us.cluster1", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c down_rate_limit_us", "-1 = schedutil.down_rate_limit_us."),
    SchedutilDownRateLimitUsCluster2 = ("schedutil.down_rate_limit_us.cluster2", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c down_rate_limit_us", "-1 = schedutil.down_rate_limit_us."),
    SchedutilDownRateLimitUsCluster3 = ("schedutil.down_rate_limit_us.cluster3", -1.0, -1.0, 10_000_000.0, "us",
        "msm-4.14 cpufreq_schedutil.c down_rate_limit_us", "-1 = schedutil.down_rate_limit_us."),
    SchedutilDownRateLimitScalePowCluster0 = ("schedutil.down_rate_limit_scale_pow.cluster0", 1.0, 1.0, 8.0, "",
        "Google sched_pixel (gs101) sugov_up_down_rate_limit(): down_rate_limit_scale_pow; the Pixel 6 init.gs101.rc writes 2 on policy0",
        "pixel-5.10 profile: a cut from f to f' waits down_rate_limit_us x (f'/f)^pow on cluster 0: a deep cut waits less."),
    SchedutilDownRateLimitScalePowCluster1 = ("schedutil.down_rate_limit_scale_pow.cluster1", 1.0, 1.0, 8.0, "",
        "Google sched_pixel (gs101) sugov_up_down_rate_limit(): down_rate_limit_scale_pow; the Pixel 6 init.gs101.rc writes 2 on policy0",
        "pixel-5.10 profile: a cut from f to f' waits down_rate_limit_us x (f'/f)^pow on cluster 1: a deep cut waits less."),
    SchedutilDownRateLimitScalePowCluster2 = ("schedutil.down_rate_limit_scale_pow.cluster2", 1.0, 1.0, 8.0, "",
        "Google sched_pixel (gs101) sugov_up_down_rate_limit(): down_rate_limit_scale_pow; the Pixel 6 init.gs101.rc writes 2 on policy0",
        "pixel-5.10 profile: a cut from f to f' waits down_rate_limit_us x (f'/f)^pow on cluster 2: a deep cut waits less."),
    SchedutilDownRateLimitScalePowCluster3 = ("schedutil.down_rate_limit_scale_pow.cluster3", 1.0, 1.0, 8.0, "",
        "Google sched_pixel (gs101) sugov_up_down_rate_limit(): down_rate_limit_scale_pow; the Pixel 6 init.gs101.rc writes 2 on policy0",
        "pixel-5.10 profile: a cut from f to f' waits down_rate_limit_us x (f'/f)^pow on cluster 3: a deep cut waits less."),
    StuneRootBoost = ("schedtune.root.boost", 0.0, -100.0, 100.0, "%",
        "Android kernel/sched/tune.c (4.14): /dev/stune/schedtune.boost, 0 by default",
        "msm-4.14 profile: boost of the root group (tasks with no `stune`)."),
    StuneRootPreferIdle = ("schedtune.root.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Android kernel/sched/tune.c: schedtune.prefer_idle", "msm-4.14 profile: prefer_idle of the root group."),
    StuneForegroundBoost = ("schedtune.foreground.boost", 0.0, -100.0, 100.0, "%",
        "Android kernel/sched/tune.c: /dev/stune/foreground/schedtune.boost", "msm-4.14 profile: boost of the foreground group."),
    StuneForegroundPreferIdle = ("schedtune.foreground.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Android kernel/sched/tune.c; Pixel 4 init.hardware.rc writes 1", "msm-4.14 profile: prefer_idle of the foreground group."),
    StuneBackgroundBoost = ("schedtune.background.boost", 0.0, -100.0, 100.0, "%",
        "Android kernel/sched/tune.c: /dev/stune/background/schedtune.boost", "msm-4.14 profile: boost of the background group."),
    StuneBackgroundPreferIdle = ("schedtune.background.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Android kernel/sched/tune.c", "msm-4.14 profile: prefer_idle of the background group."),
    StuneTopAppBoost = ("schedtune.top-app.boost", 0.0, -100.0, 100.0, "%",
        "Android kernel/sched/tune.c: /dev/stune/top-app/schedtune.boost; Pixel 4 (coral) init.hardware.rc writes 10",
        "msm-4.14 profile: boost of the top-app group (the foreground app's UI and render threads)."),
    StuneTopAppPreferIdle = ("schedtune.top-app.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Android kernel/sched/tune.c; Pixel 4 (coral) init.hardware.rc writes 1", "msm-4.14 profile: prefer_idle of the top-app group."),
    StuneRtBoost = ("schedtune.rt.boost", 0.0, -100.0, 100.0, "%",
        "Android kernel/sched/tune.c: /dev/stune/rt/schedtune.boost", "msm-4.14 profile: boost of the rt group."),
    StuneRtPreferIdle = ("schedtune.rt.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Android kernel/sched/tune.c", "msm-4.14 profile: prefer_idle of the rt group."),
    EasFindBestTarget = ("eas.find_best_target", 1.0, 0.0, 1.0, "0/1",
        "msm-4.14 kernel/sched/features.h: SCHED_FEAT(FIND_BEST_TARGET, true) (SM8150 trees, e.g. 0wnerDied/Neptune_kernel_sm8150_oneplus); select_task_rq_fair() returns find_energy_efficient_cpu() whenever energy_aware()",
        "msm-4.14 profile: 1 = the kernel's wakeup path, find_energy_efficient_cpu() with find_best_target() for every fair wakeup and fork, overutilized or not; 0 = mainline's EAS (android-4.19's feec, the CFS path while overutilized), the baseline of Arm's OSPM 2020 comparison."),
    // --- end WALT knobs ---
    // --- the Pixel's vendor groups (pixel_sched.rs; the pixel-5.10 profile): /proc/vendor_sched/<group>_* ---
    VendorSchedSysPreferIdle = ("vendor_sched.sys.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Google vh sched module (gs101, Android 13): vg[].prefer_idle, false in initialize_vendor_group_property()",
        "pixel-5.10 profile: prefer_idle of the system group (workload group root: the tasks with no `stune`); its tasks of nice 0 or better and uclamp.max 1024 take an idle CPU first."),
    VendorSchedSysUclampMin = ("vendor_sched.sys.uclamp_min", 0.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MIN], 0 by default",
        "pixel-5.10 profile: the uclamp.min floor of the system group (workload group root: the tasks with no `stune`)."),
    VendorSchedSysUclampMax = ("vendor_sched.sys.uclamp_max", 1024.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MAX], 1024 by default",
        "pixel-5.10 profile: the uclamp.max ceiling of the system group (workload group root: the tasks with no `stune`)."),
    VendorSchedFgPreferIdle = ("vendor_sched.fg.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Google vh sched module (gs101, Android 13): vg[].prefer_idle, false in initialize_vendor_group_property()",
        "pixel-5.10 profile: prefer_idle of the foreground group; its tasks of nice 0 or better and uclamp.max 1024 take an idle CPU first."),
    VendorSchedFgUclampMin = ("vendor_sched.fg.uclamp_min", 0.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MIN], 0 by default",
        "pixel-5.10 profile: the uclamp.min floor of the foreground group."),
    VendorSchedFgUclampMax = ("vendor_sched.fg.uclamp_max", 1024.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MAX], 1024 by default",
        "pixel-5.10 profile: the uclamp.max ceiling of the foreground group."),
    VendorSchedBgPreferIdle = ("vendor_sched.bg.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Google vh sched module (gs101, Android 13): vg[].prefer_idle, false in initialize_vendor_group_property()",
        "pixel-5.10 profile: prefer_idle of the background group; its tasks of nice 0 or better and uclamp.max 1024 take an idle CPU first."),
    VendorSchedBgUclampMin = ("vendor_sched.bg.uclamp_min", 0.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MIN], 0 by default",
        "pixel-5.10 profile: the uclamp.min floor of the background group."),
    VendorSchedBgUclampMax = ("vendor_sched.bg.uclamp_max", 1024.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MAX], 1024 by default",
        "pixel-5.10 profile: the uclamp.max ceiling of the background group."),
    VendorSchedTaPreferIdle = ("vendor_sched.ta.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Google vh sched module (gs101, Android 13): vg[].prefer_idle, false in initialize_vendor_group_property()",
        "pixel-5.10 profile: prefer_idle of the top-app group; its tasks of nice 0 or better and uclamp.max 1024 take an idle CPU first."),
    VendorSchedTaUclampMin = ("vendor_sched.ta.uclamp_min", 0.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MIN], 0 by default",
        "pixel-5.10 profile: the uclamp.min floor of the top-app group."),
    VendorSchedTaUclampMax = ("vendor_sched.ta.uclamp_max", 1024.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MAX], 1024 by default",
        "pixel-5.10 profile: the uclamp.max ceiling of the top-app group."),
    VendorSchedRtPreferIdle = ("vendor_sched.rt.prefer_idle", 0.0, 0.0, 1.0, "0/1",
        "Google vh sched module (gs101, Android 13): vg[].prefer_idle, false in initialize_vendor_group_property()",
        "pixel-5.10 profile: prefer_idle of the rt group; its tasks of nice 0 or better and uclamp.max 1024 take an idle CPU first."),
    VendorSchedRtUclampMin = ("vendor_sched.rt.uclamp_min", 0.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MIN], 0 by default",
        "pixel-5.10 profile: the uclamp.min floor of the rt group."),
    VendorSchedRtUclampMax = ("vendor_sched.rt.uclamp_max", 1024.0, 0.0, 1024.0, "",
        "Google vh sched module: vg[].uc_req[UCLAMP_MAX], 1024 by default",
        "pixel-5.10 profile: the uclamp.max ceiling of the rt group."),
    // --- core_ctl per cluster (extensions/core_ctl.rs): -1 = the global vendor.core_ctl.* or the kernel's default ---
    CoreCtlEnableCluster0 = ("core_ctl.enable.cluster0", -1.0, -1.0, 1.0, "0/1",
        "core_ctl.c cluster_init(): enable true; sm8150 init.qcom.post_boot.sh (msmnile): 0 on cpu0 (silver)", "core_ctl manages the cluster; -1 = every cluster but the smallest (the phones' scripts disable it on the little cluster)."),
    CoreCtlEnableCluster1 = ("core_ctl.enable.cluster1", -1.0, -1.0, 1.0, "0/1",
        "core_ctl.c cluster_init(): enable true; sm8150 init.qcom.post_boot.sh (msmnile): 0 on cpu0 (silver)", "core_ctl manages the cluster; -1 = every cluster but the smallest (the phones' scripts disable it on the little cluster)."),
    CoreCtlEnableCluster2 = ("core_ctl.enable.cluster2", -1.0, -1.0, 1.0, "0/1",
        "core_ctl.c cluster_init(): enable true; sm8150 init.qcom.post_boot.sh (msmnile): 0 on cpu0 (silver)", "core_ctl manages the cluster; -1 = every cluster but the smallest (the phones' scripts disable it on the little cluster)."),
    CoreCtlEnableCluster3 = ("core_ctl.enable.cluster3", -1.0, -1.0, 1.0, "0/1",
        "core_ctl.c cluster_init(): enable true; sm8150 init.qcom.post_boot.sh (msmnile): 0 on cpu0 (silver)", "core_ctl manages the cluster; -1 = every cluster but the smallest (the phones' scripts disable it on the little cluster)."),
    CoreCtlMinCpusCluster0 = ("core_ctl.min_cpus.cluster0", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): 1; sm8150 init.qcom.post_boot.sh (msmnile): gold 2, gold+ 0", "CPUs of the cluster never isolated; -1 = vendor.core_ctl.min_cpus."),
    CoreCtlMinCpusCluster1 = ("core_ctl.min_cpus.cluster1", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): 1; sm8150 init.qcom.post_boot.sh (msmnile): gold 2, gold+ 0", "CPUs of the cluster never isolated; -1 = vendor.core_ctl.min_cpus."),
    CoreCtlMinCpusCluster2 = ("core_ctl.min_cpus.cluster2", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): 1; sm8150 init.qcom.post_boot.sh (msmnile): gold 2, gold+ 0", "CPUs of the cluster never isolated; -1 = vendor.core_ctl.min_cpus."),
    CoreCtlMinCpusCluster3 = ("core_ctl.min_cpus.cluster3", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): 1; sm8150 init.qcom.post_boot.sh (msmnile): gold 2, gold+ 0", "CPUs of the cluster never isolated; -1 = vendor.core_ctl.min_cpus."),
    CoreCtlMaxCpusCluster0 = ("core_ctl.max_cpus.cluster0", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): the cluster's CPUs", "At most this many CPUs active; -1 = all of the cluster's."),
    CoreCtlMaxCpusCluster1 = ("core_ctl.max_cpus.cluster1", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): the cluster's CPUs", "At most this many CPUs active; -1 = all of the cluster's."),
    CoreCtlMaxCpusCluster2 = ("core_ctl.max_cpus.cluster2", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): the cluster's CPUs", "At most this many CPUs active; -1 = all of the cluster's."),
    CoreCtlMaxCpusCluster3 = ("core_ctl.max_cpus.cluster3", -1.0, -1.0, 64.0, "CPUs",
        "core_ctl.c cluster_init(): the cluster's CPUs", "At most this many CPUs active; -1 = all of the cluster's."),
    CoreCtlBusyUpThresCluster0 = ("core_ctl.busy_up_thres.cluster0", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 60 on gold and gold+", "A CPU counts as busy from this busy %; -1 = vendor.core_ctl.busy_up_thres."),
    CoreCtlBusyUpThresCluster1 = ("core_ctl.busy_up_thres.cluster1", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 60 on gold and gold+", "A CPU counts as busy from this busy %; -1 = vendor.core_ctl.busy_up_thres."),
    CoreCtlBusyUpThresCluster2 = ("core_ctl.busy_up_thres.cluster2", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 60 on gold and gold+", "A CPU counts as busy from this busy %; -1 = vendor.core_ctl.busy_up_thres."),
    CoreCtlBusyUpThresCluster3 = ("core_ctl.busy_up_thres.cluster3", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 60 on gold and gold+", "A CPU counts as busy from this busy %; -1 = vendor.core_ctl.busy_up_thres."),
    CoreCtlBusyDownThresCluster0 = ("core_ctl.busy_down_thres.cluster0", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 30 on gold and gold+", "A busy CPU stops counting as busy below this %; -1 = vendor.core_ctl.busy_down_thres."),
    CoreCtlBusyDownThresCluster1 = ("core_ctl.busy_down_thres.cluster1", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 30 on gold and gold+", "A busy CPU stops counting as busy below this %; -1 = vendor.core_ctl.busy_down_thres."),
    CoreCtlBusyDownThresCluster2 = ("core_ctl.busy_down_thres.cluster2", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 30 on gold and gold+", "A busy CPU stops counting as busy below this %; -1 = vendor.core_ctl.busy_down_thres."),
    CoreCtlBusyDownThresCluster3 = ("core_ctl.busy_down_thres.cluster3", -1.0, -1.0, 100.0, "%",
        "core_ctl.c (0 until written); sm8150 init.qcom.post_boot.sh (msmnile): 30 on gold and gold+", "A busy CPU stops counting as busy below this %; -1 = vendor.core_ctl.busy_down_thres."),
    CoreCtlTaskThresCluster0 = ("core_ctl.task_thres.cluster0", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold 3, gold+ 1", "With this many tasks for the cluster (nrrun) every CPU is needed; -1 = vendor.core_ctl.task_thres; 1e9 or more = never."),
    CoreCtlTaskThresCluster1 = ("core_ctl.task_thres.cluster1", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold 3, gold+ 1", "With this many tasks for the cluster (nrrun) every CPU is needed; -1 = vendor.core_ctl.task_thres; 1e9 or more = never."),
    CoreCtlTaskThresCluster2 = ("core_ctl.task_thres.cluster2", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold 3, gold+ 1", "With this many tasks for the cluster (nrrun) every CPU is needed; -1 = vendor.core_ctl.task_thres; 1e9 or more = never."),
    CoreCtlTaskThresCluster3 = ("core_ctl.task_thres.cluster3", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold 3, gold+ 1", "With this many tasks for the cluster (nrrun) every CPU is needed; -1 = vendor.core_ctl.task_thres; 1e9 or more = never."),
    CoreCtlNrPrevAssistThreshCluster0 = ("core_ctl.nr_prev_assist_thresh.cluster0", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold+ 1", "Tasks the cluster below cannot hold from which this cluster lends that many CPUs; -1 = never."),
    CoreCtlNrPrevAssistThreshCluster1 = ("core_ctl.nr_prev_assist_thresh.cluster1", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold+ 1", "Tasks the cluster below cannot hold from which this cluster lends that many CPUs; -1 = never."),
    CoreCtlNrPrevAssistThreshCluster2 = ("core_ctl.nr_prev_assist_thresh.cluster2", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold+ 1", "Tasks the cluster below cannot hold from which this cluster lends that many CPUs; -1 = never."),
    CoreCtlNrPrevAssistThreshCluster3 = ("core_ctl.nr_prev_assist_thresh.cluster3", -1.0, -1.0, 10000000000.0, "tasks",
        "core_ctl.c cluster_init(): UINT_MAX; sm8150 init.qcom.post_boot.sh (msmnile): gold+ 1", "Tasks the cluster below cannot hold from which this cluster lends that many CPUs; -1 = never."),
    CoreCtlOfflineDelayMsCluster0 = ("core_ctl.offline_delay_ms.cluster0", -1.0, -1.0, 10000.0, "ms",
        "core_ctl.c cluster_init(): 100; sm8150 init.qcom.post_boot.sh (msmnile): 100", "A lower need must hold this long before a CPU is isolated; -1 = vendor.core_ctl.offline_delay_ms."),
    CoreCtlOfflineDelayMsCluster1 = ("core_ctl.offline_delay_ms.cluster1", -1.0, -1.0, 10000.0, "ms",
        "core_ctl.c cluster_init(): 100; sm8150 init.qcom.post_boot.sh (msmnile): 100", "A lower need must hold this long before a CPU is isolated; -1 = vendor.core_ctl.offline_delay_ms."),
    CoreCtlOfflineDelayMsCluster2 = ("core_ctl.offline_delay_ms.cluster2", -1.0, -1.0, 10000.0, "ms",
        "core_ctl.c cluster_init(): 100; sm8150 init.qcom.post_boot.sh (msmnile): 100", "A lower need must hold this long before a CPU is isolated; -1 = vendor.core_ctl.offline_delay_ms."),
    CoreCtlOfflineDelayMsCluster3 = ("core_ctl.offline_delay_ms.cluster3", -1.0, -1.0, 10000.0, "ms",
        "core_ctl.c cluster_init(): 100; sm8150 init.qcom.post_boot.sh (msmnile): 100", "A lower need must hold this long before a CPU is isolated; -1 = vendor.core_ctl.offline_delay_ms."),
    // --- end core_ctl per cluster ---
    // --- GTS and MediaTek hps (policies/gts.rs, extensions/hotplug.rs; docs/schedulers.md) ---
    GtsUpThreshold = ("gts.up_threshold", 700.0, 0.0, 1024.0, "of 1024",
        "big.LITTLE MP (HMP) patches, kernel/sched/fair.c hmp_up_threshold",
        "Tracked (runnable, not invariant) load at or above which a task moves to the next faster cluster."),
    GtsDownThreshold = ("gts.down_threshold", 256.0, 0.0, 1024.0, "of 1024",
        "big.LITTLE MP (HMP) patches, kernel/sched/fair.c hmp_down_threshold (256 in the later releases, 512 in the first)",
        "Tracked load below which a task moves to the next slower cluster."),
    GtsNextUpDelayUs = ("gts.next_up_delay_us", 4194.304, 0.0, 10_000_000.0, "us",
        "HMP hmp_next_up_threshold (4096 x 1024 ns)",
        "Time after an up migration (or fork) before the task may go up again."),
    GtsNextDownDelayUs = ("gts.next_down_delay_us", 4194.304, 0.0, 10_000_000.0, "us",
        "HMP hmp_next_down_threshold (4096 x 1024 ns)",
        "Time after a down migration before the task may go down again."),
    HotplugHps = ("hotplug.hps", 0.0, 0.0, 1.0, "0/1",
        "MediaTek mt_hotplug_strategy (hps_algo_hmp); `--set hotplug=hps` is an alias of 1",
        "1 runs MediaTek's hot plug strategy: every hps.period_ms keep online only the CPUs the load needs (read when the simulation is built)."),
    HpsPeriodMs = ("hps.period_ms", 40.0, 4.0, 10_000.0, "ms",
        "mt_hotplug_strategy.h HPS_TIMER_INTERVAL_MS (40 on MT6750/MT6797-era parts)",
        "Period of the hot plug decision, rounded to whole ticks."),
    HpsUpThreshold = ("hps.up_threshold", 95.0, 1.0, 100.0, "% per online CPU",
        "mt_hotplug_strategy.h DEF_CPU_UP_THRESHOLD", "Sum of online CPU loads above which one more CPU goes online."),
    HpsUpTimes = ("hps.up_times", 3.0, 1.0, 10.0, "periods",
        "mt_hotplug_strategy.h DEF_CPU_UP_TIMES", "Periods the up test averages over."),
    HpsDownThreshold = ("hps.down_threshold", 85.0, 1.0, 100.0, "% per online CPU",
        "mt_hotplug_strategy.h DEF_CPU_DOWN_THRESHOLD",
        "CPUs are taken offline while the load sum stays below this times one CPU fewer."),
    HpsDownTimes = ("hps.down_times", 1.0, 1.0, 100.0, "periods",
        "mt_hotplug_strategy.h DEF_CPU_DOWN_TIMES", "Periods the down test averages over."),
    LowerBoundWindowMs = ("lower_bound.window_ms", 100.0, 4.0, 100_000.0, "ms",
        "hetsched, after Learning EAS (Han & Lee 2020) Formulation (6)",
        "Window of the minimum-energy lower bound: the work each task did in each window is delivered by a linear program at least cost (docs/lower-bound.md)."),
    // --- vendor EAS changes (Arm's OSPM 2020 talk; vendor.rs). Each is off by default. ---
    VendorCpuIsolation = ("vendor.cpu_isolation", 0.0, 0.0, 1.0, "0/1",
        "Arm's OSPM 2020 talk on vendor EAS changes, slide 1; QCOM core_ctl (kernel/sched/core_ctl.c, msm-4.14)",
        "A core controller isolates CPUs of every cluster but the smallest from the number of running tasks and the CPUs' utilisation; isolated CPUs take no placements and do not balance."),
    VendorCoreCtlBusyUpThres = ("vendor.core_ctl.busy_up_thres", 60.0, 0.0, 100.0, "%",
        "QCOM init.qcom.post_boot.sh (msmnile/SM8150 gold cluster: busy_up_thres 60)",
        "A CPU becomes busy for core_ctl when its util reaches this % of its capacity."),
    VendorCoreCtlBusyDownThres = ("vendor.core_ctl.busy_down_thres", 30.0, 0.0, 100.0, "%",
        "QCOM init.qcom.post_boot.sh (msmnile/SM8150 gold cluster: busy_down_thres 30)",
        "A busy CPU stops being busy for core_ctl when its util falls below this % (hysteresis)."),
    VendorCoreCtlTaskThres = ("vendor.core_ctl.task_thres", 4.0, 1.0, 64.0, "tasks",
        "QCOM init.qcom.post_boot.sh (msmnile gold cluster: task_thres 4)",
        "With this many runnable tasks in a cluster, core_ctl needs all its CPUs."),
    VendorCoreCtlMinCpus = ("vendor.core_ctl.min_cpus", 1.0, 0.0, 64.0, "CPUs",
        "core_ctl min_cpus (assumption: 1, so a cluster is never wholly isolated)",
        "CPUs of a controlled cluster that are never isolated."),
    VendorCoreCtlOfflineDelayMs = ("vendor.core_ctl.offline_delay_ms", 100.0, 0.0, 10_000.0, "ms",
        "core_ctl.c default offline_delay_ms (100)",
        "The need must stay below the active CPUs this long before a CPU is isolated."),
    VendorCoreCtlWindowMs = ("vendor.core_ctl.window_ms", 20.0, 1.0, 1000.0, "ms",
        "WALT sched_ravg_window default (20 ms), core_ctl's evaluation period",
        "Period of the core controller (evaluated at the first tick of each window)."),
    VendorMigrationMargins = ("vendor.migration_margins", 0.0, 0.0, 1.0, "0/1",
        "Arm's OSPM 2020 talk on vendor EAS changes, slide 2; vendor sched_capacity_margin_up/down (msm-4.14 task_fits_capacity)",
        "Per-cluster up/down migration thresholds with hysteresis replace the 80% fits_capacity in feec, overutilized and misfit."),
    VendorSchedUpmigrate = ("vendor.sched_upmigrate", 95.0, 1.0, 100.0, "%",
        "sm8150 init.qcom.post_boot.sh (msmnile): echo 95 95 > /proc/sys/kernel/sched_upmigrate (the LG G8's rootdir/bin/init.qcom.post_boot.sh)",
        "With migration margins: a task fits a CPU at least as big as its current one below this % of its capacity."),
    VendorSchedDownmigrate = ("vendor.sched_downmigrate", 85.0, 1.0, 100.0, "%",
        "sm8150 init.qcom.post_boot.sh (msmnile): echo 85 85 > /proc/sys/kernel/sched_downmigrate",
        "With migration margins: a task fits a CPU smaller than its current one below this % of that CPU's capacity."),
    VendorTaskPacking = ("vendor.task_packing", 0.0, 0.0, 1.0, "0/1",
        "Arm's OSPM 2020 talk on vendor EAS changes, slide 3; Android find_best_target's active-CPU case (android-4.14)",
        "When feec picks an idle CPU, take instead an already-active CPU, no bigger, where the task fits and its domain stays at the same OPP."),
    VendorPrevCpuFastpath = ("vendor.prev_cpu_fastpath", 0.0, 0.0, 1.0, "0/1",
        "Arm's OSPM 2020 talk on vendor EAS changes, slide 4",
        "A waking task whose prev_cpu is idle and fits it goes there without computing energies."),
    VendorRtPlacement = ("vendor.rt_placement", 0.0, 0.0, 1.0, "0/1",
        "Arm's OSPM 2020 talk on vendor EAS changes, slide 5; QCOM rt_energy_aware_wake_cpu (msm-4.14 rt.c)",
        "RT wakeups take the lowest cpupri mask ordered by CPU utilisation, then idle state, then capacity, instead of the uclamp fitness filter."),
    // --- end vendor knobs ---
    // --- utilization-aware load balancing (Kim et al.) on the big.LITTLE switcher ---
    UtilAwareEstimator = ("util_aware.estimator", 0.0, 0.0, 1.0, "a=0/b=1",
        "utilization-aware load balancing (Kim et al.) eq. 2 (E_A) / eq. 3 (E_B)",
        "util-aware's expected-utilisation estimator: a = U(s) (eq. 2), b = U(s) with the 16-run SMA of task execution times (eq. 3); --set takes a or b."),
    SwitcherUpThreshold = ("switcher.up_threshold", 80.0, 1.0, 100.0, "%",
        "the big.LITTLE switcher study (Kim et al.) §II.B: 80% in the big.LITTLE kernel (v3.4 cpufreq_ondemand.c DEF_FREQUENCY_UP_THRESHOLD)",
        "Switcher-mode ondemand: above it a virtual CPU asks for f_max (utilisation H); on a little core at f_max it switches up."),
    SwitcherDownThreshold = ("switcher.down_threshold", 70.0, 0.0, 99.0, "%",
        "the big.LITTLE switcher study (Kim et al.) §II.B: 70% (v3.4 cpufreq_ondemand.c up_threshold - DEF_FREQUENCY_DOWN_DIFFERENTIAL 10)",
        "Switcher-mode ondemand: below it the frequency steps down to keep the load at this level (utilisation L); on a big core below f_max it switches down."),
    SwitcherSamplingRateUs = ("switcher.sampling_rate_us", 100_000.0, 1_000.0, 10_000_000.0, "us",
        "assumption: v3.4 cpufreq_ondemand.c min_sampling_rate = MIN_SAMPLING_RATE_RATIO (2) x jiffies_to_usecs(10) at HZ=200; Kim et al. §III-B assume ΔT_task (gcc ≈ 70 ms) << ΔT_gov",
        "Switcher-mode ondemand: the time between two governor epochs of a virtual CPU (ΔT_gov)."),
    TimeseriesPeriodUs = ("timeseries.period_us", 4000.0, 100.0, 10_000_000.0, "us",
        "hetsched", "Sampling period of the --timeseries output."),
    // --- scheduler costs (costs.rs): CPU time the kernel's own work takes, charged on the
    // CPU doing it as invariant work (ns on a capacity-1024 CPU at f_max), so it scales
    // with the core's capacity and its current frequency; 0 turns a cost off ---
    CostContextSwitchNs = ("cost.context_switch_ns", -1.0, -1.0, 1_000_000.0, "ns at capacity 1024, f_max",
        "Raspberry Pi 5 (Cortex-A76, 2.8 GHz), v6.12, stress-ng --pipe: 79.1 s of CPU over 39.9 M sched_switch = 1.98 us per switch, an upper bound since it holds the pipe reads and writes too (T. Gebhardt, LKML 2026-04-18, 'DELAY_DEQUEUE causes ~25% pipe IPC regression on Raspberry Pi 5'); the host platform measures its own (pipe ping-pong)",
        "Cost of a context switch into a task, on the CPU switching; -1 = the platform's measured figure per cluster (host) and 2000 elsewhere, scaled by capacity; >= 0 = this on every CPU."),
    CostMigrationNs = ("cost.migration_ns", 2000.0, 0.0, 1_000_000.0, "ns at capacity 1024, f_max",
        "assumption: no published figure of the direct cost alone; of the order of one context switch (a dequeue and an enqueue under two runqueue locks, set_task_cpu, the PELT detach and attach)",
        "Direct cost of a migration, charged on the destination CPU (it runs the attach: load balancing pulls, a remote wakeup is enqueued through the destination's wake list) before the task's first run there; the cache refill stays the perf model's."),
    CostFeecStepNs = ("cost.feec_step_ns", 20.0, 0.0, 100_000.0, "ns at capacity 1024, f_max",
        "step count: commit 5b77261c5510 (P. Gondois, 'sched/topology: Remove the EM_MAX_COMPLEXITY limit'): feec visits sum over pds of (4 x CPUs + 2 x OPPs), plus prev_cpu's pd once more; per-step time an assumption (a few tens of cycles, a cpu_util() and clamp, or an OPP compare)",
        "find_energy_efficient_cpu()'s cost per step, charged on the waking CPU; a prev_cpu fast path (vendor.prev_cpu_fastpath) costs one step."),
    CostBalanceCpuNs = ("cost.balance_cpu_ns", 2000.0, 0.0, 1_000_000.0, "ns at capacity 1024, f_max",
        "Juno, v5.18: sched_domain DIE (6 CPUs) max_newidle_lb_cost 11858 ns (I. Voinescu, LKML 2022-05-19, 'arch_topology: Set cluster identifier'): about 2 us per CPU of the span",
        "A load-balance pass's cost per CPU of each domain span it examines, charged on the balancing CPU; newidle skips a domain when avg_idle is below this modelled cost (sd->max_newidle_lb_cost)."),
    // --- end scheduler costs ---
    // --- hcs-balance (Fedorova et al. §3) ---
    HcsBalanceEnabled = ("hcs_balance_enabled", 1.0, 0.0, 1.0, "bool",
        "balanced core assignment (Fedorova et al.) §3: /proc entry hcs_balance_enabled",
        "hcs-balance only: 1 = at every tick each CPU pulls from the next CPU the queued tasks whose last timeslice ran there; 0 = plain cfs."),
    // --- hcs-td (Fedorova et al. §5) ---
    HcsTdIntervalMs = ("hcs_td.interval_ms", 10.0, 1.0, 10_000.0, "ms",
        "assumption: Fedorova et al. §5.2 decides 'at regular time intervals' without a value; about one CFS period (sched_latency 12 ms on 2 CPUs)",
        "hcs-td: time between two migration decisions (and TD(0) steps); taken at the first busy tick at or after it."),
    HcsTdRechooseMs = ("hcs_td.rechoose_interval_ms", 30.0, 0.0, 10_000.0, "ms",
        "Fedorova et al. §5.1: rechoose_interval, 0.03 s by default in Solaris",
        "hcs-td: a task has cache affinity 1 with a CPU it executed on within this interval, else 0."),
    HcsTdGamma = ("hcs_td.gamma", 0.9, 0.0, 1.0, "",
        "Fedorova et al. §5.3: gamma, 'value of 0.9 usually works well in practice'",
        "hcs-td: TD(0) discount factor (eq. 5)."),
    HcsTdAlpha0 = ("hcs_td.alpha0", 1.0, 0.0, 10.0, "",
        "Fedorova et al. §5.3: alpha_t 'usually set to alpha_t = 1/t' (alpha0 = 1)",
        "hcs-td: TD(0) learning rate alpha_t = alpha0 / t, t the core's update count (eq. 5)."),
    HcsTdA = ("hcs_td.a", -1.0, -1000.0, 1000.0, "",
        "assumption: Fedorova et al. §5.2 leaves a to the administrator; D_CAB is the change (new - old) of the system CAB fraction, so a < 0 makes a fall in CAB a cost",
        "hcs-td: weight a of D_CAB in eq. 4 (B in units of reference instruction rate)."),
    HcsTdB = ("hcs_td.b", -1.0, -1000.0, 1000.0, "",
        "assumption: Fedorova et al. §5.2 leaves b to the administrator; D_RTF is the change (new - old) of the system RTF fraction, so b < 0 makes a fall in RTF a cost",
        "hcs-td: weight b of D_RTF in eq. 4."),
    HcsTdCabEps = ("hcs_td.cab_eps", 0.05, 0.0, 1.0, "",
        "assumption, as hetsched.metrics004 (Fedorova et al. Def. 1 leaves epsilon to experiment)",
        "hcs-td: a job is core-assignment balanced when CAB_J <= eps (for D_CAB)."),
    HcsTdRtfF = ("hcs_td.rtf_f", 0.0, 0.0, 1000.0, "",
        "assumption, as hetsched.metrics004: F = 1.1 x jobs / CPUs (Fedorova et al. Def. 3 leaves F to experiment)",
        "hcs-td: slowdown bound F of the RTF constraint (for D_RTF); 0 = 1.1 x (fair tasks on the runqueues) / CPUs."),
    HcsTdMaxMigrations = ("hcs_td.max_migrations", 1.0, 0.0, 64.0, "",
        "assumption: Fedorova et al. §5.2 'decides whether to migrate some number of threads'",
        "hcs-td: at most this many migrations per decision (each the largest-margin one of eq. 4, re-evaluated after each); 0 = learn only."),
}

/// Integer forms of the knobs read on hot paths, recomputed whenever a knob is set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Derived {
    pub tick_ns: u64,
    /// window of the energy lower bound's work record
    pub lb_window_ns: u64,
    /// schedutil.target_load in 1/10000 (0.8 -> 8000)
    pub target_load_permyriad: u64,
    /// per-cluster schedutil.target_load.clusterN in 1/10000 (Learning EAS); 0 = the global one
    pub target_load_permyriad_cluster: [u64; 4],
    /// the policy's transition delay (cpufreq_policy_transition_delay_us()): 1.5 x the
    /// transition latency (1 ms if none); before 6.8 1000 x it, at most 10 ms. What every
    /// governor takes by default: schedutil's rate limit, ondemand's and conservative's
    /// sampling rate floor, msm-4.14's up/down rate limits
    pub transition_delay_ns: u64,
    /// schedutil's rate limit: the knob, else the transition delay
    pub rate_limit_ns: u64,
    pub transition_latency_ns: u64,
    pub rr_timeslice_ns: u64,
    pub timeseries_period_ns: u64,
    pub migration_cost_ns: u64,
    pub busy_factor: u64,
    /// sched_util_clamp_min_rt_default
    pub uclamp_min_rt_default: u64,
    /// the fair server's runtime and period (0 runtime: none)
    pub fair_server_runtime_ns: u64,
    pub fair_server_period_ns: u64,
    /// RT bandwidth control (android-4.19): period and runtime in ns, u64::MAX = RUNTIME_INF
    pub rt_period_ns: u64,
    pub rt_runtime_ns: u64,
    /// msm-4.14 schedutil, per cluster: hispeed_freq (kHz, 0 none), up and down rate limits
    pub hispeed_khz: [u64; 4],
    /// sched_pixel's down_rate_limit_scale_pow per cluster
    pub down_rate_scale_pow: [u32; 4],
    pub up_rate_ns: [u64; 4],
    pub down_rate_ns: [u64; 4],
    /// the up/down rate limits of a cluster with no knob of its own (a fifth one): the
    /// global knob, else the kernel default
    pub up_rate_global_ns: u64,
    pub down_rate_global_ns: u64,
    pub hispeed_load: u64,
    pub pl: bool,
    /// WALT's window (sched_ravg_window resolved: 0 is 20 ms, or 6 ticks at HZ=300)
    pub walt_window_ns: u64,
}

#[derive(Debug, Clone)]
pub struct Knobs {
    values: Vec<f64>,
    pub derived: Derived,
    /// the android-4.19 profile's default rate limit (min(latency x 1000, 10 ms))
    pub legacy_rate_limit: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        let mut k = Knobs {
            values: KNOBS.iter().map(|k| k.default).collect(),
            derived: Derived::default(),
            legacy_rate_limit: false,
        };
        k.derive();
        k
    }
}

impl Knobs {
    pub fn get(&self, k: Knob) -> f64 {
        self.values[k as usize]
    }

    /// The value of the knob called `name`, if there is one.
    pub fn get_named(&self, name: &str) -> Option<f64> {
        KNOBS.iter().position(|k| k.name == name).map(|i| self.values[i])
    }

    pub fn index(name: &str) -> Result<usize> {
        KNOBS.iter().position(|k| k.name == name).ok_or_else(|| Error::Unknown {
            field: "knobs".into(),
            kind: "knob",
            name: name.into(),
            choices: KNOBS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
        })
    }

    pub fn set(&mut self, name: &str, value: f64) -> Result<()> {
        let i = Self::index(name)?;
        let d = &KNOBS[i];
        if !value.is_finite() || value < d.min || value > d.max {
            return Err(crate::error::config(
                "policy",
                format!("knobs.{}", d.name),
                format!("a number in [{}, {}] {}, got {}", d.min, d.max, d.unit, value),
            ));
        }
        self.values[i] = value;
        self.derive();
        Ok(())
    }

    /// Select the android-4.19 profile's defaults.
    pub fn set_legacy(&mut self, legacy: bool) {
        self.legacy_rate_limit = legacy;
        // phones write 0 to sched_util_clamp_min_rt_default at boot (the knob's source)
        self.values[Knob::UclampMinRtDefault as usize] = if legacy {
            0.0
        } else {
            KNOBS[Knob::UclampMinRtDefault as usize].default
        };
        // 4.19 has no fair server (it throttles RT runqueues instead, not modelled)
        self.values[Knob::FairServerRuntimeUs as usize] = if legacy {
            0.0
        } else {
            KNOBS[Knob::FairServerRuntimeUs as usize].default
        };
        self.derive();
    }

    fn derive(&mut self) {
        let g = |k: Knob| self.values[k as usize];
        let lat_us = g(Knob::CpufreqTransitionLatencyUs);
        let rl = g(Knob::SchedutilRateLimitUs);
        let transition_delay_ns = if self.legacy_rate_limit {
            // cpufreq_policy_transition_delay_us() before 6.8: LATENCY_MULTIPLIER (1000)
            // x the latency, capped at 10 ms; 1 ms without a latency
            if lat_us > 0.0 {
                ((lat_us * 1000.0).min(10_000.0) * 1000.0) as u64
            } else {
                1_000_000
            }
        } else if lat_us > 0.0 {
            (lat_us * 1500.0) as u64
        } else {
            1_000_000
        };
        self.derived = Derived {
            tick_ns: (1e9 / g(Knob::TickHz)) as u64,
            target_load_permyriad: ((g(Knob::SchedutilTargetLoad) * 10_000.0).round() as u64).max(1),
            target_load_permyriad_cluster: [
                Knob::SchedutilTargetLoadCluster0,
                Knob::SchedutilTargetLoadCluster1,
                Knob::SchedutilTargetLoadCluster2,
                Knob::SchedutilTargetLoadCluster3,
            ]
            .map(|k| {
                if g(k) > 0.0 {
                    ((g(k).max(0.05) * 10_000.0).round() as u64).max(1)
                } else {
                    0
                }
            }),
            transition_delay_ns,
            rate_limit_ns: if rl >= 0.0 {
                (rl * 1000.0) as u64
            } else {
                transition_delay_ns
            },
            transition_latency_ns: (lat_us * 1000.0) as u64,
            rr_timeslice_ns: (g(Knob::SchedRrTimesliceMs) * 1e6) as u64,
            timeseries_period_ns: (g(Knob::TimeseriesPeriodUs) * 1000.0) as u64,
            lb_window_ns: (g(Knob::LowerBoundWindowMs) * 1e6) as u64,
            migration_cost_ns: g(Knob::SchedMigrationCostNs) as u64,
            busy_factor: g(Knob::BalanceBusyFactor) as u64,
            uclamp_min_rt_default: g(Knob::UclampMinRtDefault) as u64,
            fair_server_runtime_ns: (g(Knob::FairServerRuntimeUs) * 1000.0) as u64,
            fair_server_period_ns: (g(Knob::FairServerPeriodUs) * 1000.0) as u64,
            rt_period_ns: (g(Knob::SchedRtPeriodUs) * 1000.0) as u64,
            rt_runtime_ns: if g(Knob::SchedRtRuntimeUs) < 0.0 {
                u64::MAX
            } else {
                (g(Knob::SchedRtRuntimeUs) * 1000.0) as u64
            },
            hispeed_khz: [
                Knob::SchedutilHispeedFreqCluster0,
                Knob::SchedutilHispeedFreqCluster1,
                Knob::SchedutilHispeedFreqCluster2,
                Knob::SchedutilHispeedFreqCluster3,
            ]
            .map(|k| g(k) as u64),
            down_rate_scale_pow: [
                Knob::SchedutilDownRateLimitScalePowCluster0,
                Knob::SchedutilDownRateLimitScalePowCluster1,
                Knob::SchedutilDownRateLimitScalePowCluster2,
                Knob::SchedutilDownRateLimitScalePowCluster3,
            ]
            .map(|k| g(k) as u32),
            up_rate_ns: [0; 4],
            up_rate_global_ns: 0,
            down_rate_global_ns: 0,
            down_rate_ns: [0; 4],
            hispeed_load: g(Knob::SchedutilHispeedLoad) as u64,
            pl: g(Knob::SchedutilPl) > 0.0,
            walt_window_ns: match g(Knob::SchedRavgWindow) as u64 {
                0 => crate::walt::min_sched_ravg_window(g(Knob::TickHz)),
                w => w,
            },
        };
        // msm-4.14's up/down rate limits: the cluster's knob, else the global one, else the
        // kernel default, the policy's transition delay (4.14 has no rate_limit_us: the
        // mainline knob does not reach them)
        let default_ns = self.derived.transition_delay_ns;
        let resolve = |cl: Knob, global: Knob| {
            let v = if g(cl) >= 0.0 { g(cl) } else { g(global) };
            if v >= 0.0 {
                (v * 1000.0) as u64
            } else {
                default_ns
            }
        };
        let up = [
            Knob::SchedutilUpRateLimitUsCluster0,
            Knob::SchedutilUpRateLimitUsCluster1,
            Knob::SchedutilUpRateLimitUsCluster2,
            Knob::SchedutilUpRateLimitUsCluster3,
        ];
        let down = [
            Knob::SchedutilDownRateLimitUsCluster0,
            Knob::SchedutilDownRateLimitUsCluster1,
            Knob::SchedutilDownRateLimitUsCluster2,
            Knob::SchedutilDownRateLimitUsCluster3,
        ];
        for i in 0..4 {
            self.derived.up_rate_ns[i] = resolve(up[i], Knob::SchedutilUpRateLimitUs);
            self.derived.down_rate_ns[i] = resolve(down[i], Knob::SchedutilDownRateLimitUs);
        }
        let global = |k: Knob| {
            if g(k) >= 0.0 {
                (g(k) * 1000.0) as u64
            } else {
                default_ns
            }
        };
        self.derived.up_rate_global_ns = global(Knob::SchedutilUpRateLimitUs);
        self.derived.down_rate_global_ns = global(Knob::SchedutilDownRateLimitUs);
    }

    /// msm-4.14 schedutil's hispeed_freq of cluster `ci` (kHz; 0: none): the cluster's knob;
    /// a cluster beyond the four the knobs name has none, as the kernel's default.
    pub fn hispeed_khz(&self, ci: usize) -> u64 {
        self.derived.hispeed_khz.get(ci).copied().unwrap_or(0)
    }

    /// msm-4.14 schedutil's up rate limit of cluster `ci`: its knob, else the global one,
    /// else the kernel default (a cluster beyond the four the knobs name has no own knob).
    pub fn up_rate_ns(&self, ci: usize) -> u64 {
        self.derived
            .up_rate_ns
            .get(ci)
            .copied()
            .unwrap_or(self.derived.up_rate_global_ns)
    }

    /// As `up_rate_ns`, for the down rate limit.
    pub fn down_rate_ns(&self, ci: usize) -> u64 {
        self.derived
            .down_rate_ns
            .get(ci)
            .copied()
            .unwrap_or(self.derived.down_rate_global_ns)
    }

    /// The TARGET_LOAD (1/10000) schedutil applies to cluster `ci` (Learning EAS sets one per cluster).
    pub fn target_load_permyriad_for(&self, ci: usize) -> u64 {
        match self.derived.target_load_permyriad_cluster.get(ci) {
            Some(&v) if v > 0 => v,
            _ => self.derived.target_load_permyriad,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        KNOBS.iter().zip(self.values.iter()).map(|(d, v)| (d.name, *v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifth_cluster_takes_the_global_rate_limits_and_no_hispeed() {
        // the per-cluster knobs name clusters 0-3; cluster 4 has none of its own, so it
        // takes the global knob (not cluster 3's, as a clamp to 3 gave it), and no hispeed
        let mut k = Knobs::default();
        k.set("schedutil.up_rate_limit_us", 700.0).unwrap();
        k.set("schedutil.up_rate_limit_us.cluster3", 100.0).unwrap();
        k.set("schedutil.down_rate_limit_us.cluster3", 200.0).unwrap();
        k.set("schedutil.hispeed_freq.cluster3", 1_000_000.0).unwrap();
        assert_eq!(
            (k.up_rate_ns(3), k.down_rate_ns(3), k.hispeed_khz(3)),
            (100_000, 200_000, 1_000_000)
        );
        // no global down limit: the kernel default, the policy's transition delay
        let default_ns = k.derived.transition_delay_ns;
        assert_eq!(
            (k.up_rate_ns(4), k.down_rate_ns(4), k.hispeed_khz(4)),
            (700_000, default_ns, 0)
        );
    }

    #[test]
    fn every_default_is_in_range_and_names_are_unique() {
        for (i, k) in KNOBS.iter().enumerate() {
            assert!(k.default >= k.min && k.default <= k.max, "{}", k.name);
            assert_eq!(Knobs::index(k.name).unwrap(), i);
        }
    }

    #[test]
    fn out_of_range_and_unknown_are_errors() {
        let mut k = Knobs::default();
        assert!(k.set("schedutil.target_load", 1.5).is_err());
        assert!(k.set("schedutil.target_lod", 0.5).is_err());
        k.set("schedutil.target_load", 0.5).unwrap();
        assert_eq!(k.get(Knob::SchedutilTargetLoad), 0.5);
    }

    #[test]
    fn per_cluster_target_load_overrides_the_global_one() {
        // Learning EAS: one TARGET_LOAD per cluster
        let mut k = Knobs::default();
        assert_eq!(k.target_load_permyriad_for(1), 8000);
        k.set("schedutil.target_load.cluster1", 0.7).unwrap();
        assert_eq!(k.target_load_permyriad_for(1), 7000);
        assert_eq!(k.target_load_permyriad_for(0), 8000);
        assert_eq!(k.target_load_permyriad_for(7), 8000);
    }
}
