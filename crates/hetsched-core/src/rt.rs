//! The RT class's runqueue, after kernel/sched/rt.c (v6.12): SCHED_FIFO and SCHED_RR
//! tasks by priority, FIFO within a priority; the running RT task stays queued (as in the
//! kernel's rt_prio_array), an RR task whose slice ran out goes to the tail of its list
//! (`requeue_task_rt`). The placement of RT wakeups (a cpupri-style lowest-priority search)
//! is in placement.rs; RT load reaches schedutil through `rq->avg_rt` (pelt.rs) and the
//! runnable test (`effective_cpu_util`).
//!
//! Not modelled: push/pull between CPUs after placement, RT throttling (950 ms per 1 s),
//! capacity fitness (`rt_task_fits_capacity`), SCHED_DEADLINE.

use crate::sorted_vec::SortedVec;

/// Key: (-(1 + rt_priority), sequence, task): the highest priority first, then FIFO.
pub type RtKey = (i64, u64, u32);

#[derive(Debug, Clone, Default)]
pub struct RtRq {
    queue: SortedVec<RtKey>,
}

impl RtRq {
    /// enqueue_task_rt(): at the tail of its priority's list (`seq` increases).
    pub fn enqueue(&mut self, t: u32, prio_level: u32, seq: u64) {
        self.queue.insert((-(prio_level as i64), seq, t));
    }

    pub fn dequeue(&mut self, t: u32) {
        self.queue.retain(|&(_, _, x)| x != t);
    }

    /// requeue_task_rt(): to the tail of its priority's list.
    pub fn requeue_tail(&mut self, t: u32, prio_level: u32, seq: u64) {
        self.dequeue(t);
        self.enqueue(t, prio_level, seq);
    }

    /// pick_next_rt_entity(): the first task of the highest non-empty priority.
    pub fn pick(&self) -> Option<u32> {
        self.queue.first().map(|&(_, _, t)| t)
    }

    /// The cpupri level of the highest queued priority (1 + rt_priority), if any.
    pub fn highest_level(&self) -> Option<u32> {
        self.queue.first().map(|&(neg, _, _)| (-neg) as u32)
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn first(&self) -> Option<&RtKey> {
        self.queue.first()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, RtKey> {
        self.queue.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_then_fifo_and_rr_rotation() {
        let mut rq = RtRq::default();
        rq.enqueue(1, 11, 1); // rt_priority 10
        rq.enqueue(2, 51, 2); // rt_priority 50
        rq.enqueue(3, 51, 3);
        assert_eq!(rq.pick(), Some(2));
        assert_eq!(rq.highest_level(), Some(51));
        rq.requeue_tail(2, 51, 4); // RR slice expired
        assert_eq!(rq.pick(), Some(3));
        rq.dequeue(3);
        rq.dequeue(2);
        assert_eq!(rq.pick(), Some(1));
        assert_eq!(rq.len(), 1);
    }
}
