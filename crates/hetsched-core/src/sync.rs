//! The user-space synchronisation objects rt-app programs use (pthread mutexes and
//! condition variables, POSIX semaphores, barriers), as state machines: each operation
//! says whether the calling task goes on or blocks, and which blocked tasks it wakes. The
//! scheduler side (blocking, wakeup placement) is the simulator's.
//!
//! Simplifications, named in docs/workloads.md: a mutex is handed to its first waiter on
//! unlock (FIFO handoff, as a fair futex-based lock or an rt_mutex would do; glibc's
//! default mutex lets a running task barge in instead); a woken condition waiter is moved
//! to the mutex's wait queue when the mutex is held (FUTEX_CMP_REQUEUE's wait morphing).
//! No priority inheritance.
//!
//! Each task's mutex wait is indexed (`waiting_for`), so that a lock that blocks can follow
//! the chain owner -> the mutex it waits for -> its owner ... and see whether it closes a
//! cycle (a deadlock, deadlock.rs), at the cost of the chain's length.

use std::collections::VecDeque;

pub type TaskId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Go {
    On,
    Block,
}

#[derive(Debug, Clone, Default)]
struct Mutex {
    owner: Option<TaskId>,
    waiters: VecDeque<TaskId>,
}

#[derive(Debug, Clone, Default)]
struct Sem {
    count: u64,
    waiters: VecDeque<TaskId>,
}

#[derive(Debug, Clone, Default)]
struct Barrier {
    need: u32,
    waiting: Vec<TaskId>,
}

/// What a blocked task waits for: the object it is queued on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Waits {
    Mutex(u32),
    Cond(u32),
    Sem(u32),
    Barrier(u32),
}

/// `waiting_for`'s "no mutex"
const NO_MUTEX: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct SyncObjects {
    mutexes: Vec<Mutex>,
    /// per task id (grown on demand): the mutex it is queued on, NO_MUTEX if none
    waiting_for: Vec<u32>,
    /// a task whose queueing on a held mutex closed a cycle of mutex waits (lock, or a
    /// condition waiter requeued by a signal); taken by the caller (deadlock.rs)
    pub closed_cycle: Option<TaskId>,
    /// waiters of each condition variable, with the mutex each must retake
    conds: Vec<VecDeque<(TaskId, u32)>>,
    sems: Vec<Sem>,
    barriers: Vec<Barrier>,
    /// unlock of a mutex the task does not hold, wait without holding the mutex
    pub misuse: u64,
}

impl SyncObjects {
    pub fn new(mutexes: usize, conds: usize, sems: &[u64], barriers: &[u32]) -> Self {
        SyncObjects {
            mutexes: vec![Mutex::default(); mutexes],
            conds: vec![VecDeque::new(); conds],
            sems: sems
                .iter()
                .map(|&count| Sem {
                    count,
                    waiters: VecDeque::new(),
                })
                .collect(),
            barriers: barriers
                .iter()
                .map(|&need| Barrier {
                    need,
                    waiting: Vec::new(),
                })
                .collect(),
            misuse: 0,
            waiting_for: Vec::new(),
            closed_cycle: None,
        }
    }

    fn set_waiting_for(&mut self, t: TaskId, m: u32) {
        let i = t as usize;
        if i >= self.waiting_for.len() {
            if m == NO_MUTEX {
                return;
            }
            self.waiting_for.resize(i + 1, NO_MUTEX);
        }
        self.waiting_for[i] = m;
    }

    /// The mutex task `t` is queued on, if any.
    pub fn mutex_waited(&self, t: TaskId) -> Option<u32> {
        self.waiting_for.get(t as usize).copied().filter(|&m| m != NO_MUTEX)
    }

    /// `t` has just queued on mutex `m`: whether the owners' chain (owner of m, the mutex it
    /// waits for, that one's owner, ...) comes back to `t`. Each task waits for one mutex at
    /// most, so the chain has no fork; a chain longer than the waiting tasks has a cycle not
    /// through `t`, which was found when it closed.
    fn closes_cycle(&self, t: TaskId, m: u32) -> bool {
        let mut owner = self.mutexes[m as usize].owner;
        for _ in 0..=self.waiting_for.len() {
            match owner {
                Some(o) if o == t => return true,
                Some(o) => match self.mutex_waited(o) {
                    Some(next) => owner = self.mutexes[next as usize].owner,
                    None => return false,
                },
                None => return false,
            }
        }
        false
    }

    fn queue_on_mutex(&mut self, m: u32, t: TaskId) {
        self.mutexes[m as usize].waiters.push_back(t);
        self.set_waiting_for(t, m);
        if self.closed_cycle.is_none() && self.closes_cycle(t, m) {
            self.closed_cycle = Some(t);
        }
    }

    pub fn lock(&mut self, m: u32, t: TaskId) -> Go {
        let mx = &mut self.mutexes[m as usize];
        match mx.owner {
            None => {
                mx.owner = Some(t);
                Go::On
            }
            Some(_) => {
                // a task relocking its own (non-recursive) mutex deadlocks, as in pthreads:
                // a cycle of one
                self.queue_on_mutex(m, t);
                Go::Block
            }
        }
    }

    pub fn unlock(&mut self, m: u32, t: TaskId, wake: &mut Vec<TaskId>) {
        let mx = &mut self.mutexes[m as usize];
        if mx.owner != Some(t) {
            self.misuse += 1;
            return;
        }
        mx.owner = mx.waiters.pop_front();
        if let Some(w) = mx.owner {
            self.set_waiting_for(w, NO_MUTEX);
            wake.push(w);
        }
    }

    /// pthread_cond_wait(c, m): release m and block on c. Always blocks.
    pub fn wait(&mut self, c: u32, m: u32, t: TaskId, wake: &mut Vec<TaskId>) -> Go {
        if self.mutexes[m as usize].owner == Some(t) {
            self.unlock(m, t, wake);
        } else {
            self.misuse += 1;
        }
        self.conds[c as usize].push_back((t, m));
        Go::Block
    }

    /// pthread_cond_signal (all = false) or _broadcast: each woken waiter retakes its
    /// mutex, or queues on it if it is held.
    pub fn signal(&mut self, c: u32, all: bool, wake: &mut Vec<TaskId>) {
        let n = if all { self.conds[c as usize].len() } else { 1 };
        for _ in 0..n {
            let Some((w, m)) = self.conds[c as usize].pop_front() else {
                break;
            };
            let mx = &mut self.mutexes[m as usize];
            if mx.owner.is_none() {
                mx.owner = Some(w);
                wake.push(w);
            } else {
                self.queue_on_mutex(m, w);
            }
        }
    }

    pub fn sem_post(&mut self, s: u32, wake: &mut Vec<TaskId>) {
        let sem = &mut self.sems[s as usize];
        match sem.waiters.pop_front() {
            Some(w) => wake.push(w),
            None => sem.count += 1,
        }
    }

    pub fn sem_wait(&mut self, s: u32, t: TaskId) -> Go {
        let sem = &mut self.sems[s as usize];
        if sem.count > 0 {
            sem.count -= 1;
            Go::On
        } else {
            sem.waiters.push_back(t);
            Go::Block
        }
    }

    /// The last of `need` arrivals wakes the others and goes on; the barrier resets.
    pub fn barrier(&mut self, b: u32, t: TaskId, wake: &mut Vec<TaskId>) -> Go {
        let br = &mut self.barriers[b as usize];
        if br.waiting.len() as u32 + 1 >= br.need {
            wake.append(&mut br.waiting);
            Go::On
        } else {
            br.waiting.push(t);
            Go::Block
        }
    }

    pub fn sem_count(&self, s: u32) -> u64 {
        self.sems[s as usize].count
    }

    pub fn mutex_owner(&self, m: u32) -> Option<TaskId> {
        self.mutexes[m as usize].owner
    }

    /// The mutexes `t` holds, in id order (a scan of every mutex: for a report).
    pub fn mutexes_held(&self, t: TaskId) -> Vec<u32> {
        (0..self.mutexes.len() as u32)
            .filter(|&m| self.mutexes[m as usize].owner == Some(t))
            .collect()
    }

    /// Every queued task and what it waits for (a scan of every object: for a report).
    pub fn waiters(&self) -> Vec<(TaskId, Waits)> {
        let mut out = Vec::new();
        for (m, mx) in self.mutexes.iter().enumerate() {
            out.extend(mx.waiters.iter().map(|&t| (t, Waits::Mutex(m as u32))));
        }
        for (c, q) in self.conds.iter().enumerate() {
            out.extend(q.iter().map(|&(t, _)| (t, Waits::Cond(c as u32))));
        }
        for (s, sem) in self.sems.iter().enumerate() {
            out.extend(sem.waiters.iter().map(|&t| (t, Waits::Sem(s as u32))));
        }
        for (b, br) in self.barriers.iter().enumerate() {
            out.extend(br.waiting.iter().map(|&t| (t, Waits::Barrier(b as u32))));
        }
        out
    }

    /// Barrier `b`'s arrivals so far and the number it needs.
    pub fn barrier_arrivals(&self, b: u32) -> (u32, u32) {
        let br = &self.barriers[b as usize];
        (br.waiting.len() as u32, br.need)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutex_hands_over_in_fifo_order() {
        let mut s = SyncObjects::new(1, 0, &[], &[]);
        let mut w = Vec::new();
        assert_eq!(s.lock(0, 1), Go::On);
        assert_eq!(s.lock(0, 2), Go::Block);
        assert_eq!(s.lock(0, 3), Go::Block);
        s.unlock(0, 1, &mut w);
        assert_eq!((w.as_slice(), s.mutex_owner(0)), (&[2][..], Some(2)));
        s.unlock(0, 1, &mut w); // not the owner
        assert_eq!(s.misuse, 1);
        s.unlock(0, 2, &mut w);
        assert_eq!((w.as_slice(), s.mutex_owner(0)), (&[2, 3][..], Some(3)));
    }

    #[test]
    fn cond_signal_requeues_on_a_held_mutex() {
        let mut s = SyncObjects::new(1, 1, &[], &[]);
        let mut w = Vec::new();
        s.lock(0, 1);
        assert_eq!(s.wait(0, 0, 1, &mut w), Go::Block);
        assert_eq!(s.mutex_owner(0), None);
        s.lock(0, 2);
        s.signal(0, false, &mut w);
        assert!(w.is_empty(), "the waiter waits for the mutex, not the CPU");
        s.unlock(0, 2, &mut w);
        assert_eq!((w.as_slice(), s.mutex_owner(0)), (&[1][..], Some(1)));
        // a signal with no waiter is lost
        let mut w = Vec::new();
        s.signal(0, true, &mut w);
        assert!(w.is_empty());
    }

    #[test]
    fn semaphore_remembers_posts_and_barrier_releases_together() {
        let mut s = SyncObjects::new(0, 0, &[1], &[3]);
        let mut w = Vec::new();
        assert_eq!(s.sem_wait(0, 1), Go::On);
        assert_eq!(s.sem_wait(0, 1), Go::Block);
        s.sem_post(0, &mut w);
        s.sem_post(0, &mut w);
        assert_eq!((w.as_slice(), s.sem_count(0)), (&[1][..], 1));
        let mut w = Vec::new();
        assert_eq!(s.barrier(0, 5, &mut w), Go::Block);
        assert_eq!(s.barrier(0, 6, &mut w), Go::Block);
        assert_eq!(s.barrier(0, 7, &mut w), Go::On);
        assert_eq!(w, vec![5, 6]);
        assert_eq!(s.barrier(0, 5, &mut w), Go::Block, "the barrier resets");
    }
}
