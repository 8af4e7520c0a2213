"""Reading memory: host (``/proc``) without torch, CUDA through torch.

* :func:`rss_bytes`: this process's resident set, ``/proc/self/statm`` field 2
  (pages) x page size; where ``/proc`` is missing, ``resource.getrusage``'s
  peak RSS (a high-water mark: deltas then read 0 after frees).
* :func:`host_memory`: ``MemTotal`` and ``MemAvailable`` from ``/proc/meminfo``
  (kB there means KiB), else ``sysconf`` physical and available pages.
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
