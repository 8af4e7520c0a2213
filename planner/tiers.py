"""Memory tiers behind the HBM KV pool: host RAM and SSD, their links, and where sessions sit.

The seeds' hierarchy (domain.md §5.3): HBM first, host RAM second (the first
recovery tier), SSD third. Running sessions live in HBM; paused ("parked")
sessions may sit in host RAM or on SSD. Offload changes latency and cost, never
the byte count: a parked session comes back either by a reload (bytes / link
bandwidth) or by a recompute (prefill of its own tokens).

Capacities are **per GPU**: host RAM per node / GPUs per node, SSD per node /
GPUs per node (offload budgets in LMCache and Mooncake are per worker, i.e. per
GPU, domain.md §2). Link bandwidths are **per direction**, nominal.

Links (nominal, per direction, decimal GB/s):

=============  =========  ==========================================================
id             GB/s       source
=============  =========  ==========================================================
pcie4-x16      32         PCI-SIG PCIe 4.0: 16 GT/s x 16 lanes (31.5 GB/s after 128b/130b)
pcie5-x16      64         PCI-SIG PCIe 5.0: 32 GT/s x 16 lanes (63.0 GB/s after 128b/130b)
nvlink-c2c     450        NVIDIA Grace Hopper / Grace Blackwell data sheets: 900 GB/s total
nvme-gen4      7          typical PCIe 4.0 x4 NVMe sequential read (~7,000 MB/s)
nvme-gen5      14         typical PCIe 5.0 x4 NVMe sequential read (~14,000 MB/s)
=============  =========  ==========================================================

>>> LINKS["pcie5-x16"].bytes_per_s / 1e9, LINKS["nvlink-c2c"].bytes_per_s / 1e9
(64.0, 450.0)
>>> round(reload_seconds(890_000_000, LINKS["pcie5-x16"].bytes_per_s), 6)  # 0.89 GB / 64 GB/s
0.013906
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from planner.errors import PlanInputError
from planner.units import GB, GiB, TB

AUTO = "auto"
"""Link id meaning "the link of the node this accelerator usually sits in"."""


@dataclass(frozen=True, kw_only=True)
class Link:
    """A data path between tiers.

    Attributes:
        id: slug (``pcie5-x16``).
        name: display name.
        bytes_per_s: nominal bandwidth per direction, bytes/s.
        source: where the figure comes from.
    """

    id: str
    name: str
    bytes_per_s: float
    source: str


_PCIE = ("PCI-SIG base specifications: {gts} GT/s per lane x 16 lanes, 128b/130b encoding = {enc} GB/s per "
         "direction ({nom} GB/s nominal, {bi} GB/s both directions); achieved copy rates are lower.")

LINKS: dict[str, Link] = {
    link.id: link
    for link in (
        Link(id="pcie4-x16", name="PCIe 4.0 x16", bytes_per_s=32 * GB,
             source=_PCIE.format(gts=16, enc="31.5", nom=32, bi=64)),
        Link(id="pcie5-x16", name="PCIe 5.0 x16", bytes_per_s=64 * GB,
             source=_PCIE.format(gts=32, enc="63.0", nom=64, bi=128)),
        Link(id="nvlink-c2c", name="NVLink-C2C (Grace CPU to GPU)", bytes_per_s=450 * GB,
             source="NVIDIA GH200 / Grace data sheets: NVLink-C2C 900 GB/s CPU-GPU bandwidth, i.e. 450 GB/s "
                    "per direction (ten links x 45 GB/s per direction)."),
        Link(id="nvme-gen4", name="NVMe SSD, PCIe 4.0 x4", bytes_per_s=7 * GB,
             source="Typical PCIe 4.0 x4 NVMe sequential read, ~7,000 MB/s (interface limit 7.9 GB/s); "
                    "one drive per GPU."),
        Link(id="nvme-gen5", name="NVMe SSD, PCIe 5.0 x4", bytes_per_s=14 * GB,
             source="Typical PCIe 5.0 x4 NVMe sequential read, 12,000-14,500 MB/s (interface limit 15.8 GB/s); "
                    "one drive per GPU."),
    )
}
"""Links by id. Host links join host RAM and HBM; SSD links join the SSD and host RAM."""

HOST_LINKS = ("pcie4-x16", "pcie5-x16", "nvlink-c2c")
"""Link ids that can join host RAM to a GPU."""
SSD_LINKS = ("nvme-gen4", "nvme-gen5")
"""Link ids of SSDs."""


@dataclass(frozen=True, kw_only=True)
class Node:
    """The server an accelerator usually sits in: what its tiers hold per node.

    Attributes:
        name: system name.
        gpus_per_node: accelerators in one node.
        host_ram_bytes: host memory of the node.
        ssd_bytes: local data SSDs of the node (OS drives excluded).
        host_link: id in :data:`LINKS` joining host RAM and one GPU.
        ssd_link: id in :data:`LINKS` of one data SSD.
        source: data sheet or "assumed".
    """

    name: str
    gpus_per_node: int
    host_ram_bytes: int
    ssd_bytes: int
    host_link: str
    ssd_link: str
    source: str

    @property
    def host_ram_bytes_per_gpu(self) -> int:
        """Host RAM per GPU: node RAM / GPUs per node (rounded down)."""
        return self.host_ram_bytes // self.gpus_per_node

    @property
    def ssd_bytes_per_gpu(self) -> int:
        """SSD per GPU: node SSD / GPUs per node (rounded down)."""
        return self.ssd_bytes // self.gpus_per_node


_DGX_H = Node(
    name="NVIDIA DGX H100 / H200", gpus_per_node=8, host_ram_bytes=32 * 64 * GiB, ssd_bytes=8 * 3_840 * GB,
    host_link="pcie5-x16", ssd_link="nvme-gen4",
    source="NVIDIA DGX BasePOD reference architecture (DGX H200/H100: 2 TB DDR5, eight 3.84 TB U.2 NVMe for "
           "cache, Xeon 8480C with PCIe 5.0); MLPerf Inference v4.1 NVIDIA H200-SXM-141GBx8 system description "
           "(host memory 32x 64GB, accelerator host interconnect PCIe Gen5 x16). SSD generation assumed Gen4.",
)
_DGX_B200 = Node(
    name="NVIDIA DGX B200", gpus_per_node=8, host_ram_bytes=32 * 64 * GiB, ssd_bytes=8 * 3_840 * GB,
    host_link="pcie5-x16", ssd_link="nvme-gen4",
    source="NVIDIA DGX B200 user guide (2 TB in 32 DIMMs, upgradable to 4 TB; 8 x 3.84 TB NVMe U.2 data cache; "
           "Xeon 8570 PCIe Gen5 CPUs). SSD generation assumed Gen4.",
)
_DGX_A100 = Node(
    name="NVIDIA DGX A100", gpus_per_node=8, host_ram_bytes=16 * 64 * GiB, ssd_bytes=4 * 3_840 * GB,
    host_link="pcie4-x16", ssd_link="nvme-gen4",
    source="NVIDIA DGX A100 data sheet (1 TB system memory, upgradable to 2 TB; 15 TB U.2 NVMe, upgradable "
           "to 30 TB; AMD EPYC 7742, PCIe Gen4).",
)
_GB200 = Node(
    name="NVIDIA GB200 NVL72 compute tray", gpus_per_node=4, host_ram_bytes=2 * 480 * GB,
    ssd_bytes=4 * 3_840 * GB, host_link="nvlink-c2c", ssd_link="nvme-gen5",
    source="NVIDIA DGX GB200 user guide (compute tray: 2 Grace CPUs, 4 Blackwell GPUs); Grace data sheet "
           "(480 GB LPDDR5X per Grace, NVLink-C2C 900 GB/s). SSDs assumed: one 3.84 TB Gen5 drive per GPU.",
)
_PCIE5_SERVER = Node(
    name="PCIe Gen5 server (assumed)", gpus_per_node=8, host_ram_bytes=2 * TB, ssd_bytes=8 * 3_840 * GB,
    host_link="pcie5-x16", ssd_link="nvme-gen4",
    source="assumed: 8 accelerators, 2 TB host RAM, one 3.84 TB Gen4 NVMe per accelerator; host link from the "
           "accelerator's data sheet (PCIe Gen5 x16).",
)
_PCIE4_SERVER = Node(
    name="PCIe Gen4 server (assumed)", gpus_per_node=8, host_ram_bytes=1 * TB, ssd_bytes=8 * 3_840 * GB,
    host_link="pcie4-x16", ssd_link="nvme-gen4",
    source="assumed: 8 accelerators, 1 TB host RAM, one 3.84 TB Gen4 NVMe per accelerator; host link from the "
           "accelerator's data sheet (PCIe Gen4 x16).",
)

NODES: dict[str, Node] = {
    "a100-40gb": _DGX_A100, "a100-80gb": _DGX_A100,
    "h100-sxm": _DGX_H, "h200": _DGX_H,
    "b200": _DGX_B200, "b300": _DGX_B200,
    "gb200": _GB200,
    "h100-pcie": _PCIE5_SERVER, "rtx-5090": _PCIE5_SERVER, "mi300x": _PCIE5_SERVER, "mi325x": _PCIE5_SERVER,
    "mi355x": _PCIE5_SERVER, "gaudi3": _PCIE5_SERVER,
    "l40s": _PCIE4_SERVER, "l4": _PCIE4_SERVER, "rtx-4090": _PCIE4_SERVER,
    "tpu-v5e": _PCIE4_SERVER, "tpu-v5p": _PCIE4_SERVER,
}
"""Typical node per catalog accelerator id (B300 assumed like DGX B200; TPU hosts assumed PCIe Gen4)."""

DEFAULT_NODE = _PCIE5_SERVER
"""Node for accelerators not in :data:`NODES` (custom HBM sizes)."""


def node_for(gpu_id: str) -> Node:
    """The typical node of an accelerator (:data:`DEFAULT_NODE` when unknown or custom)."""
    return NODES.get(gpu_id, DEFAULT_NODE)


def get_link(link_id: str, *, field: str, allowed: tuple[str, ...]) -> Link:
    """The link with this id.

    Raises:
        PlanInputError: unknown id or not one of ``allowed``.
    """
    if link_id not in allowed:
        raise PlanInputError(field, link_id, "one of " + ", ".join((AUTO, *allowed)))
    return LINKS[link_id]


def resolve_links(gpu_id: str, host_link: str = AUTO, ssd_link: str = AUTO) -> tuple[Link, Link]:
    """(host link, SSD link) for an accelerator; ``auto`` takes its node's."""
    node = node_for(gpu_id)
    host = get_link(node.host_link if host_link == AUTO else host_link, field="host_link", allowed=HOST_LINKS)
    ssd = get_link(node.ssd_link if ssd_link == AUTO else ssd_link, field="ssd_link", allowed=SSD_LINKS)
    return host, ssd


def reload_seconds(num_bytes: float, bytes_per_s: float) -> float:
    """Seconds to move ``num_bytes`` over a link of ``bytes_per_s`` (per direction)."""
    return num_bytes / bytes_per_s


def ssd_reload_bytes_per_s(host: Link, ssd: Link) -> float:
    """SSD -> HBM goes through the host link too: the slower of the two."""
    return min(host.bytes_per_s, ssd.bytes_per_s)


# ---------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------

OverflowAction = Literal["none", "offload", "evict", "reject"]
"""What happens when HBM cannot hold every session's uncached tail:

* ``none``: every session's tail is in HBM.
* ``offload``: paused sessions' tails go to host RAM, then SSD; they come back
  by a reload (latency), the byte count is unchanged.
* ``evict``: host RAM and SSD are full too; the least recently used parked tails
  are dropped and recomputed (prefill) when their session resumes.
* ``reject``: sessions that must run at the same time do not fit in HBM (a
  running session's KV must be in HBM: offloading cannot serve it), or not one
  session fits; the excess is refused.
"""


class TierPlacement(BaseModel):
    """Where the bytes of ``sessions`` sessions sit on one GPU's tiers.

    ``hbm_bytes + host_ram_bytes + ssd_bytes + evicted_bytes == total_bytes``:
    offload moves bytes between tiers and never changes their count; evicted
    bytes are dropped and recomputed on resume.
    """

    model_config = ConfigDict(frozen=True)

    sessions: int = Field(description="sessions placed (target minus rejected)")
    sessions_rejected: int
    active_sessions: int = Field(description="sessions running a turn at any time (ceil(sessions x active fraction))")
    sessions_in_hbm: int
    sessions_in_host_ram: int = Field(description="parked sessions whose tail is in host RAM")
    sessions_on_ssd: int
    sessions_evicted: int
    prefix_copies: int = Field(description="shared prefixes stored in HBM")
    hbm_bytes: int
    host_ram_bytes: int
    ssd_bytes: int
    evicted_bytes: int = Field(description="bytes not stored anywhere: recomputed when their session resumes")
    total_bytes: int
    state_bytes_in_host_ram: int = Field(description="window state kept in host RAM (within its TTL)")
    hbm_capacity_bytes: int
    host_ram_capacity_bytes: int
    ssd_capacity_bytes: int
    action: OverflowAction
    message: str


def _fraction(value):
    """``value`` clamped to [0, 1]; NaN counts as 1 (every session running, every state kept: the most bytes).

    Works on numbers and numpy arrays alike.

    >>> float(_fraction(1.5)), float(_fraction(-0.2)), float(_fraction(float("nan")))
    (1.0, 0.0, 1.0)
    """
    value = np.asarray(value, dtype=np.float64)
    return np.where(np.isnan(value), 1.0, np.minimum(np.maximum(value, 0.0), 1.0))


def _running(sessions, active_fraction):
    """Sessions running at once: ``ceil(sessions x active_fraction)`` (a hair of float noise forgiven)."""
    return np.maximum(np.ceil(sessions * active_fraction - 1e-9), 0.0)


@dataclass(frozen=True)
class PlacementCounts:
    """Where sessions sit, as counts (numpy arrays of one shape; 0-d for one plan).

    Attributes:
        admitted, rejected, active, in_hbm, parked: sessions (int64).
        in_host_ram, on_ssd, evicted: parked tails by tier (int64).
        prefix_copies: shared prefixes stored in HBM (int64).
        state_total_bytes: window states to keep (float64: running states plus
            paused ones within their TTL).
        state_host_bytes, state_ssd_bytes: where they sit (float64, bounded by the tiers).
    """

    admitted: np.ndarray
    rejected: np.ndarray
    active: np.ndarray
    in_hbm: np.ndarray
    parked: np.ndarray
    in_host_ram: np.ndarray
    on_ssd: np.ndarray
    evicted: np.ndarray
    prefix_copies: np.ndarray
    state_total_bytes: np.ndarray
    state_host_bytes: np.ndarray
    state_ssd_bytes: np.ndarray


def place_counts(sessions, *, hbm_sessions, active_fraction, num_prefixes, per_session_bytes, state_bytes,
                 state_alive_fraction, host_ram_bytes, ssd_bytes) -> PlacementCounts:
    """The placement of :func:`place_sessions` as counts, over numpy values (broadcast together).

    The one copy of the placement rule: :func:`place_sessions` (one GPU) and
    the frontier grid (every point at once) both call it.
    """
    sessions = np.maximum(np.asarray(sessions, dtype=np.int64), 0)
    hbm = np.asarray(hbm_sessions, dtype=np.int64)
    f = _fraction(active_fraction)
    alive = _fraction(state_alive_fraction)
    per = np.asarray(per_session_bytes, dtype=np.int64)
    # Most sessions whose running share fits in HBM: ceil(n * f) <= hbm_sessions.
    fits_all = _running(sessions, f) <= hbm
    if np.all(fits_all):  # the usual case (e.g. carrying what HBM holds): no step-down needed
        admitted = np.where(hbm <= 0, 0, sessions)
    else:
        with np.errstate(over="ignore", divide="ignore"):  # a huge quotient is never chosen: fits_all holds there
            most = np.minimum(sessions, np.floor(np.maximum(hbm, 0) / np.where(f > 0, f, 1.0) + 1e-9))
        admitted = np.where(hbm <= 0, 0, np.where(fits_all, sessions, most)).astype(np.int64)
        while True:  # float noise: step down until ceil(admitted * f) <= hbm
            over = (hbm > 0) & ~fits_all & (admitted > 0) & (_running(admitted, f) > hbm)
            if not np.any(over):
                break
            admitted = np.where(over, admitted - 1, admitted)
    rejected = sessions - admitted
    active = np.minimum(_running(admitted, f).astype(np.int64), admitted)
    in_hbm = np.minimum(admitted, np.maximum(hbm, 0))
    parked = admitted - in_hbm
    copies = np.minimum(np.int64(num_prefixes), in_hbm)
    state = np.asarray(state_bytes, dtype=np.float64)
    state_total = active * state + np.floor((admitted - active) * state * alive)
    host = np.asarray(host_ram_bytes, dtype=np.float64)
    ssd = np.asarray(ssd_bytes, dtype=np.float64)
    state_host = np.minimum(state_total, host)
    state_ssd = np.minimum(state_total - state_host, ssd)
    if np.any(parked):
        per_f = np.maximum(per, 1).astype(np.float64)
        n_host = np.where(per > 0, np.minimum(parked, (host - state_host) // per_f), parked).astype(np.int64)
        n_ssd = np.where(per > 0, np.minimum(parked - n_host, (ssd - state_ssd) // per_f), 0).astype(np.int64)
    else:  # nothing parked: no tier holds a tail
        n_host = n_ssd = np.zeros_like(parked)
    return PlacementCounts(admitted=admitted, rejected=rejected, active=active, in_hbm=in_hbm, parked=parked,
                           in_host_ram=n_host, on_ssd=n_ssd, evicted=parked - n_host - n_ssd, prefix_copies=copies,
                           state_total_bytes=state_total, state_host_bytes=state_host, state_ssd_bytes=state_ssd)


def place_sessions(
    sessions: int,
    *,
    hbm_sessions: int,
    active_fraction: float,
    usable_hbm_bytes: int,
    prefix_bytes: int,
    num_prefixes: int,
    per_session_bytes: int,
    state_bytes: int,
    state_alive_fraction: float,
    host_ram_bytes: int,
    ssd_bytes: int,
    counts: PlacementCounts | None = None,
) -> TierPlacement:
    """Place ``sessions`` sessions of one GPU on HBM, host RAM and SSD.

    Args:
        sessions: sessions the GPU should carry (running + paused).
        hbm_sessions: sessions whose tails fit in HBM at once (the plan's
            sessions per KV domain).
        active_fraction: share of its time a session is running a turn, in
            [0, 1] (1 without pauses).
        usable_hbm_bytes: the KV pool per GPU.
        prefix_bytes: one shared prefix.
        num_prefixes: distinct shared prefixes (each stored once, while at
            least one of its sessions is in HBM).
        per_session_bytes: one session's bytes in HBM (tail, output, window
            layers, and window state when kept in HBM).
        state_bytes: one session's window state kept in host RAM (0 when in
            HBM or absent).
        state_alive_fraction: share of paused sessions whose state is still
            within its TTL.
        host_ram_bytes, ssd_bytes: tier capacities per GPU.
        counts: :func:`place_counts` of these same arguments when the caller
            already has them (the plan's array phase), else computed here.

    Placement (:func:`place_counts`): HBM holds up to ``hbm_sessions``
    sessions (running ones first); host RAM holds the window states first
    (small, needed at every resume), then parked tails; SSD the next parked
    tails (and states that did not fit); what is left is evicted. Running
    sessions beyond ``hbm_sessions`` are rejected.
    """
    c = counts or place_counts(sessions, hbm_sessions=hbm_sessions, active_fraction=active_fraction,
                     num_prefixes=num_prefixes, per_session_bytes=per_session_bytes, state_bytes=state_bytes,
                     state_alive_fraction=state_alive_fraction, host_ram_bytes=host_ram_bytes, ssd_bytes=ssd_bytes)
    sessions = max(int(sessions), 0)
    f = float(_fraction(active_fraction))
    admitted, rejected, active = int(c.admitted), int(c.rejected), int(c.active)
    in_hbm, parked = int(c.in_hbm), int(c.parked)
    n_host, n_ssd, n_evicted = int(c.in_host_ram), int(c.on_ssd), int(c.evicted)
    copies = int(c.prefix_copies)
    state_host, state_ssd = int(c.state_host_bytes), int(c.state_ssd_bytes)
    state_evicted = int(c.state_total_bytes) - state_host - state_ssd
    hbm = copies * prefix_bytes + in_hbm * per_session_bytes
    host = state_host + n_host * per_session_bytes
    ssd = state_ssd + n_ssd * per_session_bytes
    evicted = state_evicted + n_evicted * per_session_bytes
    total = hbm + host + ssd + evicted

    if hbm_sessions <= 0:
        action: OverflowAction = "reject"
        message = ("Reject: not one session's uncached tail fits in the HBM pool. Offloading cannot help, because a "
                   "running session's KV must be in HBM; evicting would only thrash. Shorten the context, raise "
                   "the prefix hit rate, add HBM or split the weights over more GPUs.")
    elif rejected:
        action = "reject"
        message = (f"Reject {rejected:,} of {sessions:,} sessions: with an active share of {f:.3g}, "
                   f"{int(_running(sessions, f)):,} would run at once but HBM holds {hbm_sessions:,}. "
                   "Running sessions cannot be offloaded, so the excess is refused.")
    elif n_evicted or state_evicted:
        action = "evict"
        message = (f"Evict: {parked:,} paused sessions are parked, host RAM and SSD hold {n_host + n_ssd:,}; the "
                   f"{n_evicted:,} least recently used tails are dropped and recomputed (prefill) when they resume.")
    elif parked:
        action = "offload"
        message = (f"Offload: HBM holds {in_hbm:,} sessions; {parked:,} paused sessions are parked "
                   f"({n_host:,} in host RAM, {n_ssd:,} on SSD) and reloaded when they resume. "
                   "Latency changes, the byte count does not.")
    else:
        action = "none"
        message = ""
    return TierPlacement(
        sessions=admitted, sessions_rejected=rejected, active_sessions=active, sessions_in_hbm=in_hbm,
        sessions_in_host_ram=n_host, sessions_on_ssd=n_ssd, sessions_evicted=n_evicted, prefix_copies=copies,
        hbm_bytes=hbm, host_ram_bytes=host, ssd_bytes=ssd, evicted_bytes=evicted, total_bytes=total,
        state_bytes_in_host_ram=state_host, hbm_capacity_bytes=max(usable_hbm_bytes, 0),
        host_ram_capacity_bytes=host_ram_bytes, ssd_capacity_bytes=ssd_bytes, action=action, message=message,
    )
