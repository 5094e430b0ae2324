//! The energy lower bound's record (python/hetsched/lower_bound.py solves it): at each
//! window boundary, the work, memrun work and runtime each task did in the window.
use crate::core::*;

impl Sim {
    /// Close a lower-bound window at a tick (every running task's work is accounted up to
    /// now): the work, memrun work and runtime ns each task did since the last boundary.
    pub(crate) fn lb_record(&mut self) {
        if self.now == 0 {
            return;
        }
        let w = self.lb_ends.len() as u32;
        self.lb_last.resize(self.tasks.len(), [0; 3]);
        for (i, t) in self.tasks.iter().enumerate() {
            let s = &t.stats;
            let cur = [s.work_done - s.memrun_done, s.memrun_done, s.runtime_busy_ns];
            let last = &mut self.lb_last[i];
            if cur != *last {
                self.lb_rows
                    .push((w, i as u32, cur[0] - last[0], cur[1] - last[1], cur[2] - last[2]));
                *last = cur;
            }
        }
        self.lb_ends.push(self.now);
    }
}
