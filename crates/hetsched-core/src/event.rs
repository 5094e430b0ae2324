//! The event queue. Events at the same nanosecond are ordered by class, then by insertion
//! sequence, so a run is a pure function of its inputs. Stale events (a CPU's completion
//! after it switched task, a superseded frequency commit) are dropped by generation number
//! when popped, never searched for in the heap.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Order of classes at one instant: hardware state first, then completions of running
/// work, then CPUs leaving idle, then new wakeups, then the tick, then sampling (which
/// sees the state every other event at that instant left).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum EventKind {
    FreqCommit {
        cluster: u32,
        gen: u32,
    } = 0,
    Complete {
        cpu: u32,
        gen: u32,
    } = 1,
    CpuReady {
        cpu: u32,
        gen: u32,
    } = 2,
    Wakeup {
        task: u32,
    } = 3,
    Tick = 4,
    /// a time-series sample (only with --timeseries)
    Sample = 5,
}

impl EventKind {
    #[inline]
    fn class(&self) -> u8 {
        match self {
            EventKind::FreqCommit { .. } => 0,
            EventKind::Complete { .. } => 1,
            EventKind::CpuReady { .. } => 2,
            EventKind::Wakeup { .. } => 3,
            EventKind::Tick => 4,
            EventKind::Sample => 5,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub time: u64,
    pub seq: u64,
    pub kind: EventKind,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for earliest first.
        (other.time, other.kind.class(), other.seq).cmp(&(self.time, self.kind.class(), self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    seq: u64,
    pub popped: u64,
    /// events popped, by class (FreqCommit, Complete, CpuReady, Wakeup, Tick, Sample)
    pub popped_by_class: [u64; 6],
    pub max_len: usize,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: u64, kind: EventKind) {
        self.seq += 1;
        self.heap.push(Event {
            time,
            seq: self.seq,
            kind,
        });
        self.max_len = self.max_len.max(self.heap.len());
    }

    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.heap.pop();
        if let Some(ev) = &e {
            self.popped += 1;
            self.popped_by_class[ev.kind.class() as usize] += 1;
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_orders_by_class_then_sequence() {
        let mut q = EventQueue::default();
        q.push(10, EventKind::Tick);
        q.push(10, EventKind::Wakeup { task: 1 });
        q.push(10, EventKind::Wakeup { task: 0 });
        q.push(5, EventKind::Tick);
        q.push(10, EventKind::FreqCommit { cluster: 0, gen: 0 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time, e.kind)).collect();
        assert_eq!(
            order,
            vec![
                (5, EventKind::Tick),
                (10, EventKind::FreqCommit { cluster: 0, gen: 0 }),
                (10, EventKind::Wakeup { task: 1 }),
                (10, EventKind::Wakeup { task: 0 }),
                (10, EventKind::Tick),
            ]
        );
    }
}
