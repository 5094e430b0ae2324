//! Scheduler policies as ops tables, after the kernel's `struct sched_class`
//! (`DEFINE_SCHED_CLASS(fair)` in kernel/sched/fair.c) and sched_ext's `SCX_OPS_DEFINE`:
//! one trait, [`SchedPolicy`], whose methods carry the kernel's hook names, each with the
//! behaviour of the kernel's fair class as its default, and one table, [`REGISTRY`], that
//! names every policy with its summary, source, knobs, requirements and constructor.
//!
//! The core (`core.rs`) calls hooks and never compares a policy's name. A new policy is
//! one file in this folder and its module name in the `registry!` line; `tests/registry.rs` and
//! `tests/test_registry.py` run every entry through the invariant checks and a
//! determinism check, so it is tested without a new test.
//!
//! Hooks and where the core calls them (the kernel function in brackets):
//!
//! | hook | when |
//! |---|---|
//! | `select_task_rq` | a wakeup or a fork picks a CPU (`try_to_wake_up`, `wake_up_new_task`) |
//! | `balance_wakeup` | before that pick: migrations a policy makes at enqueue (Kim et al. Fig. 3) |
//! | `migrate_task_rq` | a task moves between CPUs, for any reason (`set_task_cpu`) |
//! | `dequeue_task` | a fair task leaves its runqueue, `sleep` when it blocks |
//! | `set_next_task` / `put_prev_task` | a task is switched in / out (`__schedule`) |
//! | `update_curr` / `calc_delta_fair` | the running task's work, a fair task's vruntime (`update_curr`) |
//! | `sched_slice` | the slice `check_preempt_tick` compares with |
//! | `task_tick` | the tick of a CPU running a fair task (`task_tick_fair`) |
//! | `balance` | once per tick, after every CPU's tick: the policy's own migrations |
//! | `task_dead` | a task exits (`task_dead_fair`) |
//! | `counters` | what `result.json` reports of the policy |
//!
//! Things that combine with any policy (hotplug, the core controller, a userspace tuner)
//! are not policies: they are extensions (`crate::extensions`).

use crate::balance::{LoadBalancer, Migration};
use crate::balance_fair::KernelLb;
use crate::core::{SchedView, Sim, TaskId};
use crate::error::{config, Error, Result};
use crate::features::Knobs;
use crate::platform::Platform;

/// How a task arrives at `select_task_rq`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeKind {
    /// wake_up_new_task (SD_BALANCE_FORK)
    Fork,
    /// try_to_wake_up (WF_TTWU)
    Wakeup,
}

/// The fair class a policy needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairVariant {
    /// CFS as v6.5 has it (`fair.eevdf=0`; the android-4.19 profile's)
    Cfs,
    /// EEVDF as v6.12 has it (`fair.eevdf=1`; the mainline-6.12 profile's)
    Eevdf,
}

/// What a policy needs of the platform, the governor and the fair class; the engine
/// refuses a run that does not meet it, with one line saying why.
#[derive(Debug, Clone, Copy)]
pub struct Requires {
    /// true: only on a switcher platform (`NAME:switcher`, as in the big.LITTLE switcher study
    /// of Kim et al.); false: never on one
    pub switcher_platform: bool,
    /// the fair class, and why the policy needs it
    pub fair: Option<(FairVariant, &'static str)>,
}

impl Requires {
    pub const NONE: Requires = Requires {
        switcher_platform: false,
        fair: None,
    };
}

/// What a constructor sees of the run it is built for.
pub struct PolicyCtx<'a> {
    pub platform: &'a Platform,
    pub governor: &'a str,
    pub knobs: &'a Knobs,
    /// the Android kernels' forms (KernelProfile::android_forms: android-4.19 and msm-4.14)
    pub legacy: bool,
    pub nr_tasks: usize,
}

/// One registry line.
pub struct PolicyInfo {
    pub name: &'static str,
    /// one line: what the policy does
    pub summary: &'static str,
    /// the paper or kernel source it follows
    pub source: &'static str,
    /// the knobs it reads (a trailing `.` names a family: `hcs_td.`)
    pub knobs: &'static [&'static str],
    pub requires: Requires,
    /// where the policy differs from its source, and why (docs/policies/NAME.md)
    pub differences: &'static str,
    /// how far it is measured and where
    pub status: &'static str,
    /// a userspace controller that steps the simulation beside the engine's policy
    /// (`module:Class` in the Python package), if the policy has one
    pub controller: Option<&'static str>,
    pub build: fn(&PolicyCtx) -> Box<dyn SchedPolicy>,
}

/// Declares each policy's module and lists its `INFO` in `REGISTRY`: a new policy is
/// one file in this folder and its module name here.
macro_rules! registry {
    ($($module:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// Every policy, in the order `hetsched schedulers` lists them.
        pub static REGISTRY: &[&PolicyInfo] = &[$(&$module::INFO),*];
    };
}

registry!(
    cfs,
    eas,
    gts,
    baseline,
    fa_cfs,
    hcs_balance,
    hcs_td,
    legacy,
    util_aware,
    learning_eas
);

/// The registry line of `name`, or the one-line error that lists the choices.
pub fn lookup(name: &str) -> Result<&'static PolicyInfo> {
    REGISTRY
        .iter()
        .copied()
        .find(|p| p.name == name)
        .ok_or_else(|| Error::Unknown {
            field: "scheduler".into(),
            kind: "scheduler",
            name: name.to_string(),
            choices: REGISTRY.iter().map(|p| p.name).collect::<Vec<_>>().join(", "),
        })
}

/// The fair class a run gets from `fair.eevdf`: an explicit 0 or 1 as given; -1 the form
/// the policy needs, else the kernel profile's (v6.12 has EEVDF, 4.19 CFS).
pub fn fair_variant(info: &PolicyInfo, knob: f64, legacy: bool) -> bool {
    if knob >= 0.0 {
        return knob > 0.0;
    }
    match info.requires.fair {
        Some((variant, _)) => variant == FairVariant::Eevdf,
        None => !legacy,
    }
}

/// Whether the run meets the policy's requirements.
pub fn check(info: &PolicyInfo, platform: &Platform, eevdf: bool) -> Result<()> {
    let needs_switcher = info.requires.switcher_platform;
    if platform.switcher && !needs_switcher {
        let ours: Vec<&str> = REGISTRY
            .iter()
            .filter(|p| p.requires.switcher_platform)
            .map(|p| p.name)
            .collect();
        return Err(config(
            "policy",
            "scheduler",
            format!(
                "{} on a switcher platform (as in the big.LITTLE switcher study, Kim et al.), got {}",
                ours.join(" or "),
                info.name
            ),
        ));
    }
    if needs_switcher && !platform.switcher {
        return Err(config(
            "policy",
            "scheduler",
            format!(
                "a switcher platform (--platform NAME:switcher) for --scheduler {}",
                info.name
            ),
        ));
    }
    if let Some((variant, why)) = info.requires.fair {
        if (variant == FairVariant::Eevdf) != eevdf {
            let want = if variant == FairVariant::Eevdf { 1 } else { 0 };
            return Err(config(
                "policy",
                "knobs.fair.eevdf".to_string(),
                format!("{want} with --scheduler {} ({why})", info.name),
            ));
        }
    }
    Ok(())
}

/// Every hook of [`SchedPolicy`], in the trait's order: a Python policy may define the few
/// the Python crate crosses and is refused one named after any other, which the engine would
/// never call on it (a test checks this list against the trait's source).
pub const HOOKS: &[&str] = &[
    "placement",
    "energy_aware",
    "load_balancer",
    "needs_hmp_load",
    "select_task_rq",
    "balance_wakeup",
    "migrate_task_rq",
    "dequeue_task",
    "set_next_task",
    "put_prev_task",
    "calc_delta_fair",
    "sched_slice",
    "task_tick",
    "balance",
    "task_dead",
    "take_placement_steps",
    "counters",
    "result",
    "knobs_changed",
    "as_any",
];

/// A policy: the hooks the core calls. Every hook but `select_task_rq` has a default that
/// is the kernel's fair class (v6.12) doing nothing more.
pub trait SchedPolicy: Send {
    /// The wakeup placement's name, as `result.json`'s `policy.placement` reports it.
    fn placement(&self) -> &'static str;

    /// Whether Energy Aware Scheduling runs (`sched_energy_enabled()`), and if not, why;
    /// None for a policy that is not energy aware.
    fn energy_aware(&self) -> Option<std::result::Result<(), String>> {
        None
    }

    /// The load balancer the policy runs with (None: no periodic, newidle or misfit
    /// balancing at all). Default: the kernel's `sched_balance_rq` over the platform's
    /// scheduling domains.
    fn load_balancer(&self, v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        Some(Box::new(KernelLb::new(
            v,
            v.knobs.derived.migration_cost_ns,
            v.knobs.derived.busy_factor,
        )))
    }

    /// Whether the policy reads the HMP tracked load (`SchedView::hmp_load`, GTS).
    fn needs_hmp_load(&self) -> bool {
        false
    }

    /// `select_task_rq()`: the CPU a waking or new task is enqueued on. A CPU outside the
    /// task's affinity falls back to `select_fallback_rq()`, as the kernel's core does.
    fn select_task_rq(&mut self, v: &SchedView, p: TaskId, prev_cpu: usize, wake: WakeKind) -> usize;

    /// Before `select_task_rq` of a fair task: queued tasks the policy moves first, carried
    /// out in order (each still queued where it was seen).
    fn balance_wakeup(&mut self, _v: &SchedView, _p: TaskId) -> Vec<Migration> {
        Vec::new()
    }

    /// `set_task_cpu()`: `p` moves from `src` to `dst` (a wakeup on another CPU, a
    /// balancer's pull, an active migration, an affinity change).
    fn migrate_task_rq(&mut self, _v: &SchedView, _p: TaskId, _src: usize, _dst: usize) {}

    /// A fair task leaves its runqueue; `sleep`: it blocks (else it migrates or changes
    /// class). Its runtime is accounted up to now.
    fn dequeue_task(&mut self, _v: &SchedView, _cpu: usize, _p: TaskId, _sleep: bool) {}

    /// `p` is switched in on its CPU.
    fn set_next_task(&mut self, _p: TaskId) {}

    /// `p`'s slice ends: it is switched out, or `check_preempt_tick` found its slice used up.
    fn put_prev_task(&mut self, _p: TaskId) {}

    /// `calc_delta_fair()` of the running fair task: `vdelta` is its vruntime increment
    /// at its weight; returns the increment to charge.
    #[inline]
    fn calc_delta_fair(&self, _p: TaskId, vdelta: u64) -> u64 {
        vdelta
    }

    /// The ideal slice `check_preempt_tick()` compares the task's runtime with.
    #[inline]
    fn sched_slice(&self, _p: TaskId, slice: u64) -> u64 {
        slice
    }

    /// `task_tick()` of a CPU whose running task `curr` is fair, after the kernel's own
    /// tick work. The policy may act on the whole simulation (migrate tasks); meanwhile
    /// the core holds it apart, and the hooks the core calls reach a stand-in that does
    /// what the fair class does (see [`Detached`]).
    fn task_tick(&mut self, _s: &mut Sim, _cpu: usize, _curr: TaskId) {}

    /// Once per tick, after every CPU's tick: migrations the policy makes itself (GTS's
    /// `hmp_force_up_migration` and `hmp_offload_down`). A running task is pushed by the
    /// stopper, a queued one moved; stale ones are dropped.
    fn balance(&mut self, _v: &SchedView) -> Vec<Migration> {
        Vec::new()
    }

    /// A task exits.
    fn task_dead(&mut self, _p: TaskId) {}

    /// The steps of energy estimation the last `select_task_rq` took (costs.rs: feec's
    /// step count, one for a prev_cpu fast path, 0 for a placement that estimated none),
    /// read once by the core and reset.
    fn take_placement_steps(&mut self) -> u64 {
        0
    }

    /// What `result.json`'s `counters` reports of the policy, by name.
    fn counters(&self) -> Vec<(&'static str, serde_json::Value)> {
        Vec::new()
    }

    /// Sections of `result.json` of the policy's own (beside `counters`).
    fn result(&self, _v: &SchedView, _out: &mut serde_json::Value) {}

    /// A knob changed during the run.
    fn knobs_changed(&mut self, _knobs: &Knobs) {}

    /// The policy as `Any`, for a test or an inspection API to read its state.
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The stand-in the core holds while a policy's `task_tick` runs with the whole
/// simulation in hand: it answers as the fair class with nothing more. A policy whose
/// other hooks must see what its own `task_tick` does (a migration's `migrate_task_rq`)
/// records that itself.
pub(crate) struct Detached;

impl SchedPolicy for Detached {
    fn placement(&self) -> &'static str {
        "detached"
    }

    fn load_balancer(&self, _v: &SchedView) -> Option<Box<dyn LoadBalancer>> {
        None
    }

    fn select_task_rq(&mut self, _v: &SchedView, _p: TaskId, prev_cpu: usize, _wake: WakeKind) -> usize {
        prev_cpu
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[cfg(test)]
mod hooks_tests {
    /// HOOKS names the trait's methods, every one and in order, as its source declares them.
    #[test]
    fn hooks_lists_every_method_of_the_trait() {
        let src = include_str!("mod.rs");
        let start = src.find("pub trait SchedPolicy").unwrap();
        let body = &src[start..start + src[start..].find("\n}\n").unwrap()];
        let declared: Vec<&str> = body
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("fn "))
            .map(|l| &l[..l.find('(').unwrap()])
            .collect();
        assert_eq!(declared, super::HOOKS);
    }
}
