//! Perfetto's protobuf trace, as `traced_probes` writes one on a phone: the kernel's ftrace
//! events in per-CPU FtraceEventBundles (sched_switch, sched_waking, sched_wakeup[_new],
//! sched_migrate_task, sched_process_fork, sched_process_exit, cpu_frequency, cpu_idle), from which the trace
//! processor builds its `sched`, `thread_state`, `cpu_frequency` and `cpu_idle` tables; a
//! SystemInfo packet with a v6.12 utsname (the processor reads prev_state's preempted bit by
//! kernel version); a CpuInfo packet (each CPU's capacity_orig and OPP table); a
//! ProcessTree per new task (each task a process of one thread); and the util and power of each CPU as
//! TrackEvent counters, which have no ftrace event.
//!
//! The messages below are the subset of Perfetto's protos/perfetto/trace/ (trace.proto,
//! trace_packet.proto, ftrace/ftrace_event_bundle.proto, ftrace/ftrace_event.proto,
//! ftrace/sched.proto, ftrace/power.proto, ps/process_tree.proto,
//! system_info.proto, track_event/track_descriptor.proto, track_event/counter_descriptor.proto,
//! track_event/track_event.proto) that these packets use, declared for prost with Perfetto's
//! field numbers; fields left out are absent from the encoding, as protobuf allows. The
//! test suite decodes the output with Perfetto's own Python protos.

use super::{PrevState, TaskRef, TraceWriter};
use crate::platform::Platform;
use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub struct TracePacket {
    #[prost(uint64, optional, tag = "8")]
    pub timestamp: Option<u64>,
    #[prost(uint32, optional, tag = "10")]
    pub trusted_packet_sequence_id: Option<u32>,
    #[prost(uint32, optional, tag = "13")]
    pub sequence_flags: Option<u32>,
    #[prost(bool, optional, tag = "87")]
    pub first_packet_on_sequence: Option<bool>,
    #[prost(oneof = "Data", tags = "1, 2, 11, 45, 60, 67")]
    pub data: Option<Data>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Data {
    #[prost(message, tag = "1")]
    FtraceEvents(FtraceEventBundle),
    #[prost(message, tag = "2")]
    ProcessTree(ProcessTree),
    #[prost(message, tag = "11")]
    TrackEvent(TrackEvent),
    #[prost(message, tag = "45")]
    SystemInfo(SystemInfo),
    #[prost(message, tag = "60")]
    TrackDescriptor(TrackDescriptor),
    #[prost(message, tag = "67")]
    CpuInfo(CpuInfo),
}

/// Each CPU's capacity and frequency table, as traced_probes reads them from sysfs
/// (cpu_capacity, scaling_available_frequencies): the trace processor's `cpu` table.
#[derive(Clone, PartialEq, Message)]
pub struct CpuInfo {
    #[prost(message, repeated, tag = "1")]
    pub cpus: Vec<Cpu>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Cpu {
    #[prost(string, optional, tag = "1")]
    pub processor: Option<String>,
    #[prost(uint32, repeated, packed = "false", tag = "2")]
    pub frequencies: Vec<u32>,
    #[prost(uint32, optional, tag = "3")]
    pub capacity: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceEventBundle {
    #[prost(uint32, optional, tag = "1")]
    pub cpu: Option<u32>,
    #[prost(message, repeated, tag = "2")]
    pub event: Vec<FtraceEvent>,
}

#[derive(Clone, PartialEq, Message)]
pub struct FtraceEvent {
    #[prost(uint64, optional, tag = "1")]
    pub timestamp: Option<u64>,
    /// the task running on the bundle's CPU when the event fired
    #[prost(uint32, optional, tag = "2")]
    pub pid: Option<u32>,
    #[prost(oneof = "Event", tags = "4, 11, 13, 17, 20, 114, 238, 239, 491")]
    pub event: Option<Event>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Event {
    #[prost(message, tag = "4")]
    SchedSwitch(SchedSwitch),
    #[prost(message, tag = "11")]
    CpuFrequency(CpuState),
    #[prost(message, tag = "13")]
    CpuIdle(CpuState),
    #[prost(message, tag = "17")]
    SchedWakeup(SchedWakeup),
    #[prost(message, tag = "20")]
    SchedWaking(SchedWakeup),
    #[prost(message, tag = "114")]
    SchedWakeupNew(SchedWakeup),
    #[prost(message, tag = "238")]
    SchedProcessExit(SchedProcessExit),
    #[prost(message, tag = "239")]
    SchedProcessFork(SchedProcessFork),
    #[prost(message, tag = "491")]
    SchedMigrateTask(SchedMigrateTask),
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedSwitch {
    #[prost(string, optional, tag = "1")]
    pub prev_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub prev_pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prev_prio: Option<i32>,
    #[prost(int64, optional, tag = "4")]
    pub prev_state: Option<i64>,
    #[prost(string, optional, tag = "5")]
    pub next_comm: Option<String>,
    #[prost(int32, optional, tag = "6")]
    pub next_pid: Option<i32>,
    #[prost(int32, optional, tag = "7")]
    pub next_prio: Option<i32>,
}

/// SchedWakeupFtraceEvent, SchedWakingFtraceEvent and SchedWakeupNewFtraceEvent have the
/// same fields and numbers.
#[derive(Clone, PartialEq, Message)]
pub struct SchedWakeup {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub success: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub target_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedMigrateTask {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub prio: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub orig_cpu: Option<i32>,
    #[prost(int32, optional, tag = "5")]
    pub dest_cpu: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessExit {
    #[prost(string, optional, tag = "1")]
    pub comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
    #[prost(int32, optional, tag = "4")]
    pub prio: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SchedProcessFork {
    #[prost(string, optional, tag = "1")]
    pub parent_comm: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pub parent_pid: Option<i32>,
    #[prost(string, optional, tag = "3")]
    pub child_comm: Option<String>,
    #[prost(int32, optional, tag = "4")]
    pub child_pid: Option<i32>,
}

/// CpuFrequencyFtraceEvent and CpuIdleFtraceEvent: state, cpu_id.
#[derive(Clone, PartialEq, Message)]
pub struct CpuState {
    #[prost(uint32, optional, tag = "1")]
    pub state: Option<u32>,
    #[prost(uint32, optional, tag = "2")]
    pub cpu_id: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct ProcessTree {
    #[prost(message, repeated, tag = "1")]
    pub processes: Vec<Process>,
    #[prost(message, repeated, tag = "2")]
    pub threads: Vec<Thread>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Process {
    #[prost(int32, optional, tag = "1")]
    pub pid: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub ppid: Option<i32>,
    #[prost(string, repeated, tag = "3")]
    pub cmdline: Vec<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Thread {
    #[prost(int32, optional, tag = "1")]
    pub tid: Option<i32>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(int32, optional, tag = "3")]
    pub tgid: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct SystemInfo {
    #[prost(message, optional, tag = "1")]
    pub utsname: Option<Utsname>,
    #[prost(uint32, optional, tag = "8")]
    pub num_cpus: Option<u32>,
}

#[derive(Clone, PartialEq, Message)]
pub struct Utsname {
    #[prost(string, optional, tag = "1")]
    pub sysname: Option<String>,
    #[prost(string, optional, tag = "3")]
    pub release: Option<String>,
    #[prost(string, optional, tag = "4")]
    pub machine: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackDescriptor {
    #[prost(uint64, optional, tag = "1")]
    pub uuid: Option<u64>,
    #[prost(string, optional, tag = "2")]
    pub name: Option<String>,
    #[prost(message, optional, tag = "8")]
    pub counter: Option<CounterDescriptor>,
}

#[derive(Clone, PartialEq, Message)]
pub struct CounterDescriptor {
    #[prost(string, optional, tag = "6")]
    pub unit_name: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
pub struct TrackEvent {
    /// TrackEvent.Type: TYPE_COUNTER = 4
    #[prost(int32, optional, tag = "9")]
    pub r#type: Option<i32>,
    #[prost(uint64, optional, tag = "11")]
    pub track_uuid: Option<u64>,
    #[prost(int64, optional, tag = "30")]
    pub counter_value: Option<i64>,
}

const TYPE_COUNTER: i32 = 4;
/// TracePacket.SequenceFlags.SEQ_INCREMENTAL_STATE_CLEARED
const SEQ_INCREMENTAL_STATE_CLEARED: u32 = 1;
/// the one writer sequence of the counter packets
const SEQUENCE_ID: u32 = 1;
/// events per CPU gathered into one bundle before it is written
const BUNDLE_EVENTS: usize = 512;
/// track uuids: util of CPU n is UTIL_TRACK + n, power POWER_TRACK + n
const UTIL_TRACK: u64 = 0x1_0000;
const POWER_TRACK: u64 = 0x2_0000;

pub(super) struct PerfettoProto {
    buf: Vec<u8>,
    /// the events of each CPU not yet written in a bundle
    pending: Vec<Vec<FtraceEvent>>,
}

impl PerfettoProto {
    pub(super) fn new(p: &Platform) -> PerfettoProto {
        let n = p.nr_cpus();
        let mut w = PerfettoProto {
            buf: Vec::with_capacity(1 << 20),
            pending: vec![Vec::new(); n],
        };
        w.packet(TracePacket {
            data: Some(Data::SystemInfo(SystemInfo {
                utsname: Some(Utsname {
                    sysname: Some("Linux".into()),
                    release: Some("6.12.0-hetsched".into()),
                    machine: Some("aarch64".into()),
                }),
                num_cpus: Some(n as u32),
            })),
            ..Default::default()
        });
        w.packet(TracePacket {
            data: Some(Data::CpuInfo(CpuInfo {
                cpus: (0..n)
                    .map(|cpu| {
                        let c = p.cluster_of(cpu);
                        Cpu {
                            processor: Some(format!("{} {}", p.name, c.name)),
                            frequencies: c.opps.iter().map(|o| o.khz as u32).collect(),
                            capacity: Some(c.capacity_orig as u32),
                        }
                    })
                    .collect(),
            })),
            ..Default::default()
        });
        for cpu in 0..n {
            for (base, name, unit) in [(UTIL_TRACK, "util", "util"), (POWER_TRACK, "power", "uW")] {
                let first = cpu == 0 && base == UTIL_TRACK;
                w.packet(TracePacket {
                    trusted_packet_sequence_id: Some(SEQUENCE_ID),
                    sequence_flags: first.then_some(SEQ_INCREMENTAL_STATE_CLEARED),
                    first_packet_on_sequence: first.then_some(true),
                    data: Some(Data::TrackDescriptor(TrackDescriptor {
                        uuid: Some(base + cpu as u64),
                        name: Some(format!("cpu{cpu} {name}")),
                        counter: Some(CounterDescriptor {
                            unit_name: Some(unit.into()),
                        }),
                    })),
                    ..Default::default()
                });
            }
        }
        w
    }

    /// One `Trace.packet` field: tag 1, length-delimited.
    fn packet(&mut self, p: TracePacket) {
        prost::encoding::message::encode(1, &p, &mut self.buf);
    }

    fn event(&mut self, now: u64, cpu: usize, curr: TaskRef, event: Event) {
        self.pending[cpu].push(FtraceEvent {
            timestamp: Some(now),
            pid: Some(curr.pid as u32),
            event: Some(event),
        });
        if self.pending[cpu].len() >= BUNDLE_EVENTS {
            self.flush_cpu(cpu);
        }
    }

    fn flush_cpu(&mut self, cpu: usize) {
        if self.pending[cpu].is_empty() {
            return;
        }
        let event = std::mem::take(&mut self.pending[cpu]);
        self.packet(TracePacket {
            data: Some(Data::FtraceEvents(FtraceEventBundle {
                cpu: Some(cpu as u32),
                event,
            })),
            ..Default::default()
        });
    }

    fn counter(&mut self, now: u64, track: u64, value: u64) {
        self.packet(TracePacket {
            timestamp: Some(now),
            trusted_packet_sequence_id: Some(SEQUENCE_ID),
            data: Some(Data::TrackEvent(TrackEvent {
                r#type: Some(TYPE_COUNTER),
                track_uuid: Some(track),
                counter_value: Some(value as i64),
            })),
            ..Default::default()
        });
    }
}

fn wakeup(p: TaskRef, target_cpu: usize) -> SchedWakeup {
    SchedWakeup {
        comm: Some(p.comm.into()),
        pid: Some(p.pid),
        prio: Some(p.prio),
        success: Some(1),
        target_cpu: Some(target_cpu as i32),
    }
}

impl TraceWriter for PerfettoProto {
    fn cpu_frequency(&mut self, now: u64, cpu: usize, curr: TaskRef, khz: u64) {
        let e = CpuState {
            state: Some(khz as u32),
            cpu_id: Some(cpu as u32),
        };
        self.event(now, cpu, curr, Event::CpuFrequency(e));
    }

    fn cpu_idle(&mut self, now: u64, cpu: usize, curr: TaskRef, state: u32) {
        let e = CpuState {
            state: Some(state),
            cpu_id: Some(cpu as u32),
        };
        self.event(now, cpu, curr, Event::CpuIdle(e));
    }

    fn util(&mut self, now: u64, cpu: usize, util: u64) {
        self.counter(now, UTIL_TRACK + cpu as u64, util);
    }

    fn power(&mut self, now: u64, cpu: usize, uw: u64) {
        self.counter(now, POWER_TRACK + cpu as u64, uw);
    }

    fn sched_switch(&mut self, now: u64, cpu: usize, prev: TaskRef, prev_state: PrevState, next: TaskRef) {
        let e = SchedSwitch {
            prev_comm: Some(prev.comm.into()),
            prev_pid: Some(prev.pid),
            prev_prio: Some(prev.prio),
            prev_state: Some(prev_state.raw()),
            next_comm: Some(next.comm.into()),
            next_pid: Some(next.pid),
            next_prio: Some(next.prio),
        };
        self.event(now, cpu, prev, Event::SchedSwitch(e));
    }

    fn sched_waking(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef, target_cpu: usize) {
        self.event(now, cpu, curr, Event::SchedWaking(wakeup(p, target_cpu)));
    }

    fn sched_wakeup(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef, target_cpu: usize, new: bool) {
        if new {
            // a new task (a process of one thread), named before its first event
            self.packet(TracePacket {
                timestamp: Some(now),
                data: Some(Data::ProcessTree(ProcessTree {
                    processes: vec![Process {
                        pid: Some(p.pid),
                        ppid: Some(0),
                        cmdline: vec![p.comm.into()],
                    }],
                    threads: vec![],
                })),
                ..Default::default()
            });
            self.event(now, cpu, curr, Event::SchedWakeupNew(wakeup(p, target_cpu)));
        } else {
            self.event(now, cpu, curr, Event::SchedWakeup(wakeup(p, target_cpu)));
        }
    }

    fn sched_migrate_task(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef, orig: usize, dest: usize) {
        let e = SchedMigrateTask {
            comm: Some(p.comm.into()),
            pid: Some(p.pid),
            prio: Some(p.prio),
            orig_cpu: Some(orig as i32),
            dest_cpu: Some(dest as i32),
        };
        self.event(now, cpu, curr, Event::SchedMigrateTask(e));
    }

    fn sched_process_exit(&mut self, now: u64, cpu: usize, curr: TaskRef, p: TaskRef) {
        let e = SchedProcessExit {
            comm: Some(p.comm.into()),
            pid: Some(p.pid),
            tgid: Some(p.pid),
            prio: Some(p.prio),
        };
        self.event(now, cpu, curr, Event::SchedProcessExit(e));
    }

    fn sched_process_fork(&mut self, now: u64, cpu: usize, parent: TaskRef, child: TaskRef) {
        let e = SchedProcessFork {
            parent_comm: Some(parent.comm.into()),
            parent_pid: Some(parent.pid),
            child_comm: Some(child.comm.into()),
            child_pid: Some(child.pid),
        };
        self.event(now, cpu, parent, Event::SchedProcessFork(e));
    }

    fn drain(&mut self) -> Vec<u8> {
        for cpu in 0..self.pending.len() {
            self.flush_cpu(cpu);
        }
        std::mem::replace(&mut self.buf, Vec::with_capacity(1 << 20))
    }

    fn finish(&mut self) -> Vec<u8> {
        self.drain()
    }
}
