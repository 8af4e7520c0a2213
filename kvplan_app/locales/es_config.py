"""Spanish for the config.json import report's notes (``planner/config_*.py``: why a field was derived, defaulted
or ignored), merged into ``es.MESSAGES``; the report's ``how`` words are in ``HOW`` (merged into ``es.STRINGS``)."""

HOW: dict[str, str] = {"read": "leído", "derived": "derivado", "defaulted": "por defecto", "ignored": "ignorado"}

CONFIG_NOTES: dict[str, str] = {
    "C4 layers (compress ratio 4) carry indexer keys": "las capas C4 (razón de compresión 4) llevan claves de indexador",
    "DeepSeek V3.2: vLLM resolves the 'auto' KV dtype to fp8_ds_mla (656 B per latent; "
    "DeepseekV32ForCausalLM.verify_and_update_config); choose bf16 for a BF16 cache":
        "DeepSeek V3.2: vLLM resuelve el tipo KV 'auto' como fp8_ds_mla (656 B por latente; "
        "DeepseekV32ForCausalLM.verify_and_update_config); elija bf16 para una caché en BF16",
    "Gemma 2 alternates local and global layers, layer 0 local (google/gemma_pytorch)":
        "Gemma 2 alterna capas locales y globales, la capa 0 es local (google/gemma_pytorch)",
    "MLA caches one latent per token and layer, not K and V per head":
        "MLA guarda un latente por token y capa, no K y V por cabeza",
    "MLP / MoE blocks store no KV": "los bloques MLP / MoE no guardan KV",
    "MTP / draft layers hold no serving KV here": "las capas MTP / de borrador no guardan aquí KV de servicio",
    "Mamba2 inner size is mamba_num_heads x mamba_head_dim = {inner:,} (vLLM), not expand x hidden_size":
        "el tamaño interno de Mamba2 es mamba_num_heads x mamba_head_dim = {inner:,} (vLLM), no expand x hidden_size",
    "MiMo-V2: vLLM's sliding layers take sliding_window_size (MiMoV2FlashDecoderLayer)":
        "MiMo-V2: las capas deslizantes de vLLM usan sliding_window_size (MiMoV2FlashDecoderLayer)",
    "V equals K on full-attention layers; vLLM still caches K and V (Gemma4Attention loads the K weights into both "
    "slots), so both are counted":
        "V es igual a K en las capas de atención completa; vLLM guarda aun así K y V (Gemma4Attention carga los pesos de "
        "K en ambas posiciones), así que se cuentan las dos",
    "a KV format was chosen ({id})": "se eligió un formato KV ({id})",
    "absent or null: MHA, one KV head per attention head": "ausente o null: MHA, una cabeza KV por cabeza de atención",
    "absent: Gemma 3's default, every 6th layer global (Hugging Face Gemma3TextConfig)":
        "ausente: el valor por defecto de Gemma 3, una capa global de cada 6 (Hugging Face Gemma3TextConfig)",
    "absent: Llama4TextConfig default": "ausente: el valor por defecto de Llama4TextConfig",
    "absent: layer i is global (NoPE) when (i+1) % {every} == 0 (Hugging Face Llama4TextConfig)":
        "ausente: la capa i es global (NoPE) cuando (i+1) % {every} == 0 (Hugging Face Llama4TextConfig)",
    "absent: vLLM mamba_ssm_cache_dtype 'auto' = the conv state dtype (_mamba_state_dtype)":
        "ausente: mamba_ssm_cache_dtype 'auto' de vLLM = el tipo del estado conv (_mamba_state_dtype)",
    "absent: vLLM's Nemotron-H hook defaults the SSM state to float32 (NemotronHForCausalLMConfig)":
        "ausente: el ajuste de vLLM para Nemotron-H pone por defecto el estado SSM en float32 "
        "(NemotronHForCausalLMConfig)",
    "chosen (the engine's --mamba-ssm-cache-dtype); a dtype in config.json is not used":
        "elegido (--mamba-ssm-cache-dtype del motor); no se usa un tipo de config.json",
    "compress ratio 0: sliding-window branch only": "razón de compresión 0: solo la rama de ventana deslizante",
    "compressed-tensors: vLLM reads kv_cache_scheme": "compressed-tensors: vLLM lee kv_cache_scheme",
    "config.json does not say the KV dtype; BF16 assumed (engines' 'auto'); choose a KV format to change it":
        "config.json no indica el tipo KV; se supone BF16 (el 'auto' de los motores); elija un formato KV para "
        "cambiarlo",
    "conv (I + 2 G N) x (K-1) = ({inner:,} + 2 x {groups} x {state}) x {value}; temporal H x P x N = {heads} x "
    "{head_dim} x {state} (vLLM mamba2_state_shape, I = H x P)":
        "conv (I + 2 G N) x (K-1) = ({inner:,} + 2 x {groups} x {state}) x {value}; temporal H x P x N = {heads} x "
        "{head_dim} x {state} (vLLM mamba2_state_shape, I = H x P)",
    "conv (K-1) x (2 H_k d_k + H_v d_v) = {value} x {conv_dim:,}; recurrent H_v x d_v x d_k = {h_v} x {d_v} x {d_k} "
    "elements per layer and sequence (vLLM gated_delta_net_state_shape)":
        "conv (K-1) x (2 H_k d_k + H_v d_v) = {value} x {conv_dim:,}; recurrente H_v x d_v x d_k = {h_v} x {d_v} x "
        "{d_k} elementos por capa y secuencia (vLLM gated_delta_net_state_shape)",
    "conv I x (K-1) = {inner:,} x {value}; temporal I x N = {inner:,} x {state}, I = mamba_expand x hidden_size = "
    "{expand} x {hidden:,} (vLLM mamba1_state_shape)":
        "conv I x (K-1) = {inner:,} x {value}; temporal I x N = {inner:,} x {state}, I = mamba_expand x hidden_size = "
        "{expand} x {hidden:,} (vLLM mamba1_state_shape)",
    "conv state dtype: vLLM mamba_cache_dtype 'auto' = the model dtype, BF16 assumed":
        "tipo del estado conv: mamba_cache_dtype 'auto' de vLLM = el tipo del modelo, se supone BF16",
    "cross-layer sharing: only KV-source layers store entries":
        "compartición entre capas: solo las capas fuente de KV guardan entradas",
    "every {pattern}th layer global (layer i global when (i+1) % {pattern} == 0)":
        "una capa global de cada {pattern} (la capa i es global cuando (i+1) % {pattern} == 0)",
    "full-attention layers use global_head_dim and, with attention_k_eq_v, num_global_key_value_heads (Gemma 4)":
        "las capas de atención completa usan global_head_dim y, con attention_k_eq_v, num_global_key_value_heads "
        "(Gemma 4)",
    "hybrid_layer_pattern: 0 full attention, 1 sliding window (MiMo-V2)":
        "hybrid_layer_pattern: 0 atención completa, 1 ventana deslizante (MiMo-V2)",
    "index_head_dim {index_dim} FP8 + FP32 scale per 128 = {vector_bytes} B per token and layer, whatever the KV "
    "dtype (vLLM Indexer / DeepseekV32IndexerCache)":
        "index_head_dim {index_dim} FP8 + escala FP32 cada 128 = {vector_bytes} B por token y capa, sea cual sea el "
        "tipo KV (vLLM Indexer / DeepseekV32IndexerCache)",
    "index_source_layer_ids that are also KV sources (others reuse a source's keys)":
        "index_source_layer_ids que también son fuentes de KV (las demás reutilizan las claves de una fuente)",
    "kv_lora_rank + qk_rope_head_dim, no factor 2": "kv_lora_rank + qk_rope_head_dim, sin factor 2",
    "language-model fields read from text_config": "campos del modelo de lenguaje leídos de text_config",
    "layer i is attention when i % {period} == {offset}, else Mamba (Hugging Face JambaConfig)":
        "la capa i es de atención cuando i % {period} == {offset}; si no, Mamba (Hugging Face JambaConfig)",
    "layer i is full attention when (i+1) % {every} == 0, else linear attention (Hugging Face Qwen3NextConfig default "
    "layer_types)":
        "la capa i es de atención completa cuando (i+1) % {every} == 0; si no, de atención lineal (layer_types por "
        "defecto de Hugging Face Qwen3NextConfig)",
    "layers from max_window_layers on slide (Qwen2)": "las capas desde max_window_layers en adelante deslizan (Qwen2)",
    "no kv_cache_scheme / kv_cache_quant_algo: the checkpoint does not set the KV dtype":
        "sin kv_cache_scheme / kv_cache_quant_algo: el checkpoint no fija el tipo KV",
    "not in config: no maximum context known": "no está en la configuración: no se conoce el contexto máximo",
    "read as Llama 4 chunked attention only for model_type llama4 (this is {value})":
        "se lee como atención por fragmentos de Llama 4 solo para model_type llama4 (este es {value})",
    "shared layers reuse another layer's indexer selection and cache no keys":
        "las capas compartidas reutilizan la selección del indexador de otra capa y no guardan claves",
    "sliding layers use swa_num_key_value_heads / swa_head_dim / swa_v_head_dim (MiMo-V2)":
        "las capas deslizantes usan swa_num_key_value_heads / swa_head_dim / swa_v_head_dim (MiMo-V2)",
    "sliding_window set with no per-layer pattern: all layers slide":
        "sliding_window fijado sin patrón por capa: todas las capas deslizan",
    "temporal (SSM / recurrent) state dtype": "tipo del estado temporal (SSM / recurrente)",
    "the checkpoint declares FP8 KV (compressed-tensors); vLLM's 'auto' KV dtype follows it to fp8 (Attention.__init__)":
        "el checkpoint declara KV en FP8 (compressed-tensors); el tipo KV 'auto' de vLLM lo sigue hasta fp8 "
        "(Attention.__init__)",
    "the checkpoint declares {upper} KV (ModelOpt); vLLM's 'auto' KV dtype follows it ({value}, "
    "get_kv_cache_quant_algo_string)":
        "el checkpoint declara KV en {upper} (ModelOpt); el tipo KV 'auto' de vLLM lo sigue ({value}, "
        "get_kv_cache_quant_algo_string)",
    "the last num_kv_shared_layers layers reuse the KV of an earlier layer of their type and store none (Hugging Face "
    "Gemma3nTextConfig: first_kv_shared_layer_idx = num_hidden_layers - num_kv_shared_layers)":
        "las últimas num_kv_shared_layers capas reutilizan el KV de una capa anterior de su tipo y no guardan ninguno "
        "(Hugging Face Gemma3nTextConfig: first_kv_shared_layer_idx = num_hidden_layers - num_kv_shared_layers)",
    "the weights' dtype; never used as the KV dtype": "el tipo de los pesos; nunca se usa como tipo KV",
    "use_sliding_window is false": "use_sliding_window es false",
    "used only with attention_k_eq_v true (vLLM Gemma4DecoderLayer); full layers keep num_key_value_heads":
        "solo se usa con attention_k_eq_v true (vLLM Gemma4DecoderLayer); las capas completas mantienen "
        "num_key_value_heads",
    "{id} chosen: vLLM stores DeepSeek V3.2 FP8 latents as fp8_ds_mla (512 FP8 + 4 FP32 scales + 64 BF16 RoPE = "
    "656 B)":
        "{id} elegido: vLLM guarda los latentes FP8 de DeepSeek V3.2 como fp8_ds_mla (512 FP8 + 4 escalas FP32 + 64 "
        "RoPE en BF16 = 656 B)",
    "{why}: hidden_size / num_attention_heads": "{why}: hidden_size / num_attention_heads",
    "head_dim is null": "head_dim es null",
    "head_dim absent": "falta head_dim",
    "MTP layers hold KV only as a speculative-decoding draft (not modelled)":
        "las capas MTP solo guardan KV como borrador de decodificación especulativa (no se modela)",
    "an inference-library cache choice, not the serving engine's":
        "una elección de caché de la biblioteca de inferencia, no del motor de servicio",
    "read by training / eager code; serving engines always cache":
        "lo lee el código de entrenamiento / eager; los motores de servicio siempre usan caché",
}
"""config import notes, English template -> Spanish."""
