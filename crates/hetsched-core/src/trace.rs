//! Outputs recorded during a run: a Chrome trace-event JSON that the Perfetto UI opens
//! (one track per CPU with task slices; counter tracks for each cluster's frequency and each
//! CPU's util and power), and a sampled per-CPU time series.

use crate::platform::Platform;
use std::fmt::Write;

pub struct Trace {
    buf: String,
}

const CPU_PID: u32 = 0;
const COUNTER_PID: u32 = 1;

fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn escape(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

impl Trace {
    pub fn new(p: &Platform) -> Trace {
        let mut t = Trace {
            buf: String::with_capacity(1 << 20),
        };
        t.buf
            .push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        let _ = write!(
            t.buf,
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{CPU_PID},\"args\":{{\"name\":{}}}}}",
            escape(&format!("{} CPUs", p.name))
        );
        let _ = write!(
            t.buf,
            ",\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{COUNTER_PID},\"args\":{{\"name\":\"counters\"}}}}"
        );
        for cpu in 0..p.nr_cpus() {
            let c = p.cluster_of(cpu);
            let _ = write!(
                t.buf,
                ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{CPU_PID},\"tid\":{cpu},\"args\":{{\"name\":{}}}}}",
                escape(&format!("CPU{cpu} {} (cap {})", c.name, c.capacity_orig))
            );
            let _ = write!(
                t.buf,
                ",\n{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":{CPU_PID},\"tid\":{cpu},\"args\":{{\"sort_index\":{cpu}}}}}"
            );
        }
        t
    }

    pub fn slice(&mut self, cpu: usize, name: &str, task: u32, start: u64, end: u64) {
        let _ = write!(
            self.buf,
            ",\n{{\"ph\":\"X\",\"pid\":{CPU_PID},\"tid\":{cpu},\"name\":{},\"ts\":{},\"dur\":{},\"args\":{{\"task\":{task}}}}}",
            escape(name),
            us(start),
            us(end - start)
        );
    }

    fn counter(&mut self, now: u64, name: &str, key: &str, value: u64) {
        let _ = write!(
            self.buf,
            ",\n{{\"ph\":\"C\",\"pid\":{COUNTER_PID},\"name\":\"{name}\",\"ts\":{},\"args\":{{\"{key}\":{value}}}}}",
            us(now)
        );
    }

    pub fn freq(&mut self, now: u64, cluster: usize, khz: u64) {
        self.counter(now, &format!("freq_khz cluster{cluster}"), "khz", khz);
    }

    pub fn util(&mut self, now: u64, cpu: usize, util: u64) {
        self.counter(now, &format!("util cpu{cpu}"), "util", util);
    }

    pub fn power(&mut self, now: u64, cpu: usize, uw: u64) {
        self.counter(now, &format!("power_uw cpu{cpu}"), "uw", uw);
    }

    pub fn finish(mut self) -> String {
        self.buf.push_str("\n]}\n");
        self.buf
    }
}

/// Long format: one row per CPU per sample.
#[derive(Debug, Default, Clone)]
pub struct TimeSeries {
    pub t_ns: Vec<u64>,
    pub cpu: Vec<u32>,
    pub util: Vec<u64>,
    pub freq_khz: Vec<u64>,
    /// -1 = running, else the idle state index
    pub idle_state: Vec<i32>,
    pub power_uw: Vec<u64>,
}

impl TimeSeries {
    pub fn push(&mut self, t: u64, cpu: u32, util: u64, khz: u64, idle: i32, p: u64) {
        self.t_ns.push(t);
        self.cpu.push(cpu);
        self.util.push(util);
        self.freq_khz.push(khz);
        self.idle_state.push(idle);
        self.power_uw.push(p);
    }
}
