"""Reading memory: host (``/proc``) without torch, CUDA through torch.

* :func:`rss_bytes`: this process's resident set, ``/proc/self/statm`` field 2
  (pages) x page size; where ``/proc`` is missing, ``resource.getrusage``'s
  peak RSS (a high-water mark: deltas then read 0 after frees).
* :func:`host_memory`: ``MemTotal`` and ``MemAvailable`` from ``/proc/meminfo``
  (kB there means KiB), else ``sysconf`` physical and available pages.
* :func:`process_limits`: what this process may still allocate under its own
  limits, which ``/proc/meminfo`` does not show: ``RLIMIT_AS`` (``ulimit -v``,
  against the address space in use, ``VmSize``), ``RLIMIT_DATA`` (``ulimit -d``,
  against ``VmData``) and the memory cgroup's limit (v2 ``memory.max`` minus
  ``memory.current``; v1 ``memory.limit_in_bytes`` minus ``memory.usage_in_bytes``;
  inactive file cache counted as free, as the kubelet's working set does; the
  tightest of the cgroup and its ancestors). See the Linux man pages
  getrlimit(2), proc(5) and the kernel's Documentation/admin-guide/cgroup-v2.rst.
* :func:`cuda_snapshot`: ``torch.cuda.memory_allocated`` (bytes of live
  tensors, each rounded to 512 B), ``memory_reserved`` (segments the caching
  allocator holds) and ``mem_get_info`` (free and total as the driver sees them).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
from dataclasses import dataclass

from planner.units import KiB


def page_size_bytes() -> int:
    """The OS page size in bytes (4096 on most Linux systems)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 4096


def rss_bytes() -> int:
    """Resident set size of this process, in bytes (current, not peak, on Linux)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * page_size_bytes()
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if platform.system() == "Darwin" else peak * KiB


@dataclass(frozen=True)
class HostMemory:
    """Host memory in bytes: ``total`` (MemTotal) and ``available`` (MemAvailable)."""

    total: int
    available: int


def host_memory() -> HostMemory:
    """Total and available host memory in bytes (``/proc/meminfo``, else ``sysconf``)."""
    try:
        fields: dict[str, int] = {}
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts:
                    fields[key] = int(parts[0]) * (KiB if parts[-1] == "kB" else 1)
        return HostMemory(total=fields["MemTotal"], available=fields["MemAvailable"])
    except (OSError, KeyError, ValueError):  # pragma: no cover - not Linux
        page = page_size_bytes()
        return HostMemory(total=os.sysconf("SC_PHYS_PAGES") * page, available=os.sysconf("SC_AVPHYS_PAGES") * page)


CGROUP_ROOT = "/sys/fs/cgroup"
"""Where the cgroup file systems are mounted (v2 unified, or v1 with one folder per controller)."""
PROC_SELF_CGROUP = "/proc/self/cgroup"
"""This process's cgroup per hierarchy: ``ID:controllers:path`` lines (``0::path`` for v2)."""
UNLIMITED_BYTES = 2**60
"""A limit at or above this (1 EiB) is no limit: cgroup v1 writes 9,223,372,036,854,771,712 for "none"."""


@dataclass(frozen=True)
class MemoryLimit:
    """One limit on this process's memory: ``limit_bytes``, of which ``headroom_bytes`` are still free."""

    source: str
    limit_bytes: int
    headroom_bytes: int


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _inactive_file_bytes(stat_path: str, key: str) -> int:
    try:
        with open(stat_path, encoding="ascii") as fh:
            for line in fh:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    return 0


def _cgroup_dirs(relative: str, base: str) -> list[str]:
    """``base/relative`` and its ancestors up to ``base``, those that exist (a container may not see the host's)."""
    parts = [p for p in relative.strip().split("/") if p]
    dirs = [os.path.join(base, *parts[:i]) for i in range(len(parts), -1, -1)]
    return [d for d in dirs if os.path.isdir(d)]


def cgroup_limits() -> list[MemoryLimit]:
    """The memory cgroup's limits on this process (v2 and v1), tightest first; empty without one."""
    try:
        with open(PROC_SELF_CGROUP, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    found: list[MemoryLimit] = []
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":  # v2: memory.max / memory.current / memory.stat inactive_file
            files = ("memory.max", "memory.current", "memory.stat", "inactive_file", "cgroup v2 memory.max")
            base = CGROUP_ROOT
        elif "memory" in controllers.split(","):
            files = ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat", "total_inactive_file",
                     "cgroup v1 memory.limit_in_bytes")
            base = os.path.join(CGROUP_ROOT, "memory")
        else:
            continue
        limit_name, usage_name, stat_name, inactive_key, source = files
        for folder in _cgroup_dirs(path, base):
            limit = _read_int(os.path.join(folder, limit_name))
            usage = _read_int(os.path.join(folder, usage_name))
            if limit is None or limit >= UNLIMITED_BYTES or usage is None:
                continue
            used = max(0, usage - _inactive_file_bytes(os.path.join(folder, stat_name), inactive_key))
            found.append(MemoryLimit(source=f"{source} ({folder})", limit_bytes=limit,
                                     headroom_bytes=max(0, limit - used)))
    return sorted(found, key=lambda m: m.headroom_bytes)


def _statm_bytes(field: int) -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[field]) * page_size_bytes()
    except (OSError, ValueError, IndexError):
        return None


def address_space_bytes() -> int | None:
    """This process's address space in use (``VmSize``, what ``RLIMIT_AS`` limits), bytes; None without /proc."""
    return _statm_bytes(0)


def rlimit_limits() -> list[MemoryLimit]:
    """``RLIMIT_AS`` against the address space in use (statm size) and ``RLIMIT_DATA`` against data (statm data)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return []
    found = []
    for name, statm_field, label in (("RLIMIT_AS", 0, "RLIMIT_AS (ulimit -v)"),
                                     ("RLIMIT_DATA", 5, "RLIMIT_DATA (ulimit -d)")):
        kind = getattr(resource, name, None)
        if kind is None:
            continue
        try:
            soft, _ = resource.getrlimit(kind)
        except (OSError, ValueError):
            continue
        if soft == resource.RLIM_INFINITY or soft < 0 or soft >= UNLIMITED_BYTES:
            continue
        used = _statm_bytes(statm_field)
        if used is None:
            continue
        found.append(MemoryLimit(source=label, limit_bytes=int(soft), headroom_bytes=max(0, int(soft) - used)))
    return found


def process_limits() -> list[MemoryLimit]:
    """Every limit on this process's memory (rlimits and cgroups), the least headroom first."""
    return sorted([*rlimit_limits(), *cgroup_limits()], key=lambda m: m.headroom_bytes)


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else ``platform.processor()``, with the core count."""
    name = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    name = line.partition(":")[2].strip()
                    break
    except OSError:  # pragma: no cover - not Linux
        pass
    name = name or platform.processor() or platform.machine() or "CPU"
    return f"{name} ({os.cpu_count() or '?'} logical cores)"


_LIBC = None


def malloc_trim() -> None:
    """Ask glibc to return freed heap pages to the OS (no-op elsewhere), so that RSS
    falls back after a release. Large tensors are ``mmap``ed and unmapped anyway."""
    global _LIBC
    if platform.system() != "Linux":
        return
    try:
        if _LIBC is None:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _LIBC.malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - musl or no libc
        pass


@dataclass(frozen=True)
class CudaSnapshot:
    """CUDA memory at one moment, bytes: ``allocated`` (live tensors), ``reserved``
    (caching-allocator segments), ``free`` and ``total`` (driver)."""

    allocated: int
    reserved: int
    free: int
    total: int


def cuda_snapshot(torch, device) -> CudaSnapshot:
    """Synchronize ``device`` and read its memory counters."""
    torch.cuda.synchronize(device)
    free, total = torch.cuda.mem_get_info(device)
    return CudaSnapshot(allocated=int(torch.cuda.memory_allocated(device)),
                        reserved=int(torch.cuda.memory_reserved(device)), free=int(free), total=int(total))
