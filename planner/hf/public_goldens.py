"""Which real public ``config.json`` holds each supported architecture's golden test.

A supported architecture is priced by a reader (:mod:`planner.hf.registry`); this table says which published
configs its figures were checked against, by hand, from vLLM's source. An entry names either a config file kept in
the repository (``<stem>`` of ``tests/data/configs/<stem>.config.json`` or of the catalogue's
``planner/data/models/<stem>.config.json``; ``tests/data/configs/SOURCES.md`` and ``planner/data/models/SOURCES.md``
give where each was copied from) or a test that quotes a published config in full (``tests/<file>.py::<test>``).

An architecture absent from the table is priced by a reader whose golden tests use shapes written from the vLLM
source and model cards, not a published config of that architecture: ``docs/architectures.md`` says so beside it.
A config published under a spelling vLLM does not serve (TeleChat's ``TelechatForCausalLM``, PLaMo 2's
``PlamoForCausalLM``) is listed under the name its test reads it as; the test
also checks that the published spelling is refused. A partial quotation without ``architectures`` (Granite 4.0-H
350M's, GLM-4-9B-0414's) is listed under the class its test adds.

``tests/test_public_goldens.py`` checks every entry: the file exists and declares that architecture (or is one of
those renamed), or the test exists; and every config file in the repository is listed (or is a refusal test).
"""

from __future__ import annotations

PUBLIC_CONFIG_GOLDENS: dict[str, tuple[str, ...]] = {
    # the catalogue (planner/data/models)
    "LlamaForCausalLM": ("llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "deepseek-llm-67b"),
    "MistralForCausalLM": ("mistral-7b-v0.1",),
    "MixtralForCausalLM": ("mixtral-8x7b-v0.1",),
    "Qwen2ForCausalLM": ("qwen2.5-7b", "qwen2.5-72b", "qwen2-0.5b"),
    "Qwen3ForCausalLM": ("qwen3-8b",),
    "Qwen3MoeForCausalLM": ("qwen3-235b-a22b", "qwen3-30b-a3b"),
    "GptOssForCausalLM": ("gpt-oss-20b", "gpt-oss-120b"),
    "Gemma2ForCausalLM": ("gemma-2-9b",),
    "Gemma3ForCausalLM": ("gemma-3-27b", "gemma-3-1b-it"),
    "Gemma4ForConditionalGeneration": ("gemma-4-26b-a4b", "gemma-4-26b-a4b-nvfp4"),
    "DeepseekV2ForCausalLM": ("deepseek-v2",),
    "DeepseekV3ForCausalLM": ("deepseek-v3",),
    "DeepseekV32ForCausalLM": ("deepseek-v3.2",),
    "DeepseekV4ForCausalLM": ("deepseek-v4-flash", "deepseek-v4-pro"),
    "DeepseekV41ForCausalLM": ("deepseek-v4.1-flash",),
    "JambaForCausalLM": ("jamba-1.5-mini",),
    "NemotronHForCausalLM": ("nemotron-h-8b", "nemotron-h-56b-base-8k", "nvidia-nemotron-3-nano-30b-a3b-bf16"),
    "MiMoV2FlashForCausalLM": ("mimo-v2-flash",),
    # tests/data/configs
    "GPT2LMHeadModel": ("gpt2",),
    "GPTJForCausalLM": ("gpt-j-6b",),
    "ChatGLMModel": ("chatglm3-6b",),
    "FalconForCausalLM": ("falcon-7b-instruct",),
    "FalconMambaForCausalLM": ("falcon-mamba-7b",),
    "MambaForCausalLM": ("mamba-2.8b-hf",),
    "Mamba2ForCausalLM": ("mamba-codestral-7b-v0.1",),
    "DeciLMForCausalLM": ("llama-3_3-nemotron-super-49b-v1",),
    "MPTForCausalLM": ("mpt-7b",),
    "Olmo2ForCausalLM": ("olmo-2-1124-7b",),
    "PhiForCausalLM": ("phi-2",),
    "Phi3ForCausalLM": ("phi-3-mini-4k-instruct", "phi-3-mini-128k-instruct", "phi-3-medium-4k-instruct",
                        "phi-3-medium-128k-instruct"),
    "MiniMaxM1ForCausalLM": ("minimax-m1",),
    "Zamba2ForCausalLM": ("zamba2-2.7b-instruct-v2.partial",),
    "Plamo2ForCausalLM": ("plamo-2-1b",),
    "KimiLinearForCausalLM": ("tiny-random-kimi-linear.partial",),
    "Qwen2MoeForCausalLM": ("qwen1.5-moe-a2.7b-chat",),
    "StableLmForCausalLM": ("stablelm-3b-4e1t", "stablelm-2-zephyr-1_6b"),
    "OrionForCausalLM": ("orion-14b",),
    "Starcoder2ForCausalLM": ("starcoder2-7b",),
    "MiMoForCausalLM": ("mimo-7b.partial",),
    "TeleChat2ForCausalLM": ("telechat2-115b",),
    "CohereForCausalLM": ("aya-23-8b",),
    "BaichuanForCausalLM": ("baichuan2-7b.partial",),
    "DeepseekForCausalLM": ("deepseek-moe-16b.partial",),
    "BailingMoeForCausalLM": ("ling-lite",),
    "Glm4MoeForCausalLM": ("glm-4.5-air.partial",),
    "ExaoneForCausalLM": ("exaone-3.0-7.8b-instruct.partial",),
    "Exaone4ForCausalLM": ("exaone-4.0-32b.partial",),
    "GraniteForCausalLM": ("granite-3.3-8b-instruct",),
    "GraniteMoeForCausalLM": ("granite-3.1-3b-a800m-instruct.partial",),
    "GraniteMoeHybridForCausalLM": ("granite-4.0-h-350m.partial",),
    "Llama4ForConditionalGeneration": ("llama-4-scout-17b-16e-instruct.partial",
                                       "llama-4-maverick-17b-128e-instruct.partial"),
    "MiniMaxM2ForCausalLM": ("minimax-m2.7",),
    "Qwen3NextForCausalLM": ("qwen3-next-80b-a3b-instruct-nvfp4.partial",),
    "Qwen3_5ForConditionalGeneration": ("qwen3.5-27b",),
    "Qwen3_5MoeForConditionalGeneration": ("qwen3.5-35b-a3b",),
    "Lfm2ForCausalLM": ("lfm2.5-1.2b-distilled-claude-4.6",),
    "GemmaForCausalLM": ("gemma-2b",),
    "GPTBigCodeForCausalLM": ("gpt_bigcode-santacoder",),
    "QWenLMHeadModel": ("qwen-1_8b",),
    "GPTNeoXForCausalLM": ("redpajama-incite-3b-v1",),
    "OPTForCausalLM": ("opt-125m", "opt-350m"),
    "BloomForCausalLM": ("bloom-560m.partial",),
    "DbrxForCausalLM": ("dbrx-instruct-4bit-mlx.partial",),
    "HunYuanDenseV1ForCausalLM": ("hunyuan-mt-7b",),
    "HunYuanMoEV1ForCausalLM": ("hunyuan-a13b",),
    "InternLMForCausalLM": ("internlm-7b.partial",),
    "InternLM3ForCausalLM": ("internlm3-8b-instruct.partial",),
    "InternLM2ForCausalLM": ("internlm2-7b.partial", "internlm2_5-7b.partial"),
    "MiniCPMForCausalLM": ("minicpm-2b-128k.partial", "minicpm-2b-sft-bf16.partial", "minicpm-moe-8x2b.partial"),
    "NemotronForCausalLM": ("nemotron-4-4b",),
    "OlmoForCausalLM": ("olmo-1b-hf.partial",),
    "OlmoeForCausalLM": ("olmoe-1b-7b-step23842",),
    "PanguEmbeddedForCausalLM": ("openpangu-embedded-7b.partial",),
    "PersimmonForCausalLM": ("persimmon-8b-base.partial",),
    "SeedOssForCausalLM": ("seed-oss-36b.partial",),
    "ApertusForCausalLM": ("apertus-8b.partial",),
    "Lfm2MoeForCausalLM": ("lfm2-8b-a1b.partial",),
    "Grok1ModelForCausalLM": ("grok-1.partial",),
    "Ernie4_5_MoeForCausalLM": ("ernie-4.5-21b-a3b.partial",),
    "Glm4ForCausalLM": ("glm-4-9b-0414.partial",),
    "LlavaForConditionalGeneration": ("llava-1.5-7b-hf",),
    "Qwen2_5_VLForConditionalGeneration": ("qwen2.5-vl-7b-instruct-qwen-image-te",),
    "Gemma3ForConditionalGeneration": ("gemma-3-12b-it-unsloth.partial",),
    "Mistral3ForConditionalGeneration": ("mistral-small-3.1-24b-instruct-2503.partial",),
    "Qwen3VLForConditionalGeneration": ("qwen3-vl-4b",),
    "Qwen3VLMoeForConditionalGeneration": ("qwen3-vl-30b-a3b-instruct",),
    "LLaMAForCausalLM": ("llama-7b-hf", "llama-13b-hf"),
    "AquilaForCausalLM": ("aquila2-34b.partial",),
    "PhiMoEForCausalLM": ("phi-3.5-moe-instruct",),
    "MiniCPM3ForCausalLM": ("minicpm3-4b",),
    "GlmForCausalLM": ("glm-4-9b-chat-hf",),
    "ArceeForCausalLM": ("austral-afm-sft",),
    "Dots1ForCausalLM": ("dots.llm1.base-pr4",),
    "FlexOlmoForCausalLM": ("tiny-random-flexolmo",),
    "AfmoeForCausalLM": ("tiny-random-trinity",),
    "BambaForCausalLM": ("bamba-9b",),
    "ArcticForCausalLM": ("snowflake-arctic-instruct",),
    "Cohere2ForCausalLM": ("c4ai-command-r7b-12-2024-abliterated", "tiny-cohere2"),
    "Qwen2VLForConditionalGeneration": ("qwen2-vl-2b-instruct", "qwen2-vl-7b-instruct"),
    "XverseForCausalLM": ("xverse-7b",),
    "RWForCausalLM": ("falcon-40b-rw",),
    "JAISLMHeadModel": ("jais-13b", "jais-family-590m", "jais-30b-v1"),
    "Olmo3ForCausalLM": ("olmo3-190m-zh-continue",),
    "StableLMEpochForCausalLM": ("stablelm-3b-4e1t-epoch",),
    "BaiChuanForCausalLM": ("baichuan-7b-sft",),
    "AquilaModel": ("aquila-7b",),
    "ChatGLMForConditionalGeneration": ("pica-v1",),
    "GritLM": ("gritlm-7b-vllm",),
    "SolarForCausalLM": ("solar-pro-preview-instruct",),
    "TeleFLMForCausalLM": ("tele-flm",),
    "Gemma4ForCausalLM": ("tinygemma4",),
    "MptForCausalLM": ("phogpt2",),
    # configs read under vLLM's name by a test (the published spelling is a refusal config)
    "Ernie4_5ForCausalLM": ("tests/test_registry_public_d.py::test_ernie_4_5_0_3b_under_vllms_name",),
    # configs quoted in full inside a test
    "FalconH1ForCausalLM": ("tests/test_registry.py::test_falcon_h1_0_5b",),
}
"""Supported architecture -> the real public configs its golden tests read (config stems or test ids)."""

REFUSAL_CONFIGS: frozenset[str] = frozenset({"phi-3-small-8k-instruct", "zamba2-1.2b-4f8e85c", "telechat-7b",
                                             "ernie-4.5-0.3b-base-pt", "sea-lion-7b-instruct-research"})
"""Real public configs kept as refusal tests (an architecture vLLM does not serve at the vendored commit, a format its
config class does not read, a published spelling vLLM's registry lacks): they hold no architecture's figures."""

PUBLISHED_SPELLINGS: dict[str, str] = {"telechat2-115b": "TelechatForCausalLM", "plamo-2-1b": "PlamoForCausalLM"}
"""Config files whose published ``architectures`` is a spelling vLLM's registry lacks (so kvplan refuses the file as
published, naming the nearest supported class); their tests read them under vLLM's name and also check that refusal."""

UNNAMED_QUOTATIONS: frozenset[str] = frozenset({
    "granite-4.0-h-350m.partial", "seed-oss-36b.partial", "lfm2-8b-a1b.partial", "glm-4-9b-0414.partial",
    "gemma-3-12b-it-unsloth.partial"})
"""Partial quotations that omit ``architectures``; their tests add the class they list under."""
