"""Finding torch: the probe's only optional heavy dependency.

``planner.probe`` itself imports without torch; the modules that compute with
it (``quant``, ``pool``, ``memory``'s CUDA readers, ``run``) call
:func:`require_torch` at import time and are themselves imported lazily, inside
the functions of ``planner.probe`` that need them (HF accelerate's pattern).
"""

from __future__ import annotations

import importlib
import importlib.util

from planner.probe.errors import ProbeUnavailableError

INSTALL_HINT = "pip install 'kvplan[probe]' (or: pip install torch)"
"""What to run when torch is missing."""


def torch_available() -> bool:
    """True when ``import torch`` would find a module (nothing is imported)."""
    return importlib.util.find_spec("torch") is not None


def require_torch():
    """The ``torch`` module.

    Raises:
        ProbeUnavailableError: torch is not installed (message names the pip command).
    """
    if not torch_available():
        raise ProbeUnavailableError(f"the live probe needs torch, which is not installed: {INSTALL_HINT}")
    return importlib.import_module("torch")
