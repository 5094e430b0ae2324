import hetsched


class P(hetsched.Policy):
    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        raise KeyboardInterrupt
