//! The Chrome trace-event JSON (Perfetto's UI and chrome://tracing open it): one track per
//! CPU with a slice per stretch a task ran, and counter tracks for each cluster's frequency
//! and each CPU's util and power. It carries none of the kernel's event shapes; the ftrace
//! and Perfetto writers do.

use super::TraceWriter;
use crate::platform::Platform;
use std::fmt::Write;

pub(super) struct ChromeJson {
    buf: String,
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

impl ChromeJson {
    pub(super) fn new(p: &Platform) -> ChromeJson {
        let mut t = ChromeJson {
            buf: String::with_capacity(1 << 20),
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

    fn counter(&mut self, now: u64, name: std::fmt::Arguments, key: &str, value: u64) {
        let _ = write!(
            self.buf,
            ",\n{{\"ph\":\"C\",\"pid\":{COUNTER_PID},\"name\":\"{name}\",\"ts\":{},\"args\":{{\"{key}\":{value}}}}}",
            Us(now)
        );
    }
}

impl TraceWriter for ChromeJson {
    fn slice(&mut self, cpu: usize, name: &str, task: u32, start: u64, end: u64) {
        let _ = write!(
            self.buf,
            ",\n{{\"ph\":\"X\",\"pid\":{CPU_PID},\"tid\":{cpu},\"name\":{},\"ts\":{},\"dur\":{},\"args\":{{\"task\":{task}}}}}",
            escape(name),
            Us(start),
            Us(end - start)
        );
    }

    fn cluster_frequency(&mut self, now: u64, cluster: usize, khz: u64) {
        self.counter(now, format_args!("freq_khz cluster{cluster}"), "khz", khz);
    }

    fn util(&mut self, now: u64, cpu: usize, util: u64) {
        self.counter(now, format_args!("util cpu{cpu}"), "util", util);
    }

    fn power(&mut self, now: u64, cpu: usize, uw: u64) {
        self.counter(now, format_args!("power_uw cpu{cpu}"), "uw", uw);
    }

    fn drain(&mut self) -> Vec<u8> {
        std::mem::replace(&mut self.buf, String::with_capacity(1 << 20)).into_bytes()
    }

    fn finish(&mut self) -> Vec<u8> {
        self.buf.push_str("\n]}\n");
        std::mem::take(&mut self.buf).into_bytes()
    }
}
