"""Finding and killing the processes a process started (Chromium runs in a session of its own, so its tree is found
with psutil's parent links, not by process group, and, once its parent has died and it was handed to init, by the
job tag it inherited in its environment)."""

from __future__ import annotations

from typing import Any

KILL_WAIT_S = 5.0
# The environment variable a render child sets to its job folder before it starts a browser; every process it starts
# inherits it, so they can be found after the child has died and its descendants were re-parented.
JOB_TAG = "ATLAS_RENDER_JOB"


def descendants(pid: int) -> list[Any]:
    """psutil.Process objects of every process ``pid`` started, directly or not ([] when it is gone)."""
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def tagged(job: str) -> list[Any]:
    """psutil.Process objects of every running process of this user whose environment has JOB_TAG == ``job``
    (processes whose environment cannot be read are left out)."""
    import psutil

    found = []
    for process in psutil.process_iter():
        try:
            if process.environ().get(JOB_TAG) == job:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess, OSError):
            continue
    return found


def kill_all(processes: list[Any]) -> None:
    """SIGKILL each psutil.Process still running (psutil checks the pid was not reused) and reap them for at most
    KILL_WAIT_S seconds."""
    import psutil

    for process in processes:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(processes, timeout=KILL_WAIT_S)


def kill_tree(pid: int | None) -> None:
    """SIGKILL process ``pid`` and all its descendants, then reap them (see :func:`kill_all`)."""
    import psutil

    if pid is None:
        return
    try:
        root = psutil.Process(pid)
        victims = root.children(recursive=True) + [root]
    except psutil.NoSuchProcess:
        return
    kill_all(victims)
