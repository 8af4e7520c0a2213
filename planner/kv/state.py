"""Per-sequence state of Mamba1, Mamba2 and linear-attention (Gated DeltaNet)
layers: fixed once a sequence has a token, split over TP as vLLM's
``MambaStateShapeCalculator`` splits it
(``vllm/model_executor/layers/mamba/mamba_utils.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from planner.errors import PlanInputError
from planner.kv.formats import cdiv
from planner.kv.group import KVGroup, PageUse, vector_formula
from planner.messages import msg

@dataclass(frozen=True, kw_only=True)
class StateGroup(KVGroup):
    """Fixed per-sequence state (SSM / linear attention), independent of length
    once the sequence has a token.

    Either ``fixed_bytes_per_layer``, bytes per layer and sequence (a reported
    figure; not split by TP), or ``num_units`` TP-split units (heads or channels) of
    ``elements_per_unit`` elements each in ``kv_format``: a GPU holds
    ``ceil(num_units / TP)`` units (vLLM divides the state's head / channel
    dimension by TP, ``MambaStateShapeCalculator``).
    """

    fixed_bytes_per_layer: int = 0
    num_units: int = 0
    elements_per_unit: int = 0
    shape_note: str = ""

    def units_per_gpu(self, tp: int = 1) -> int:
        """State units (heads or channels) one GPU holds."""
        return max(1, cdiv(self.num_units, tp)) if self.num_units else 0

    def units_at(self, tp: int = 1) -> int:
        """All units at ``tp`` before the split (Mamba2 adds groups at some TP)."""
        return self.num_units

    def check_split(self, tp: int) -> None:
        """Refuse a TP degree that does not divide the state: vLLM's ``divide``
        asserts an exact split (``MambaStateShapeCalculator``), so the engine
        would not start.

        Raises:
            PlanInputError: ``units_at(tp)`` not a multiple of ``tp``.
        """
        units = self.units_at(tp)
        if units and units % tp:
            raise PlanInputError("tp", tp, msg("a divisor of {units:,} ({name}: vLLM splits it exactly over TP)",
                                               units=units, name=self.name))

    @property
    def vllm_kind(self) -> str | None:
        # vLLM pages SSM / linear-attention state as a MambaSpec, one page per
        # sequence; a fixed reported figure has no shapes to page.
        return "mamba" if self.num_units else None

    vllm_per_sequence: ClassVar[bool] = True

    def vllm_max_blocks(self, max_model_len: int, max_num_batched_tokens: int, block_size: int) -> int:
        """One page per layer and sequence (``MambaSpec.max_memory_usage_bytes``; prefix caching off)."""
        return 1

    def vllm_blocks_for(self, num_tokens: int, max_model_len: int, max_num_batched_tokens: int,
                        block_size: int) -> int:
        return 1 if num_tokens else 0

    def vllm_reason(self, use: PageUse) -> str:
        return msg("{names}: one Mamba page per layer and sequence, {blocks} x {page_size_bytes:,} B (the "
                   "state, {value:,} B per layer, padded to the attention page)", names=use.names, blocks=use.blocks,
                   page_size_bytes=use.page_size_bytes, value=use.theory_bytes // max(use.layers, 1))

    @property
    def replicated_on_tp(self) -> bool:
        return not self.num_units

    def kv_heads_per_gpu(self, tp: int = 1) -> int | None:
        return None

    @property
    def width(self) -> str:
        return self.shape_note or (f"{self.num_units} x {self.elements_per_unit}" if self.num_units else "fixed")

    def entry_bytes(self, tp: int = 1) -> int:
        if not self.num_units:
            return self.fixed_bytes_per_layer
        return self.kv_format.vector_bytes(self.units_per_gpu(tp) * self.elements_per_unit)

    def entries(self, num_tokens: int) -> int:
        return 1 if num_tokens > 0 else 0

    @property
    def capped(self) -> bool:
        return True

    def entry_formula(self, tp: int = 1) -> str:
        if not self.num_units:
            return msg("fixed {state_bytes:,} B per layer and sequence (reported)",
                       state_bytes=self.fixed_bytes_per_layer)
        units = self.units_per_gpu(tp)
        n = units * self.elements_per_unit
        return (msg("{shape_note}: {split_formula} = {units:,} units x {elements_per_unit} elements = {n:,} elements; "
                    "{vector_formula} per layer and sequence", shape_note=self.shape_note,
                    split_formula=self.split_formula(tp), units=units, elements_per_unit=self.elements_per_unit, n=n,
                    vector_formula=vector_formula(self.kv_format, n)))

    def split_formula(self, tp: int = 1) -> str:
        """How :meth:`units_per_gpu` splits the units over ``tp`` ranks, in words."""
        return f"ceil({self.num_units:,} / {tp})"


@dataclass(frozen=True, kw_only=True)
class Mamba2ConvStateGroup(StateGroup):
    """Mamba2 convolution state: ``conv_kernel - 1`` elements for each of
    ``intermediate_size + 2 * n_groups * state_size`` channels per layer and
    sequence. Under TP a group that does not divide is replicated until it does,
    then the channels divide: vLLM ``MambaStateShapeCalculator.mamba2_state_shape``
    with ``extra_groups_for_head_shards`` (``n_groups % TP == 0``: no change;
    else ``n_groups + (TP - n_groups)``) in
    ``vllm/model_executor/layers/mamba/mamba_utils.py``."""

    intermediate_size: int
    n_groups: int
    state_size: int

    def groups_at(self, tp: int) -> int:
        """Groups after vLLM's ``extra_groups_for_head_shards`` at ``tp``."""
        return self.n_groups if self.n_groups % tp == 0 else self.n_groups + (tp - self.n_groups)

    def units_at(self, tp: int = 1) -> int:
        return self.intermediate_size + 2 * self.groups_at(tp) * self.state_size

    def units_per_gpu(self, tp: int = 1) -> int:
        return max(1, cdiv(self.units_at(tp), tp))

    def split_formula(self, tp: int = 1) -> str:
        g = self.groups_at(tp)
        return f"ceil(({self.intermediate_size:,} + 2 x {g} groups x {self.state_size}) / {tp})"
