"""How much memory a Pinocchio ``pin.Data`` takes, and how much this process may still take.

Pinocchio 3-4 allocates about 64 nv^3 bytes per ``pin.Data`` (second-order kinematic tensors): 220 MB
at nv = 150, 1.7 GB at nv = 300, 21 GB at nv = 700. :func:`new_data` refuses, with a message naming
the size, a model whose data does not fit, instead of a bare MemoryError or the kernel's OOM killer.
"""

from __future__ import annotations

import os

import pinocchio as pin

from .exceptions import ModelTooLarge

CHECK_ABOVE = 2**26  # [bytes] smaller data is made without looking at the system's memory


def data_bytes(nv: int, nframes: int = 0) -> int:
    """About how many bytes one ``pin.Data`` takes: Pinocchio 3-4 allocates ~64 nv^3 bytes
    (second-order kinematic tensors) plus ~800 nv^2 (measured on chains, nv = 10..700)."""
    return 64 * nv**3 + 800 * nv**2 + 2000 * nframes + 2**20


def available_bytes() -> int | None:
    """Memory this process can still take [bytes]: the smallest of the system's available memory,
    the cgroup's room and the address-space limit; None when nothing is known."""
    room: list[int] = []
    try:
        with open("/proc/meminfo") as file:
            for line in file:
                if line.startswith("MemAvailable:"):
                    room.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file) as a, open(usage_file) as b:
                limit, usage = a.read().strip(), b.read().strip()
            if limit.isdigit() and int(limit) < 2**60:
                room.append(int(limit) - int(usage))
        except (OSError, ValueError):
            pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as file:
                used = int(file.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            room.append(soft - used)
    except (ImportError, OSError, ValueError, IndexError):
        pass
    return max(0, min(room)) if room else None


def _size(n: float) -> str:
    for unit in ("bytes", "kB", "MB", "GB", "TB", "PB"):
        if n < 1000 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return f"{n:.3g} PB"  # pragma: no cover


def new_data(model: pin.Model, robot_name: str) -> pin.Data:
    """``pin.Data(model)``, or ModelTooLarge when it would not fit in memory."""
    need = data_bytes(model.nv, model.nframes)
    if need > CHECK_ABOVE:
        room = available_bytes()
        if room is not None and need > room:
            raise ModelTooLarge(_too_large(robot_name, model.nv, need, room))
    try:
        return pin.Data(model)  # (model.createData() returns a copy of one: twice the time)
    except MemoryError:
        raise ModelTooLarge(_too_large(robot_name, model.nv, need, available_bytes())) from None


def _too_large(name: str, nv: int, need: int, room: int | None) -> str:
    where = f"more than the {_size(room)} of memory available" if room is not None else "more than this machine has"
    return (f"robot '{name}' has nv = {nv}: one Pinocchio pin.Data for it takes about {_size(need)} "
            f"(Pinocchio allocates ~64 nv^3 bytes), {where}")
