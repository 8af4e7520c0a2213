"""Live probe: allocate a model's quantized KV pool on a device and measure its real bytes.

``import planner.probe`` needs no torch: the result model, the pool layout and
the memory readers are plain Python; :func:`run_probe` imports torch (and the
modules that compute with it, :mod:`planner.probe.quant` with
:mod:`planner.probe.minifloat` and :mod:`planner.probe.quant_cpu`, and
:mod:`planner.probe.pool`) when called, and raises
:class:`ProbeUnavailableError` with the pip command when torch is missing.

>>> from planner.probe import plan_pool
>>> plan_pool("deepseek-v4.1-flash", 1_000_000, "nvfp4").pool_bytes   # 2.5 entries x 356 B x 1M
890000000
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.probe._torch import INSTALL_HINT, torch_available
from planner.probe.errors import ProbeBusyError, ProbeError, ProbeTimeoutError, ProbeUnavailableError
from planner.probe.layout import PROBE_FORMATS, PoolLayout, plan_pool, tokens_that_fit
from planner.probe.result import (
    MAX_RESULT_FILE_BYTES,
    SCHEMA_VERSION,
    FormatQuality,
    FormatThroughput,
    PoolGroupResult,
    ProbeResult,
    load_probe_result,
    make_probe_result,
)


@dataclass(frozen=True)
class DeviceStatus:
    """What this process can probe on: torch (and its version), a CUDA device (and its name)."""

    torch: bool
    torch_version: str | None = None
    cuda: bool = False
    gpu_name: str | None = None
    cuda_version: str | None = None


def device_status() -> DeviceStatus:
    """torch and CUDA as this process sees them (imports torch only when it is installed)."""
    if not torch_available():
        return DeviceStatus(torch=False)
    from planner.probe._torch import require_torch

    torch = require_torch()
    cuda = bool(torch.cuda.is_available())
    return DeviceStatus(torch=True, torch_version=str(torch.__version__), cuda=cuda,
                        gpu_name=torch.cuda.get_device_name(0) if cuda else None,
                        cuda_version=str(torch.version.cuda) if cuda else None)


def cuda_available() -> bool:
    """True when torch is installed and sees a CUDA device (imports torch only if installed)."""
    if not torch_available():
        return False
    from planner.probe._torch import require_torch

    return bool(require_torch().cuda.is_available())


def run_probe(*args, **kwargs) -> ProbeResult:
    """Allocate, fill, measure and release a KV pool: see :func:`planner.probe.run.run_probe`.

    Raises:
        ProbeUnavailableError: torch is not installed (``pip install 'kvplan[probe]'``).
    """
    from planner.probe._torch import require_torch

    require_torch()
    from planner.probe.run import run_probe as _run_probe

    return _run_probe(*args, **kwargs)


__all__ = [
    "DeviceStatus", "FormatQuality", "FormatThroughput", "INSTALL_HINT", "MAX_RESULT_FILE_BYTES", "PROBE_FORMATS",
    "PoolGroupResult", "PoolLayout", "ProbeBusyError", "ProbeError", "ProbeResult", "ProbeTimeoutError",
    "ProbeUnavailableError", "SCHEMA_VERSION", "cuda_available", "device_status", "load_probe_result",
    "make_probe_result", "plan_pool", "run_probe", "tokens_that_fit", "torch_available",
]
