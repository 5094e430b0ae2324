"""The scheduling group each thread of an Android trace was in, from what the trace says
about its process (name, oom_score_adj) and the thread's name.

Android puts every thread in a group that the kernel's Android scheduling code reads: on
the 4.14 kernels a schedtune boost group (/dev/stune), on the Pixel's 5.10 kernels the
vendor scheduler's group (sched_pixel's ``vendor_sched``), which the device's
task_profiles.json writes instead of the cpu cgroup. The engine names them as schedtune
did (a task's ``stune``): ``top-app``, ``foreground``, ``background``, ``rt`` and the
root group (``root``: the Pixel's ``sys``). What chooses a thread's group, as Android 13
does it (docs/traces.md, "Android's scheduling groups", has the sources):

* **apps** (ActivityManager's OomAdjuster, by the process's state, which it writes beside
  its oom_score_adj): the top app (0) is in top-app; another process at 0 (one running a
  broadcast or a service for the foreground), a visible (100) or perceptible (200) one and
  the persistent ones (-800, -700: System UI, the phone process) in foreground; from 300
  on (backup, services, home, previous, cached) in background. Approximate: the
  oom_score_adj alone does not tell a background broadcast at 0 (background) or a launcher
  running the launch's remote animation (top-app) from the rest;
* **system_server** (-900): foreground, the group zygote forks it in, except the threads the
  display and window managers move to top-app (``android.ui``, ``android.display``,
  ``android.anim``, ``android.anim.lf``);
* **native daemons** (-1000, started by init): their .rc's task profiles. Foreground
  (HighPerformance): SurfaceFlinger's threads (its RenderEngine thread in rt; its main
  thread SCHED_FIFO, in the Pixel's ``sf`` group, which has no counterpart here, as are the
  threads it starts after taking that group: counted with its binder threads here), the audio
  server and HAL, the media servers. Top-app (MaxPerformance): zygote, the camera server
  and providers. The rest (ServiceCapacityLow moves only their cpuset, or nothing) stay in
  the root group, as do kernel threads and every thread whose process the trace does not
  name.

Each thread's cpuset (the CPUs it may run on) comes beside its group, for apps and
system_server with it, for a native daemon from its .rc's cpuset profile
(:func:`thread_cpuset`); the CPUs of each cpuset are the device's (:data:`DEVICE_CPUSETS`,
gs101's so far).

Simplified: the Pixel's ``sysbg``, ``sf``, ``cam`` and ``nnapi`` vendor groups are not
told apart (sysbg and sf count as root, cam as top-app); a process's state is the one the
trace's process snapshot gives, for the whole trace; surfaceflinger's threads created
after its main thread moved to system-background are taken to stay in the root cpuset as
its binder threads do.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["thread_group", "thread_groups", "thread_cpuset", "thread_cpusets", "cpuset_cpus", "DEVICE_CPUSETS"]

#: ActivityManager's oom_score_adj levels (ProcessList.java)
NATIVE_ADJ = -1000
SYSTEM_ADJ = -900
FOREGROUND_APP_ADJ = 0
BACKUP_APP_ADJ = 300

#: system_server's threads that DisplayManagerService and the UI thread move to top-app
SYSTEM_SERVER_TOP_APP_THREADS = ("android.ui", "android.display", "android.anim", "android.anim.lf")
#: native processes whose .rc gives HighPerformance (vendor group fg)
FOREGROUND_DAEMONS = ("surfaceflinger", "audioserver", "android.hardware.audio.service", "mediaserver",
                      "media.metrics", "media.tuner")
#: native processes whose .rc gives MaxPerformance (top-app; the camera's own vendor group)
TOP_APP_DAEMONS = ("zygote64", "zygote", "cameraserver")
TOP_APP_DAEMON_PREFIXES = ("android.hardware.camera.provider",)


def thread_group(process: str, oom_score_adj: Optional[int], thread: str, is_main: bool,
                 top_app: Optional[str] = None) -> str:
    """The group of one thread: its process's name and oom_score_adj (None: not in the
    trace), its own name, whether it is the process's main thread, and the name of the
    process in front (the top app), if known."""
    if oom_score_adj is None:
        return "root"
    if oom_score_adj <= NATIVE_ADJ:
        if process == "surfaceflinger":
            if thread == "RenderEngine":
                return "rt"
            return "root" if is_main else "foreground"
        if process in FOREGROUND_DAEMONS:
            return "foreground"
        if process in TOP_APP_DAEMONS or process.startswith(TOP_APP_DAEMON_PREFIXES):
            return "top-app"
        return "root"
    if oom_score_adj <= SYSTEM_ADJ:
        return "top-app" if thread in SYSTEM_SERVER_TOP_APP_THREADS else "foreground"
    if oom_score_adj == FOREGROUND_APP_ADJ and top_app is not None and process == top_app:
        return "top-app"
    if oom_score_adj < BACKUP_APP_ADJ:
        return "foreground"
    return "background"


#: cpusets: system_server's threads that DisplayManagerService moves with their cpuset
#: (setThreadGroupAndCpuset); android.ui's move is of its group only
SYSTEM_SERVER_TOP_APP_CPUSET_THREADS = ("android.display", "android.anim", "android.anim.lf")
#: native processes whose .rc gives ProcessCapacityHigh (the foreground cpuset)
FOREGROUND_CPUSET_DAEMONS = ("audioserver", "android.hardware.audio.service", "mediaserver", "media.metrics",
                             "media.tuner", "media.swcodec", "zygote64", "zygote")
#: native processes whose .rc gives ServiceCapacityLow (the system-background cpuset)
SYSTEM_BACKGROUND_DAEMONS = ("logd", "statsd", "lmkd", "servicemanager", "vndservicemanager", "hwservicemanager",
                             "traced", "traced_probes", "tombstoned", "gatekeeperd", "storaged", "llkd")
SYSTEM_BACKGROUND_DAEMON_PREFIXES = ("android.hardware.sensors", "android.hardware.graphics.composer")

#: The cpusets a device's init writes once boot has completed (CPUs of each), by platform.
#: gs101: init.gs101.rc (LineageOS/android_device_google_gs101 lineage-20, commit 97f25ec1,
#: conf/init.gs101.rc, the sys.boot_completed trigger), as Google's Android 13 builds ship it
DEVICE_CPUSETS: dict = {
    "gs101": {"top-app": (0, 1, 2, 3, 4, 5, 6, 7), "foreground": (0, 1, 2, 3, 4, 5), "background": (0, 1),
              "system-background": (0, 1, 2, 3), "restricted": (0, 1, 2, 3),
              "camera-daemon": (0, 1, 2, 3, 4, 5, 6, 7)},
}


def thread_cpuset(process: str, oom_score_adj: Optional[int], thread: str, is_main: bool,
                  top_app: Optional[str] = None) -> Optional[str]:
    """The cpuset of one thread (arguments as :func:`thread_group`), None for the root
    cpuset (every CPU). A process's cpuset follows its group for apps and system_server; a
    native daemon's comes from its .rc's cpuset profile, apart from its group."""
    if oom_score_adj is None:
        return None
    if oom_score_adj <= NATIVE_ADJ:
        if process == "surfaceflinger":
            # main() moves its main thread and RenderEngine to top-app; the binder threads
            # it started before stay in the root cpuset
            return "top-app" if is_main or thread == "RenderEngine" else None
        if process in FOREGROUND_CPUSET_DAEMONS:
            return "foreground"
        if process in SYSTEM_BACKGROUND_DAEMONS or process.startswith(SYSTEM_BACKGROUND_DAEMON_PREFIXES):
            return "system-background"
        if process == "cameraserver" or process.startswith(TOP_APP_DAEMON_PREFIXES):
            return "camera-daemon"
        return None
    if oom_score_adj <= SYSTEM_ADJ:
        return "top-app" if thread in SYSTEM_SERVER_TOP_APP_CPUSET_THREADS else "foreground"
    group = thread_group(process, oom_score_adj, thread, is_main, top_app)
    return group if group in ("top-app", "foreground", "background") else None


def _threads(trace):
    """(pid, process name, oom_score_adj, thread name, is main) of each thread whose
    process the trace names with its oom_score_adj."""
    from hetsched.traces.parse import iter_tasks

    # a thread's name: the trace's thread table's, else the comm its events carry
    comms = dict(iter_tasks(trace))
    for pid, tgid in trace.tgids.items():
        adj = trace.oom_score_adj.get(tgid)
        if adj is not None:
            yield (pid, trace.process_names.get(tgid, ""), adj,
                   trace.thread_names.get(pid) or comms.get(pid, ""), pid == tgid)


def thread_cpusets(trace, top_app: Optional[str] = None) -> dict:
    """pid -> cpuset name for every thread outside the root cpuset whose process the trace
    names with its oom_score_adj."""
    out = {}
    for pid, process, adj, name, main in _threads(trace):
        cs = thread_cpuset(process, adj, name, main, top_app)
        if cs is not None:
            out[pid] = cs
    return out


def cpuset_cpus(cpusets: dict, platform: str) -> dict:
    """key -> the CPUs of its cpuset on ``platform`` (a name of :data:`DEVICE_CPUSETS`);
    empty for a platform whose cpusets are not known."""
    sets = DEVICE_CPUSETS.get(platform, {})
    return {k: list(sets[cs]) for k, cs in cpusets.items() if cs in sets}


def thread_groups(trace, top_app: Optional[str] = None) -> dict:
    """pid -> group for every thread of ``trace`` whose process the trace names with its
    oom_score_adj (Perfetto's ProcessStats); the others are in the root group. Empty for a
    trace without oom_score_adj (ftrace, systrace): its groups are unknown."""
    if not trace.oom_score_adj:
        return {}
    out = {}
    for pid, process, adj, name, main in _threads(trace):
        g = thread_group(process, adj, name, main, top_app)
        if g != "root":
            out[pid] = g
    return out
