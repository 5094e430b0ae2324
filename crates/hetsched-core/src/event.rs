//! The event queue. Events at the same nanosecond are ordered by class, then by insertion
//! sequence, so a run is a pure function of its inputs. Stale events (a CPU's completion
//! after it switched task, a superseded frequency commit) are dropped by generation number
//! when popped, never searched for in the heap.

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
    /// class << 58 | insertion sequence: one integer orders same-time events
    key: u64,
    pub kind: EventKind,
}

impl Event {
    #[inline]
    fn before(&self, other: &Event) -> bool {
        (self.time, self.key) < (other.time, other.key)
    }
}

/// Children per node. Measured with examples/profile_run on the speed benchmark's
/// configuration: 2 was the fastest of 2, 4 and 8 for the engine's small (tens of events),
/// busy queue.
const ARITY: usize = 2;

/// A min-heap on (time, key) with integer comparisons only.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Event>,
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
        let ev = Event {
            time,
            key: (kind.class() as u64) << 58 | self.seq,
            kind,
        };
        let mut i = self.heap.len();
        self.heap.push(ev);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !ev.before(&self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = ev;
        self.max_len = self.max_len.max(self.heap.len());
    }

    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.first().map(|e| e.time)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let last = self.heap.pop()?;
        let top = if self.heap.is_empty() {
            last
        } else {
            let top = self.heap[0];
            let n = self.heap.len();
            let mut i = 0;
            loop {
                let first = ARITY * i + 1;
                if first >= n {
                    break;
                }
                let mut best = first;
                for c in first + 1..(first + ARITY).min(n) {
                    if self.heap[c].before(&self.heap[best]) {
                        best = c;
                    }
                }
                if !self.heap[best].before(&last) {
                    break;
                }
                self.heap[i] = self.heap[best];
                i = best;
            }
            self.heap[i] = last;
            top
        };
        self.popped += 1;
        self.popped_by_class[top.kind.class() as usize] += 1;
        Some(top)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_like_a_sort() {
        // a deterministic scramble of times with many ties
        let mut q = EventQueue::default();
        let mut expect = Vec::new();
        let mut x: u64 = 12345;
        for i in 0..500u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = (x >> 33) % 50;
            q.push(t, EventKind::Wakeup { task: i });
            expect.push((t, i));
        }
        expect.sort(); // same class: ties in insertion order, i.e. by task id here
        let got: Vec<_> = std::iter::from_fn(|| q.pop())
            .map(|e| match e.kind {
                EventKind::Wakeup { task } => (e.time, task),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, expect);
    }

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
