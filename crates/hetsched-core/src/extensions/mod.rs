//! Things that combine with any policy: hotplug (MediaTek's hps) and, through vendor.rs,
//! the core controller. They act at the tick and where a CPU's availability matters
//! (placement, balancing, idle), whichever policy runs.

pub mod hotplug;
