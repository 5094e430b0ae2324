//! The event queue. Events at the same nanosecond are ordered by class, then by insertion
//! sequence, so a run is a pure function of its inputs. Stale events (a superseded
//! frequency commit, a CPU's wakeup from idle that a newer one replaced) are dropped by
//! generation number when popped, never searched for in the heap.
//!
//! A CPU has at most one live completion (the running task's current piece of work), and
//! every new one supersedes the last, so completions live in one slot per CPU beside the
//! heap instead of in it: a re-armed completion overwrites its slot. In the heap the
//! superseded ones stayed until their (often far-future) time came: a CPU-bound job
//! preempted every slice left one behind each time, and the heap grew with the run's
//! length. A slot's event keeps the key it would have had in the heap, so the order of
//! the events that fire is unchanged.

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
    /// a sampling governor's timer for one cluster (ondemand, conservative)
    GovSample {
        cluster: u32,
    } = 5,
    /// a time-series sample (only with --timeseries)
    Sample = 6,
    /// a CPU's fair server dl_timer (deadline.rs)
    FairServer {
        cpu: u32,
    } = 7,
    /// the RT bandwidth period timer (android-4.19 profile, rt.rs)
    RtPeriod = 8,
}

/// The class of a completion (EventKind::Complete), whose events live in the per-CPU slots.
const COMPLETE_CLASS: u8 = EventKind::Complete { cpu: 0, gen: 0 }.class();

impl EventKind {
    #[inline]
    const fn class(&self) -> u8 {
        match self {
            EventKind::FreqCommit { .. } => 0,
            EventKind::Complete { .. } => 1,
            EventKind::CpuReady { .. } => 2,
            EventKind::Wakeup { .. } => 3,
            EventKind::Tick => 4,
            EventKind::GovSample { .. } => 5,
            EventKind::Sample => 6,
            EventKind::FairServer { .. } => 7,
            EventKind::RtPeriod => 8,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// time << 64 | class << 58 | insertion sequence: one integer orders all events
    ord: u128,
    pub kind: EventKind,
}

impl Event {
    #[inline]
    pub fn time(&self) -> u64 {
        (self.ord >> 64) as u64
    }
}

/// A binary min-heap on one u128 key. `pop` walks the hole down along the smaller child to
/// a leaf and then sifts the last element up from there (the "bottom-up" variant std's
/// BinaryHeap also uses): one child comparison per level, which compiles to a conditional
/// move, instead of two unpredictable branches. Measured with examples/profile_run, this
/// beat 4- and 8-ary heaps and the top-down sift.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Event>,
    /// each CPU's pending completion: its key and generation (key u128::MAX: none)
    complete: Vec<(u128, u32)>,
    /// the CPU whose completion comes first (meaningful while `nr_complete` > 0)
    complete_first: usize,
    nr_complete: usize,
    seq: u64,
    pub popped: u64,
    /// events popped, by class (FreqCommit, Complete, CpuReady, Wakeup, Tick, GovSample,
    /// Sample, FairServer)
    pub popped_by_class: [u64; 9],
    pub max_len: usize,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: u64, kind: EventKind) {
        if let EventKind::Complete { cpu, gen } = kind {
            return self.push_complete(time, cpu as usize, gen);
        }
        let ev = Event {
            ord: self.next_key(time, kind.class()),
            kind,
        };
        self.push_heap(ev);
    }

    /// `push` of `cpu`'s completion, without building the event to take it apart again.
    #[inline]
    pub fn push_complete(&mut self, time: u64, cpu: usize, gen: u32) {
        let ord = self.next_key(time, COMPLETE_CLASS);
        self.set_complete(cpu, ord, gen);
    }

    /// The key of an event pushed now: time, then class, then insertion order.
    #[inline]
    fn next_key(&mut self, time: u64, class: u8) -> u128 {
        self.seq += 1;
        (time as u128) << 64 | (class as u128) << 58 | self.seq as u128
    }

    #[inline]
    fn push_heap(&mut self, ev: Event) {
        let mut i = self.heap.len();
        self.heap.push(ev);
        while i > 0 {
            let parent = (i - 1) / 2;
            if ev.ord >= self.heap[parent].ord {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = ev;
        self.max_len = self.max_len.max(self.len());
    }

    /// Arm `cpu`'s completion, replacing the one it had.
    #[inline]
    fn set_complete(&mut self, cpu: usize, ord: u128, gen: u32) {
        if cpu >= self.complete.len() {
            self.complete.resize(cpu + 1, (u128::MAX, 0));
        }
        let had = self.complete[cpu].0 != u128::MAX;
        self.complete[cpu] = (ord, gen);
        if !had {
            self.nr_complete += 1;
            self.max_len = self.max_len.max(self.len());
        }
        if self.nr_complete == 1 || ord < self.complete[self.complete_first].0 {
            self.complete_first = cpu;
        } else if cpu == self.complete_first {
            // the first one moved later: another CPU's may come first now
            self.find_first_complete();
        }
    }

    #[inline]
    fn find_first_complete(&mut self) {
        let mut first = 0;
        let mut ord = u128::MAX;
        // branch-free: which CPU completes first is data the branch predictor cannot learn
        for (cpu, &(o, _)) in self.complete.iter().enumerate() {
            let earlier = o < ord;
            ord = if earlier { o } else { ord };
            first = if earlier { cpu } else { first };
        }
        self.complete_first = first;
    }

    /// The key of the first completion (u128::MAX: none).
    #[inline]
    fn first_complete_ord(&self) -> u128 {
        if self.nr_complete == 0 {
            u128::MAX
        } else {
            self.complete[self.complete_first].0
        }
    }

    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        let ord = self
            .heap
            .first()
            .map_or(u128::MAX, |e| e.ord)
            .min(self.first_complete_ord());
        (ord != u128::MAX).then_some((ord >> 64) as u64)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let complete = self.first_complete_ord();
        if complete != u128::MAX && self.heap.first().is_none_or(|e| complete < e.ord) {
            return Some(self.pop_complete(complete));
        }
        self.pop_heap()
    }

    /// `pop` if the first event comes strictly before `t`; otherwise it stays queued.
    /// (`peek_time` then `pop` took the two minima twice.)
    #[inline]
    pub fn pop_before(&mut self, t: u64) -> Option<Event> {
        // an event comes before t if and only if its key is below t's lowest key
        let limit = (t as u128) << 64;
        let complete = self.first_complete_ord();
        let heap = self.heap.first().map_or(u128::MAX, |e| e.ord);
        if complete < heap {
            (complete < limit).then(|| self.pop_complete(complete))
        } else if heap < limit {
            self.pop_heap()
        } else {
            None
        }
    }

    /// Take the first completion, whose key is `ord`.
    #[inline]
    fn pop_complete(&mut self, ord: u128) -> Event {
        let cpu = self.complete_first;
        let gen = self.complete[cpu].1;
        self.complete[cpu].0 = u128::MAX;
        self.nr_complete -= 1;
        if self.nr_complete > 0 {
            self.find_first_complete();
        }
        self.popped += 1;
        self.popped_by_class[COMPLETE_CLASS as usize] += 1;
        Event {
            ord,
            kind: EventKind::Complete { cpu: cpu as u32, gen },
        }
    }

    #[inline]
    fn pop_heap(&mut self) -> Option<Event> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        let top = if n == 0 {
            last
        } else {
            let h = &mut self.heap;
            let top = h[0];
            // the hole at the root goes down along the smaller child to the bottom
            let mut i = 0;
            let mut c = 1;
            while c + 1 < n {
                c += (h[c + 1].ord < h[c].ord) as usize;
                h[i] = h[c];
                i = c;
                c = 2 * i + 1;
            }
            if c < n {
                h[i] = h[c];
                i = c;
            }
            // then the last element rises from there to its place
            while i > 0 {
                let parent = (i - 1) / 2;
                if last.ord >= h[parent].ord {
                    break;
                }
                h[i] = h[parent];
                i = parent;
            }
            h[i] = last;
            top
        };
        self.popped += 1;
        self.popped_by_class[top.kind.class() as usize] += 1;
        Some(top)
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.nr_complete
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The physical limit of this design, for the speed benchmarks: `events` pops from this
/// queue holding `queue_len` events, each pop pushing one event a pseudo-random delay
/// (up to 10 ms) ahead, with nothing simulated. Returns a checksum of the popped times so
/// that the loop cannot be optimised away.
pub fn bare_event_loop(events: u64, queue_len: usize) -> u64 {
    let mut q = EventQueue::default();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % 10_000_000
    };
    for i in 0..queue_len.max(1) {
        q.push(next(), EventKind::Wakeup { task: i as u32 });
    }
    let mut sum: u64 = 0;
    for _ in 0..events {
        let ev = q.pop().expect("the queue never empties");
        let now = ev.time();
        sum = sum.wrapping_add(now);
        q.push(now + next(), ev.kind);
    }
    sum
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
                EventKind::Wakeup { task } => (e.time(), task),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(got, expect);
    }

    #[test]
    fn completions_interleave_with_the_heap_by_key_and_a_rearm_replaces() {
        let mut q = EventQueue::default();
        q.push(30, EventKind::Complete { cpu: 1, gen: 1 });
        q.push(20, EventKind::Tick);
        q.push(10, EventKind::Complete { cpu: 3, gen: 1 });
        // CPU 1 re-armed earlier (it sped up), then CPU 3 re-armed later (it slowed down):
        // each replaces its CPU's pending completion
        q.push(15, EventKind::Complete { cpu: 1, gen: 2 });
        q.push(40, EventKind::Complete { cpu: 3, gen: 2 });
        // a completion and a wakeup at one instant: the completion's class comes first
        q.push(40, EventKind::Wakeup { task: 7 });
        q.push(20, EventKind::Complete { cpu: 0, gen: 5 });
        assert_eq!(q.len(), 5);
        assert_eq!(q.peek_time(), Some(15));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time(), e.kind)).collect();
        assert_eq!(
            order,
            vec![
                (15, EventKind::Complete { cpu: 1, gen: 2 }),
                (20, EventKind::Complete { cpu: 0, gen: 5 }),
                (20, EventKind::Tick),
                (40, EventKind::Complete { cpu: 3, gen: 2 }),
                (40, EventKind::Wakeup { task: 7 }),
            ]
        );
        assert_eq!(q.popped_by_class[1], 3);
        assert_eq!(q.max_len, 5);
        assert!(q.is_empty() && q.peek_time().is_none());
    }

    #[test]
    fn completions_pop_in_key_order_whatever_the_rearms_and_cpu_count() {
        // against a model: every live event's (time, class, sequence) in a sorted set, a
        // re-armed CPU's old completion removed from it
        use std::collections::BTreeSet;
        let mut x: u64 = 7;
        let mut rnd = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let mut q = EventQueue::default();
        let mut model: BTreeSet<(u64, u8, u64, u32)> = BTreeSet::new();
        // each CPU's live completion: (time, sequence, generation)
        let mut live: Vec<Option<(u64, u64, u32)>> = vec![None; 13];
        let (mut seq, mut now) = (0u64, 0u64);
        for step in 0..20_000u32 {
            match rnd(4) {
                0 | 1 => {
                    // CPUs 0..3 first, then 0..13: the slots grow on the way
                    let cpu = rnd(if step < 2_000 { 3 } else { 13 }) as usize;
                    let t = now + rnd(50);
                    seq += 1;
                    if let Some(old) = live[cpu].take() {
                        model.remove(&(old.0, 1, old.1, cpu as u32));
                    }
                    live[cpu] = Some((t, seq, step));
                    model.insert((t, 1, seq, cpu as u32));
                    // the engine's way and the generic one take the same slot
                    if step % 2 == 0 {
                        q.push_complete(t, cpu, step);
                    } else {
                        q.push(
                            t,
                            EventKind::Complete {
                                cpu: cpu as u32,
                                gen: step,
                            },
                        );
                    }
                }
                2 => {
                    let t = now + rnd(50);
                    seq += 1;
                    model.insert((t, 3, seq, step));
                    q.push(t, EventKind::Wakeup { task: step });
                }
                _ => {
                    let got = q.pop();
                    let want = model.pop_first();
                    assert_eq!(got.is_some(), want.is_some(), "step {step}");
                    if let (Some(e), Some((t, class, _, id))) = (got, want) {
                        now = t;
                        assert_eq!(e.time(), t, "step {step}");
                        match e.kind {
                            EventKind::Complete { cpu, gen } => {
                                assert_eq!((class, cpu), (1, id), "step {step}");
                                // the generation of the last arm, not of one it replaced
                                assert_eq!(live[cpu as usize].take().map(|l| l.2), Some(gen), "step {step}");
                            }
                            EventKind::Wakeup { task } => assert_eq!((class, task), (3, id), "step {step}"),
                            _ => unreachable!(),
                        }
                    }
                }
            }
            assert_eq!(q.len(), model.len());
        }
    }

    #[test]
    fn pop_before_takes_only_events_strictly_before_its_bound() {
        let mut q = EventQueue::default();
        q.push(10, EventKind::Tick);
        q.push(10, EventKind::Complete { cpu: 0, gen: 1 });
        q.push(20, EventKind::Complete { cpu: 1, gen: 1 });
        q.push(25, EventKind::Wakeup { task: 3 });
        // nothing before 10: the two events at 10 stay
        assert_eq!(q.pop_before(10), None);
        assert_eq!(q.len(), 4);
        // before 11: the completion first (its class), then the tick
        assert_eq!(
            q.pop_before(11).map(|e| e.kind),
            Some(EventKind::Complete { cpu: 0, gen: 1 })
        );
        assert_eq!(q.pop_before(11).map(|e| e.kind), Some(EventKind::Tick));
        assert_eq!(q.pop_before(11), None);
        // the completion at 20 is before 25, the wakeup at 25 is not
        assert_eq!(q.pop_before(25).map(|e| e.time()), Some(20));
        assert_eq!(q.pop_before(25), None);
        assert_eq!(
            q.pop_before(u64::MAX).map(|e| e.kind),
            Some(EventKind::Wakeup { task: 3 })
        );
        assert!(q.is_empty() && q.pop_before(u64::MAX).is_none());
    }

    #[test]
    fn same_time_orders_by_class_then_sequence() {
        let mut q = EventQueue::default();
        q.push(10, EventKind::Tick);
        q.push(10, EventKind::Wakeup { task: 1 });
        q.push(10, EventKind::Wakeup { task: 0 });
        q.push(5, EventKind::Tick);
        q.push(10, EventKind::FreqCommit { cluster: 0, gen: 0 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time(), e.kind)).collect();
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
