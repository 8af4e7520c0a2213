"""Memory tiers behind the HBM KV pool: host RAM and SSD, their links and nodes (placement: planner.plan.placement).

The usual serving hierarchy (docs/capacity.md): HBM first, host RAM second (the first
recovery tier), SSD third. Running sessions live in HBM; paused ("parked")
sessions may sit in host RAM or on SSD. Offload changes latency and cost, never
the byte count: a parked session comes back either by a reload (bytes / link
bandwidth) or by a recompute (prefill of its own tokens).

Capacities are **per GPU**: host RAM per node / GPUs per node, SSD per node /
GPUs per node (offload budgets in LMCache and Mooncake are per worker, i.e. per
GPU). Link bandwidths are **per direction**, nominal.

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

from dataclasses import dataclass

from planner.errors import PlanInputError
from planner.units import GB, GiB, TB
from planner.messages import msg

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
        raise PlanInputError(field, link_id, msg("one of {choices}", choices=", ".join((AUTO, *allowed))))
    return LINKS[link_id]


def resolve_links(gpu_id: str, host_link: str = AUTO, ssd_link: str = AUTO) -> tuple[Link, Link]:
    """(host link, SSD link) for an accelerator; ``auto`` takes its node's."""
    node = node_for(gpu_id)
    host = get_link(node.host_link if host_link == AUTO else host_link, field="host_link", allowed=HOST_LINKS)
    ssd = get_link(node.ssd_link if ssd_link == AUTO else ssd_link, field="ssd_link", allowed=SSD_LINKS)
    return host, ssd


def reload_seconds(num_bytes, bytes_per_s):
    """Seconds to move ``num_bytes`` (bytes) over a link of ``bytes_per_s`` (bytes/s, per direction):
    ``num_bytes / bytes_per_s``. Numbers or numpy arrays (the plan's array core prices every
    reload with it)."""
    return num_bytes / bytes_per_s


def ssd_reload_bytes_per_s(host: Link, ssd: Link) -> float:
    """SSD -> HBM goes through the host link too: the slower of the two."""
    return min(host.bytes_per_s, ssd.bytes_per_s)


# ---------------------------------------------------------------------------
# Placement
# ---------------------------------------------------------------------------
