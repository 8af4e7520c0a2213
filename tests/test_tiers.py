"""Tiers: link and node catalog, reload times, placement of sessions on HBM / host RAM / SSD."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.errors import PlanInputError
from planner.plan.placement import place_sessions
from planner.catalog.tiers import GiB, LINKS, NODES, node_for, reload_seconds, resolve_links, ssd_reload_bytes_per_s
from planner.catalog.entries import GPUS


def test_link_figures():
    # PCI-SIG: PCIe 5.0 = 32 GT/s x 16 lanes ~ 64 GB/s per direction (128 GB/s both); PCIe 4.0 half that
    assert LINKS["pcie5-x16"].bytes_per_s == 64e9
    assert LINKS["pcie4-x16"].bytes_per_s == 32e9
    # NVLink-C2C: 900 GB/s total = 450 GB/s per direction (Grace Hopper data sheet)
    assert LINKS["nvlink-c2c"].bytes_per_s == 450e9
    # typical NVMe sequential read: Gen4 x4 ~7 GB/s, Gen5 x4 ~14 GB/s
    assert LINKS["nvme-gen4"].bytes_per_s == 7e9 and LINKS["nvme-gen5"].bytes_per_s == 14e9
    assert all(link.source for link in LINKS.values())


def test_every_catalog_accelerator_has_a_node():
    assert set(GPUS) <= set(NODES)
    assert node_for("custom").host_link == "pcie5-x16"  # the default node


def test_dgx_h200_per_gpu_tiers():
    # DGX H200: 32 x 64 GiB DIMMs = 2,048 GiB over 8 GPUs = 256 GiB per GPU;
    # 8 x 3.84 TB NVMe = 30.72 TB over 8 GPUs = 3.84 TB = 3,840,000,000,000 B per GPU
    node = node_for("h200")
    assert node.host_ram_bytes_per_gpu == 256 * GiB
    assert node.ssd_bytes_per_gpu == 3_840_000_000_000
    host, ssd = resolve_links("h200")
    assert (host.id, ssd.id) == ("pcie5-x16", "nvme-gen4")
    assert resolve_links("gb200")[0].id == "nvlink-c2c"
    assert resolve_links("a100-80gb")[0].id == "pcie4-x16"


def test_links_can_be_overridden_and_are_checked():
    assert resolve_links("h200", "nvlink-c2c", "nvme-gen5")[1].id == "nvme-gen5"
    with pytest.raises(PlanInputError):
        resolve_links("h200", "nvme-gen4")  # an SSD link is not a host link
    with pytest.raises(PlanInputError):
        resolve_links("h200", "auto", "pcie5-x16")


def test_reload_times():
    # 890,000,000 B over 64 GB/s = 0.01390625 s; SSD behind a 64 GB/s host link at 7 GB/s: 7 GB/s binds
    assert reload_seconds(890_000_000, 64e9) == pytest.approx(0.01390625)
    host, ssd = resolve_links("h200")
    assert ssd_reload_bytes_per_s(host, ssd) == 7e9


def test_placement_worked_by_hand():
    # 10 sessions, HBM holds 4, each runs 1/4 of its time: ceil(10 x 0.25) = 3 run at once <= 4: all admitted.
    # HBM: 4 sessions + 1 prefix = 100 + 4 x 50 = 300 B; 6 parked.
    # states in host RAM: 3 running x 5 B + floor(7 paused x 5 B x 0.5 alive) = 15 + 17 = 32 B
    # host RAM 120 B: 32 B of states, 88 B free -> 1 parked tail (50 B): host = 82 B
    # SSD 100 B: 2 tails = 100 B; 3 tails evicted = 150 B; total = 300 + 82 + 100 + 150 = 632 B
    p = place_sessions(10, hbm_sessions=4, active_fraction=0.25, usable_hbm_bytes=320, prefix_bytes=100,
                       num_prefixes=1, per_session_bytes=50, state_bytes=5, state_alive_fraction=0.5,
                       host_ram_bytes=120, ssd_bytes=100)
    assert (p.sessions, p.active_sessions, p.sessions_in_hbm) == (10, 3, 4)
    assert (p.sessions_in_host_ram, p.sessions_on_ssd, p.sessions_evicted) == (1, 2, 3)
    assert (p.hbm_bytes, p.host_ram_bytes, p.ssd_bytes, p.evicted_bytes) == (300, 82, 100, 150)
    assert p.total_bytes == 632 and p.state_bytes_in_host_ram == 32
    assert p.action == "evict"


def test_placement_rejects_running_sessions_beyond_hbm():
    # each session runs all the time (fraction 1): HBM holds 4, so 6 of 10 are refused
    p = place_sessions(10, hbm_sessions=4, active_fraction=1.0, usable_hbm_bytes=400, prefix_bytes=0,
                       num_prefixes=1, per_session_bytes=100, state_bytes=0, state_alive_fraction=1.0,
                       host_ram_bytes=10**6, ssd_bytes=10**6)
    assert p.sessions == 4 and p.sessions_rejected == 6 and p.action == "reject"
    assert "cannot be offloaded" in p.message


def test_placement_offloads_when_room_is_left():
    p = place_sessions(8, hbm_sessions=4, active_fraction=0.5, usable_hbm_bytes=400, prefix_bytes=0,
                       num_prefixes=1, per_session_bytes=100, state_bytes=0, state_alive_fraction=1.0,
                       host_ram_bytes=250, ssd_bytes=1000)
    # 4 parked: 2 fit in 250 B of host RAM, 2 go to SSD
    assert (p.sessions_in_host_ram, p.sessions_on_ssd, p.sessions_evicted) == (2, 2, 0)
    assert p.action == "offload"


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5_000), st.integers(0, 2_000), st.floats(0, 1), st.integers(0, 10**9), st.integers(1, 50),
       st.integers(0, 10**8), st.integers(0, 10**7), st.floats(0, 1), st.integers(0, 10**12), st.integers(0, 10**12))
def test_tier_bytes_add_up_to_the_total(n, hbm_sessions, f, prefix, k, per, state, alive, host, ssd):
    p = place_sessions(n, hbm_sessions=hbm_sessions, active_fraction=f, usable_hbm_bytes=10**12, prefix_bytes=prefix,
                       num_prefixes=k, per_session_bytes=per, state_bytes=state, state_alive_fraction=alive,
                       host_ram_bytes=host, ssd_bytes=ssd)
    assert p.hbm_bytes + p.host_ram_bytes + p.ssd_bytes + p.evicted_bytes == p.total_bytes
    assert p.host_ram_bytes <= host and p.ssd_bytes <= ssd
    assert p.sessions + p.sessions_rejected == n
    assert p.sessions_in_hbm + p.sessions_in_host_ram + p.sessions_on_ssd + p.sessions_evicted == p.sessions
    assert p.active_sessions <= max(hbm_sessions, 0)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**9), st.floats(0, 1), st.floats(0, 1), st.integers(0, 10**12), st.integers(0, 10**7),
       st.integers(0, 10**16), st.integers(0, 10**16))
def test_carrying_what_hbm_holds_parks_nothing(sessions, f, alive, per, state, host, ssd):
    """The plan's array core relies on this: with target = HBM sessions, every session is admitted to HBM."""
    from planner.plan.placement import place_counts

    c = place_counts(sessions, hbm_sessions=sessions, active_fraction=f, num_prefixes=1, per_session_bytes=per,
                     state_bytes=state, state_alive_fraction=alive, host_ram_bytes=host, ssd_bytes=ssd)
    assert int(c.parked) == 0 and int(c.rejected) == 0
    assert int(c.in_host_ram) == int(c.on_ssd) == int(c.evicted) == 0
