"""The bundled sample traces (``planner/data/traces``, read through ``importlib.resources``).

Attribution, licenses and checksums: ``planner/data/traces/README.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from planner.errors import PlanInputError
from planner.traces.readers import read_azure, read_mooncake
from planner.traces.trace import Trace
from planner.messages import msg

MOONCAKE_CITATION = ("Qin et al., \"Mooncake: Trading More Storage for Less Computation — A KVCache-centric "
                     "Architecture for Serving LLM Chatbot\", FAST '25; kvcache-ai/Mooncake, Apache-2.0")
"""Citation and license of the Mooncake traces."""

AZURE_CITATION = ("Patel et al., \"Splitwise: Efficient Generative LLM Inference Using Phase Splitting\", "
                  "ISCA 2024; Azure/AzurePublicDataset (Azure LLM inference trace 2023), CC-BY-4.0")
"""Citation and license of the Azure traces (attribution required)."""


@dataclass(frozen=True, kw_only=True)
class Sample:
    """A bundled trace.

    Attributes:
        name: short name used as ``sample:NAME``.
        filename: file in ``planner/data/traces``.
        format: reader format id.
        label: display label.
        description: one line on what it is.
        source: citation and license.
    """

    name: str
    filename: str
    format: str
    label: str
    description: str
    source: str


SAMPLES: dict[str, Sample] = {
    s.name: s
    for s in (
        Sample(name="conversation", filename="mooncake_conversation_trace.jsonl", format="mooncake",
               label="Mooncake conversation (Kimi, 1 h, 12,031 requests)",
               description="Real production chat traffic from Moonshot AI's Kimi, one hour, 512-token block hashes.",
               source=MOONCAKE_CITATION),
        Sample(name="synthetic", filename="mooncake_synthetic_trace.jsonl", format="mooncake",
               label="Mooncake synthetic (ShareGPT + L-Eval + LooGLE, 3,993 requests)",
               description="Multi-turn conversations with Poisson arrivals, 512-token block hashes.",
               source=MOONCAKE_CITATION),
        Sample(name="azure-conv", filename="AzureLLMInferenceTrace_conv.csv", format="azure",
               label="Azure conversation 2023 (19,366 requests, lengths only)",
               description="Azure LLM inference trace, conversation service: lengths and arrivals, no prefix hashes.",
               source=AZURE_CITATION),
        Sample(name="azure-code", filename="AzureLLMInferenceTrace_code.csv", format="azure",
               label="Azure code 2023 (8,819 requests, lengths only)",
               description="Azure LLM inference trace, coding service: lengths and arrivals, no prefix hashes.",
               source=AZURE_CITATION),
    )
}
"""Bundled traces by sample name."""


def get_sample(name: str) -> Sample:
    """The bundled sample called ``name``.

    Raises:
        PlanInputError: unknown name (the message lists the known ones).
    """
    try:
        return SAMPLES[name]
    except (KeyError, TypeError):
        raise PlanInputError("trace", f"sample:{name}", msg("one of {choices}",
                                                            choices=", ".join(f"sample:{n}" for n in SAMPLES))) from None


def sample_bytes(name: str) -> bytes:
    """The raw bytes of a bundled sample.

    Raises:
        PlanInputError: unknown name.
    """
    sample = get_sample(name)
    return resources.files("planner.data.traces").joinpath(sample.filename).read_bytes()


@lru_cache(maxsize=8)
def load_sample(name: str) -> Trace:
    """Read a bundled sample (cached; a :class:`Trace` is immutable).

    Raises:
        PlanInputError: unknown name.
    """
    sample = get_sample(name)
    data = sample_bytes(name)
    reader = read_mooncake if sample.format == "mooncake" else read_azure
    return reader(data, name=sample.filename, source_note=sample.source)
