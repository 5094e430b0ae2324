//! Outputs recorded during a run: a Chrome trace-event JSON that the Perfetto UI opens
//! (one track per CPU with task slices; counter tracks for each cluster's frequency and each
//! CPU's util and power), and a sampled per-CPU time series.

use crate::core::*;
use crate::platform::Platform;
use std::fmt::Write;

pub struct Trace {
    buf: String,
    /// last value written per counter track, so unchanged values are not repeated
    last_util: Vec<u64>,
    last_power: Vec<u64>,
}

const CPU_PID: u32 = 0;
const COUNTER_PID: u32 = 1;

/// A timestamp in µs with ns precision, written without allocating.
struct Us(u64);

impl std::fmt::Display for Us {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{:03}", self.0 / 1000, self.0 % 1000)
    }
}

fn escape(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

impl Trace {
    pub fn new(p: &Platform) -> Trace {
        let n = p.nr_cpus();
        let mut t = Trace {
            buf: String::with_capacity(1 << 20),
            last_util: vec![u64::MAX; n],
            last_power: vec![u64::MAX; n],
        };
        t.buf.push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
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
            Us(start),
            Us(end - start)
        );
    }

    fn counter(&mut self, now: u64, name: std::fmt::Arguments, key: &str, value: u64) {
        let _ = write!(
            self.buf,
            ",\n{{\"ph\":\"C\",\"pid\":{COUNTER_PID},\"name\":\"{name}\",\"ts\":{},\"args\":{{\"{key}\":{value}}}}}",
            Us(now)
        );
    }

    pub fn freq(&mut self, now: u64, cluster: usize, khz: u64) {
        self.counter(now, format_args!("freq_khz cluster{cluster}"), "khz", khz);
    }

    pub fn util(&mut self, now: u64, cpu: usize, util: u64) {
        if self.last_util[cpu] != util {
            self.last_util[cpu] = util;
            self.counter(now, format_args!("util cpu{cpu}"), "util", util);
        }
    }

    pub fn power(&mut self, now: u64, cpu: usize, uw: u64) {
        if self.last_power[cpu] != uw {
            self.last_power[cpu] = uw;
            self.counter(now, format_args!("power_uw cpu{cpu}"), "uw", uw);
        }
    }

    /// The text written since the last drain, so that a long run's trace can go to disk as
    /// the run goes: the drains and then `finish` concatenate to the whole document.
    pub fn drain(&mut self) -> String {
        std::mem::replace(&mut self.buf, String::with_capacity(1 << 20))
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
    /// The rows sampled since the last drain (the series starts again empty).
    pub fn drain(&mut self) -> TimeSeries {
        std::mem::take(self)
    }

    pub fn push(&mut self, t: u64, cpu: u32, util: u64, khz: u64, idle: i32, p: u64) {
        self.t_ns.push(t);
        self.cpu.push(cpu);
        self.util.push(util);
        self.freq_khz.push(khz);
        self.idle_state.push(idle);
        self.power_uw.push(p);
    }
}

// ---------------------------------------------------------------------------------------
// the engine's side of the outputs

impl Sim {
    pub(crate) fn sample(&mut self) {
        let now = self.now;
        for cpu in 0..self.rqs.len() {
            let util = self.cpu_util_cfs(cpu);
            let khz = self.khz(cpu);
            let idle = match self.rqs[cpu].idle_state {
                Some(s) => s as i32,
                None => -1,
            };
            let p = self.meter.cpu_power_uw(cpu);
            if let Some(ts) = self.timeseries.as_mut() {
                ts.push(now, cpu as u32, util, khz, idle, p);
            }
        }
    }

    pub(crate) fn trace_slice_end(&mut self, cpu: usize, t: TaskId) {
        if let Some(tr) = self.trace.as_mut() {
            let start = self.rqs[cpu].slice_start;
            if self.now > start {
                tr.slice(cpu, &self.tasks[t as usize].name, t, start, self.now);
            }
            self.rqs[cpu].slice_start = self.now;
        }
    }

    pub(crate) fn trace_power(&mut self, cpu: usize) {
        if let Some(tr) = self.trace.as_mut() {
            tr.power(self.now, cpu, self.meter.cpu_power_uw(cpu));
        }
    }

    /// Close the trace at the current time (slices in progress end here).
    pub fn finish_trace(&mut self) -> Option<String> {
        let now = self.now;
        let mut tr = self.trace.take()?;
        for cpu in 0..self.rqs.len() {
            if let Some(t) = self.rqs[cpu].curr {
                let start = self.rqs[cpu].slice_start;
                if now > start {
                    tr.slice(cpu, &self.tasks[t as usize].name, t, start, now);
                }
            }
        }
        Some(tr.finish())
    }
}
