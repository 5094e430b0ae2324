//! The HMP tracked load of the big.LITTLE MP patches (`se->avg.load_avg_ratio`): every
//! task's runnable time as a load-tracked average in wall-clock time, not scaled by
//! capacity or frequency. GTS places by it (policies/gts.rs) and hps counts heavy tasks
//! by it (extensions/hotplug.rs); it is kept only when one of them runs.
use crate::core::*;
use crate::pelt::SchedAvg;

impl Sim {
    /// The HMP tracked load of `t` up to now; `on_rq`: the task was runnable (running or
    /// queued) since its last update. Wall-clock time: neither capacity nor frequency
    /// scale it (the big.LITTLE MP patches' load_avg_ratio).
    pub(crate) fn hmp_track(&mut self, t: TaskId, on_rq: bool) {
        if self.hmp_load.is_empty() {
            return;
        }
        if self.hmp_load.len() <= t as usize {
            self.hmp_load.resize(self.tasks.len(), SchedAvg::default());
        }
        let r = on_rq as u64;
        self.hmp_load[t as usize].update(self.now, r, r, on_rq, 1);
    }

    /// A new task's tracked load starts at the maximum (the HMP patches' forkboost).
    pub(crate) fn hmp_init_new(&mut self, t: TaskId) {
        if self.hmp_load.len() <= t as usize {
            self.hmp_load.resize(self.tasks.len(), SchedAvg::default());
        }
        let a = &mut self.hmp_load[t as usize];
        *a = SchedAvg::default();
        let div = a.pelt_divider() as u64;
        a.last_update_time = self.now;
        a.load_sum = div;
        a.runnable_sum = div << 10;
        a.util_sum = div << 10;
        a.load_avg = 1;
        a.runnable_avg = 1024;
        a.util_avg = 1024;
    }
}
