//! Deadlocks among a workload's tasks, found when they form and reported instead of run
//! on. The kernel has no such check for user-space locks (lockdep watches the kernel's own
//! locks): a phone whose threads deadlock on pthread mutexes or semaphores just hangs. The
//! simulator says so, and stops the run at that instant with `Sim::deadlock` set, which the
//! result reports (`deadlock` in result.json) and the Python side turns into
//! `stop_reason: "deadlock"`.
//!
//! Two ways in, both off the hot path:
//!
//! - **A cycle of mutex waits**: a task queues on a held mutex (a lock, or a condition
//!   waiter requeued by a signal) and the chain owner -> the mutex it waits for -> its
//!   owner ... comes back to it (sync.rs `closes_cycle`, the chain's length). No task in
//!   the cycle can ever unlock: a deadlock whatever the rest of the workload does. The run
//!   stops, until every task ends or for a duration alike.
//! - **Every task blocked**: each task that would end the run (daemons aside), or each task
//!   at all, is queued on a synchronisation object (two counters compared when a task blocks
//!   on one and when a task exits). Only another task's program can wake a task so queued
//!   (no timer, no event), so the question is which queued tasks some task that may still
//!   run could release: a fixpoint from the tasks not queued (running, runnable, asleep on
//!   a timer, not started), each releasing what its program or a task it forks ever posts,
//!   signals or meets at a barrier, and a mutex's waiters when its owner may run. The tasks
//!   left are blocked for good. Among them, those that wait for one another in a cycle (a
//!   task waits for an object that only another of them could release) are deadlocked, and
//!   the run stops; those that wait for tasks that have exited (a consumer whose producer
//!   has ended) stop only a run until every task ends, which could never end. In a run of a
//!   given duration they are left blocked, as rt-app leaves them until it ends its threads
//!   at its duration.
//!
//! Blind spots: a cycle of semaphore, condition or barrier waits among some tasks while
//! others still run is found only once those others have ended or blocked too; the
//! releasers are read from the programs without their order, so a task whose program posts
//! a semaphore only in a phase already past still counts as one (blocked tasks are then
//! taken to be free, never the reverse).

use crate::core::{Sim, TaskId, TaskState};
use crate::sync::Waits;
use crate::workload::Ev;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// How the deadlock was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// a task's mutex wait closed a cycle of mutex waits
    MutexCycle,
    /// every task that would end the run (or every task) was queued on an object
    AllBlocked,
}

/// One task blocked for good.
#[derive(Debug, Clone)]
pub struct Stuck {
    pub task: TaskId,
    pub waits: Waits,
    /// the blocked tasks it waits for: the owner of its mutex, or those whose programs
    /// could release its object (none: only tasks that have exited could)
    pub by: Vec<TaskId>,
    /// the event it blocked at: `tasks[i].phases[j].events[k]` of the workload
    pub field: String,
}

#[derive(Debug, Clone)]
pub struct Deadlock {
    pub at_ns: u64,
    pub found: Found,
    /// the tasks wait for one another in a cycle (else they wait for tasks that exited)
    pub cycle: bool,
    pub tasks: Vec<Stuck>,
}

impl Sim {
    /// Block `t` on the synchronisation object its program just queued it on (sync.rs),
    /// counted for the check that every task is blocked.
    pub(crate) fn block_wait(&mut self, cpu: usize, t: TaskId) {
        self.block_sync(cpu, t);
        let task = &mut self.tasks[t as usize];
        task.sync_blocked = true;
        self.nr_sync_blocked += 1;
        if !task.spec.daemon {
            self.nr_sync_blocked_workers += 1;
        }
        // a lock that blocked may have closed a cycle of mutex waits
        self.check_mutex_cycle();
        self.check_blocked();
    }

    /// `t`, queued on an object, is being woken (try_to_wake_up()).
    #[inline]
    pub(crate) fn sync_unblocked(&mut self, t: TaskId) {
        let task = &mut self.tasks[t as usize];
        if task.sync_blocked {
            task.sync_blocked = false;
            self.nr_sync_blocked -= 1;
            if !task.spec.daemon {
                self.nr_sync_blocked_workers -= 1;
            }
        }
    }

    /// After a mutex wait began (a lock that blocked, a signal that requeued a waiter):
    /// stop the run if it closed a cycle (sync.rs notes it).
    #[inline]
    pub(crate) fn check_mutex_cycle(&mut self) {
        if self.sync.closed_cycle.take().is_some() && self.deadlock.is_none() {
            self.deadlock = self.find_deadlock(Found::MutexCycle).map(Box::new);
        }
    }

    /// Every task that would end the run (or every task) queued on an object.
    fn all_blocked(&self) -> bool {
        (self.nr_to_exit > 0 && self.nr_sync_blocked_workers == self.nr_to_exit)
            || (self.nr_alive > 0 && self.nr_sync_blocked == self.nr_alive)
    }

    /// When a task blocked on an object or exited: if every task is blocked, whether any is
    /// blocked for good, and whether that stops the run (module doc).
    pub(crate) fn check_blocked(&mut self) {
        if self.deadlock.is_some() || self.nr_sync_blocked == 0 || !self.all_blocked() {
            return;
        }
        if let Some(d) = self.find_deadlock(Found::AllBlocked) {
            if d.cycle || self.until_exit {
                self.deadlock = Some(Box::new(d));
            }
        }
    }

    /// What the program of spec `si` (and of every template it forks, transitively) ever
    /// posts, signals or meets at: the objects a task running it may release.
    fn releases(&self, si: usize, memo: &mut [Option<BTreeSet<Waits>>]) -> BTreeSet<Waits> {
        if let Some(r) = &memo[si] {
            return r.clone();
        }
        let mut out = BTreeSet::new();
        let mut seen = vec![si];
        let mut todo = vec![si];
        while let Some(s) = todo.pop() {
            for ev in self.tasks[s].spec.phases.iter().flat_map(|p| &p.events) {
                match *ev {
                    Ev::SemPost(x) | Ev::SemPostSync(x) => {
                        out.insert(Waits::Sem(x));
                    }
                    Ev::Signal(c) | Ev::Broad(c) => {
                        out.insert(Waits::Cond(c));
                    }
                    Ev::Sync(c) => {
                        out.insert(Waits::Cond(c.cond));
                    }
                    Ev::Barrier(b) => {
                        out.insert(Waits::Barrier(b));
                    }
                    Ev::Fork(k) if !seen.contains(&(k as usize)) => {
                        seen.push(k as usize);
                        todo.push(k as usize);
                    }
                    _ => {}
                }
            }
        }
        memo[si] = Some(out.clone());
        out
    }

    /// The tasks blocked for good now, if any (module doc): those in or waiting into a
    /// cycle, else those waiting for tasks that have exited.
    pub(crate) fn find_deadlock(&self, found: Found) -> Option<Deadlock> {
        let n = self.tasks.len();
        let mut memo = vec![None; n];
        let alive = |t: &crate::core::Task| !matches!(t.state, TaskState::Exited | TaskState::Template);
        let mut free: Vec<bool> = self.tasks.iter().map(|t| alive(t) && !t.sync_blocked).collect();
        let mut released = BTreeSet::new();
        for t in (0..n).filter(|&t| free[t]) {
            released.extend(self.releases(self.tasks[t].spec_index as usize, &mut memo));
        }
        let mut stuck: Vec<(TaskId, Waits)> = self.sync.waiters();
        stuck.sort_unstable();
        loop {
            let before = stuck.len();
            let mut i = 0;
            while i < stuck.len() {
                let (t, w) = stuck[i];
                let can = match w {
                    Waits::Mutex(m) => self.sync.mutex_owner(m).is_some_and(|o| free[o as usize]),
                    other => released.contains(&other),
                };
                if can {
                    free[t as usize] = true;
                    released.extend(self.releases(self.tasks[t as usize].spec_index as usize, &mut memo));
                    stuck.remove(i);
                } else {
                    i += 1;
                }
            }
            if stuck.len() == before {
                break;
            }
        }
        if stuck.is_empty() {
            return None;
        }
        // who each waits for among the stuck: a task cannot release what it waits for
        // itself, nor a barrier it waits at
        let rel: Vec<BTreeSet<Waits>> = stuck
            .iter()
            .map(|&(u, _)| self.releases(self.tasks[u as usize].spec_index as usize, &mut memo))
            .collect();
        let mut by: Vec<Vec<TaskId>> = stuck
            .iter()
            .map(|&(t, w)| match w {
                Waits::Mutex(m) => {
                    let owner = self.sync.mutex_owner(m);
                    owner
                        .filter(|&o| stuck.iter().any(|&(u, _)| u == o))
                        .into_iter()
                        .collect()
                }
                other => stuck
                    .iter()
                    .zip(&rel)
                    .filter(|&(&(u, uw), r)| {
                        u != t && !(matches!(other, Waits::Barrier(_)) && uw == other) && r.contains(&other)
                    })
                    .map(|(&(u, _), _)| u)
                    .collect(),
            })
            .collect();
        // peel off the tasks that wait for none of those left: what remains is in a cycle
        // or waits for one
        let ids_left = |left: &[bool]| -> BTreeSet<TaskId> {
            stuck
                .iter()
                .zip(left)
                .filter(|(_, &l)| l)
                .map(|(&(t, _), _)| t)
                .collect()
        };
        let mut left = vec![true; stuck.len()];
        loop {
            let ids = ids_left(&left);
            let mut changed = false;
            for (i, l) in left.iter_mut().enumerate() {
                if *l && !by[i].iter().any(|u| ids.contains(u)) {
                    *l = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let cycle = left.iter().any(|&l| l);
        if cycle {
            let ids = ids_left(&left);
            for b in by.iter_mut() {
                b.retain(|u| ids.contains(u));
            }
        }
        let tasks = stuck
            .iter()
            .zip(by)
            .zip(&left)
            .filter(|(_, &l)| l || !cycle)
            .map(|((&(t, w), by), _)| {
                let task = &self.tasks[t as usize];
                Stuck {
                    task: t,
                    waits: w,
                    by,
                    field: format!(
                        "tasks[{}].phases[{}].events[{}]",
                        task.spec_index,
                        task.phase,
                        task.ev.saturating_sub(1)
                    ),
                }
            })
            .collect();
        Some(Deadlock {
            at_ns: self.now,
            found,
            cycle,
            tasks,
        })
    }

    /// result.json's `deadlock`: when, how found, and each task with the object it waits
    /// for (kind and id: the Python side names them), the tasks it waits for and the
    /// mutexes it holds.
    pub(crate) fn deadlock_doc(&self) -> Option<Value> {
        let d = self.deadlock.as_deref()?;
        let tasks: Vec<Value> = d
            .tasks
            .iter()
            .map(|s| {
                let (kind, id) = match s.waits {
                    Waits::Mutex(m) => ("mutex", m),
                    Waits::Cond(c) => ("cond", c),
                    Waits::Sem(x) => ("sem", x),
                    Waits::Barrier(b) => ("barrier", b),
                };
                let mut waits = json!({"kind": kind, "id": id});
                if let Waits::Barrier(b) = s.waits {
                    let (arrived, need) = self.sync.barrier_arrivals(b);
                    waits["arrived"] = json!(arrived);
                    waits["need"] = json!(need);
                }
                json!({
                    "task": s.task,
                    "name": self.tasks[s.task as usize].name,
                    "waits_for": waits,
                    "by": s.by.iter().map(|&u| self.tasks[u as usize].name.as_str()).collect::<Vec<_>>(),
                    "holds": self.sync.mutexes_held(s.task),
                    "field": s.field,
                })
            })
            .collect();
        Some(json!({
            "time_ns": d.at_ns,
            "found": match d.found {
                Found::MutexCycle => "mutex cycle",
                Found::AllBlocked => "all blocked",
            },
            "cycle": d.cycle,
            "tasks": tasks,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutils::{costs_off, two_cluster_platform};
    use serde_json::json;

    /// A simulation of `tasks` (one phase each, `loop` 1 unless given) with the given
    /// object counts, under cfs.
    fn sim(tasks: Vec<Value>, mutexes: usize, conds: usize, sems: Vec<u64>, barriers: Vec<u32>) -> Sim {
        let w = json!({"name": "t", "duration_ns": null, "timers": 1, "mutexes": mutexes, "conds": conds,
                       "sems": sems, "barriers": barriers, "tasks": tasks});
        let pol: crate::PolicyConfig =
            costs_off(serde_json::from_value(json!({"scheduler": "cfs", "governor": "schedutil"})).unwrap());
        let spec = crate::workload::WorkloadSpec::from_json(&w.to_string()).unwrap();
        Sim::new(two_cluster_platform(), spec, pol).unwrap()
    }

    fn task(name: &str, events: Value) -> Value {
        json!({"name": name, "loop": 1, "phases": [{"loop": 1, "events": events}]})
    }

    fn waits(d: &Deadlock) -> Vec<(TaskId, Waits, Vec<TaskId>)> {
        d.tasks.iter().map(|s| (s.task, s.waits, s.by.clone())).collect()
    }

    /// A locks m0 then m1, B m1 then m0, each running 1 ms in between: at 1 ms each
    /// waits for the other's mutex. The run stops there instead of running to its limit.
    #[test]
    fn abba_stops_at_the_cycle() {
        let mut s = sim(
            vec![
                task(
                    "A",
                    json!([{"lock": 0}, {"run": 1_000_000}, {"lock": 1}, {"unlock": 1}, {"unlock": 0}]),
                ),
                task(
                    "B",
                    json!([{"lock": 1}, {"run": 1_000_000}, {"lock": 0}, {"unlock": 0}, {"unlock": 1}]),
                ),
            ],
            2,
            0,
            vec![],
            vec![],
        );
        assert!(!s.run_until_exited(3_600_000_000_000));
        let d = s.deadlock.as_deref().expect("a deadlock");
        assert_eq!((d.found, d.cycle), (Found::MutexCycle, true));
        assert!(d.at_ns >= 1_000_000 && d.at_ns < 2_000_000, "{}", d.at_ns);
        assert_eq!(s.now, d.at_ns, "the clock stays where the deadlock formed");
        assert_eq!(
            waits(d),
            vec![(0, Waits::Mutex(1), vec![1]), (1, Waits::Mutex(0), vec![0])]
        );
        assert_eq!(d.tasks[0].field, "tasks[0].phases[0].events[2]");
        let doc = s.result();
        assert_eq!(doc["deadlock"]["found"], "mutex cycle");
        assert_eq!(doc["deadlock"]["tasks"][0]["holds"], json!([0]));
        // later calls run nothing
        let at = d.at_ns;
        s.run_until(10_000_000_000);
        assert_eq!(s.now, at);
    }

    /// Relocking a mutex one holds is a cycle of one (a default pthread mutex hangs).
    #[test]
    fn a_relock_is_a_cycle_of_one() {
        let mut s = sim(vec![task("A", json!([{"lock": 0}, {"lock": 0}]))], 1, 0, vec![], vec![]);
        s.run_until(1_000_000_000);
        let d = s.deadlock.as_deref().expect("a deadlock");
        assert_eq!(waits(d), vec![(0, Waits::Mutex(0), vec![0])]);
    }

    /// W holds m1 and waits on c with m0; O takes m0 and blocks on m1 (W is on the
    /// condition, not a mutex: no cycle yet); S's signal requeues W on m0, held by O,
    /// which closes the cycle W -> m0 -> O -> m1 -> W while S still runs.
    #[test]
    fn a_requeue_on_a_held_mutex_can_close_a_cycle() {
        let mut s = sim(
            vec![
                task(
                    "W",
                    json!([{"lock": 1}, {"lock": 0}, {"wait": {"cond": 0, "mutex": 0}}, {"unlock": 0}, {"unlock": 1}]),
                ),
                task(
                    "O",
                    json!([{"sleep": 500_000}, {"lock": 0}, {"lock": 1}, {"unlock": 1}, {"unlock": 0}]),
                ),
                task("S", json!([{"sleep": 2_000_000}, {"signal": 0}, {"run": 1_000_000}])),
            ],
            2,
            1,
            vec![],
            vec![],
        );
        s.run_until(10_000_000);
        let d = s.deadlock.as_deref().expect("a deadlock");
        assert_eq!(d.found, Found::MutexCycle);
        assert!(d.at_ns >= 2_000_000, "{}", d.at_ns);
        assert_eq!(
            s.tasks[2].state,
            TaskState::Running,
            "found at the signal, not when S is done"
        );
        assert_eq!(
            waits(d),
            vec![(0, Waits::Mutex(0), vec![1]), (1, Waits::Mutex(1), vec![0])]
        );
    }

    /// Semaphores have no owner: A waits for s0, which only B posts, and B for s1, which
    /// only A posts. Once both wait, the fixpoint finds the cycle; it stops a run of a
    /// given duration too.
    #[test]
    fn a_cycle_of_semaphores_stops_any_run() {
        let mut s = sim(
            vec![
                task("A", json!([{"run": 100_000}, {"sem_wait": 0}, {"sem_post": 1}])),
                task("B", json!([{"run": 200_000}, {"sem_wait": 1}, {"sem_post": 0}])),
            ],
            0,
            0,
            vec![0, 0],
            vec![],
        );
        s.run_until(1_000_000_000);
        let d = s.deadlock.as_deref().expect("a deadlock");
        assert_eq!((d.found, d.cycle), (Found::AllBlocked, true));
        assert_eq!(waits(d), vec![(0, Waits::Sem(0), vec![1]), (1, Waits::Sem(1), vec![0])]);
    }

    /// The consumer waits twice, the producer posts once and exits: the consumer is
    /// blocked for good, waiting for no one alive. A run until every task ends stops there
    /// (it could never end); a run of a given duration goes on, as rt-app would until its
    /// duration, and its result has no deadlock.
    #[test]
    fn a_wait_on_an_exited_task_stops_only_a_run_until_exit() {
        let tasks = || {
            vec![
                task("producer", json!([{"run": 100_000}, {"sem_post": 0}])),
                json!({"name": "consumer", "loop": 2, "phases": [{"loop": 1, "events": [{"sem_wait": 0}, {"run": 50_000}]}]}),
            ]
        };
        let mut until_exit = sim(tasks(), 0, 0, vec![0], vec![]);
        assert!(!until_exit.run_until_exited(3_600_000_000_000));
        let d = until_exit.deadlock.as_deref().expect("blocked for good");
        assert_eq!((d.found, d.cycle), (Found::AllBlocked, false));
        assert_eq!(waits(d), vec![(1, Waits::Sem(0), vec![])]);
        assert!(until_exit.now < 1_000_000);

        let mut timed = sim(tasks(), 0, 0, vec![0], vec![]);
        timed.run_until(1_000_000_000);
        assert!(timed.deadlock.is_none());
        assert_eq!(timed.now, 1_000_000_000);
        assert!(timed.result().get("deadlock").is_none());
    }

    /// A barrier for three met by two tasks: neither can be the third arrival while it
    /// waits there, so they wait for no one alive (no cycle).
    #[test]
    fn co_waiters_at_a_barrier_are_not_a_cycle() {
        let mut s = sim(
            vec![
                task("A", json!([{"barrier": 0}])),
                task("B", json!([{"run": 10_000}, {"barrier": 0}])),
            ],
            0,
            0,
            vec![],
            vec![3],
        );
        s.run_until(1_000_000_000);
        assert!(s.deadlock.is_none());
        assert!(!s.run_until_exited(3_600_000_000_000));
        let d = s.deadlock.as_deref().expect("blocked for good");
        assert!(!d.cycle);
        assert_eq!(
            s.result()["deadlock"]["tasks"][0]["waits_for"],
            json!({"kind": "barrier", "id": 0, "arrived": 2, "need": 3})
        );
    }

    /// A daemon on a timer posts what the worker waits for: all workers blocked is no
    /// deadlock while a task that may run can release them, and the run ends normally.
    #[test]
    fn a_task_asleep_on_a_timer_can_release() {
        let mut daemon = task("tick", json!([{"sleep": 1_000_000}, {"sem_post": 0}]));
        daemon["loop"] = json!(-1);
        daemon["daemon"] = json!(true);
        let worker =
            json!({"name": "w", "loop": 3, "phases": [{"loop": 1, "events": [{"sem_wait": 0}, {"run": 10_000}]}]});
        let mut s = sim(vec![daemon, worker], 0, 0, vec![0], vec![]);
        assert!(s.run_until_exited(3_600_000_000_000));
        assert!(s.deadlock.is_none());
        assert!(s.now >= 3_000_000 && s.now < 4_000_000, "{}", s.now);
    }
}
