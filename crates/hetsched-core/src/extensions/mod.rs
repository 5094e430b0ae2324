//! Extensions: mechanisms that combine with any policy, as SimGrid's plugins do. Each
//! subscribes to the events it needs (the tick, the result) and keeps its own state; what
//! the core must consult on its paths stays core state, as the kernel's masks do
//! (`Sim::cpu_isolated` for msm's cpu_isolated_mask, `Sim::hotplug` for cpu_online_mask
//! and the tasks' requested affinities).
//!
//! | extension | enabled by | what it does |
//! |---|---|---|
//! | `core_ctl` | always (acts with `vendor.cpu_isolation` under EAS) | isolates CPUs the load does not need |
//! | `hps` | `hotplug.hps=1` (`--set hotplug=hps`) | takes CPUs offline and online by load |

pub mod core_ctl;
pub mod hotplug;

use crate::core::Sim;
use crate::features::Knobs;

/// An extension's hooks.
pub trait Extension: Send {
    fn name(&self) -> &'static str;
    /// At every tick, before the CPUs' own ticks.
    fn tick(&mut self, s: &mut Sim);
    /// Its part of result.json.
    fn result(&self, _s: &Sim, _out: &mut serde_json::Value) {}
    /// The extension as `Any`, for a test or an inspection API to read its state.
    fn as_any(&self) -> &dyn std::any::Any;
    /// At each WALT window rollover (walt_irq_work), under the msm-4.14 profile.
    fn window_rollover(&mut self, _s: &mut Sim) {}
}

/// One registry line.
pub struct ExtensionInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub knobs: &'static [&'static str],
    /// whether a run with these knobs installs it
    pub enabled: fn(&Knobs) -> bool,
    pub build: fn(&Knobs) -> Box<dyn Extension>,
}

/// Every extension, in the order their ticks run.
pub static REGISTRY: &[&ExtensionInfo] = &[&core_ctl::INFO, &hotplug::INFO];
