"""Spanish for planner's notes, warnings and refusals shown on pages.

``NOTES``: English template (``planner.messages.msg``) -> Spanish, same ``{fields}`` (merged into ``es.MESSAGES``).
"""

NOTES: dict[str, str] = {
    # -- joins and small words ---------------------------------------------------------------------------------------
    "{first} and {second}": "{first} y {second}",
    "{first}; {rest}": "{first}; {rest}",
    "{note} {message}": "{note} {message}",
    "{gpus:,} GPU": "{gpus:,} GPU",
    "{gpus:,} GPUs": "{gpus:,} GPU",
    "GPU": "GPU",
    "Context": "Contexto",
    "Context + output": "Contexto + salida",
    "weights": "pesos",
    "memory utilization": "uso de memoria",
    "HBM setting (GiB; none = device)": "ajuste de HBM (GiB; none = el del dispositivo)",
    "reported memory": "memoria informada",
    "vendor memory figure": "cifra de memoria del fabricante",
    # -- model notes -----------------------------------------------------------------------------------------------
    "{what} ({tokens:,} tokens) exceeds {model}'s maximum context ({max:,} tokens): the bytes are computed, the model "
    "cannot serve it.":
        "{what} ({tokens:,} tokens) supera el contexto máximo de {model} ({max:,} tokens): los bytes se calculan, "
        "pero el modelo no puede servirlo.",
    "{inside:,.6g} B/token inside the {w:,}-token window; the window caps the KV at {w:,} tokens ({past:,.6g} B/token "
    "past it)":
        "{inside:,.6g} B/token dentro de la ventana de {w:,} tokens; la ventana limita el KV a {w:,} tokens "
        "({past:,.6g} B/token más allá)",
    "{inside:,.6g} B/token inside the {w:,}-token window; the window caps the windowed layers' KV at {w:,} tokens "
    "({past:,.6g} B/token past it)":
        "{inside:,.6g} B/token dentro de la ventana de {w:,} tokens; la ventana limita el KV de las capas con ventana "
        "a {w:,} tokens ({past:,.6g} B/token más allá)",
    # -- how a model's KV is computed (planner.kv.models.how_computed, each group's entry formula) -----------------------
    "{k_head_dim} (K) + {v_head_dim} (V)": "{k_head_dim} (K) + {v_head_dim} (V)",
    "{k_head_dim} (K) + {v_head_dim} (V, differs)": "{k_head_dim} (K) + {v_head_dim} (V, distinta)",
    "heads per GPU {split}; {parts}; {heads} x ({k} + {v}) = {entry_bytes} B":
        "cabezas por GPU {split}; {parts}; {heads} x ({k} + {v}) = {entry_bytes} B",
    "{heads} (TP {tp} > {kv_heads} KV heads: replicated, never below one)":
        "{heads} (TP {tp} > {kv_heads} cabezas KV: replicadas, nunca menos de una)",
    "{kv_lora_rank} (latent) + {qk_rope_head_dim} (rope) = {value}":
        "{kv_lora_rank} (latente) + {qk_rope_head_dim} (rope) = {value}",
    "one latent of {kv_lora_rank} + {qk_rope_head_dim} = {n} channels, no factor 2, replicated on each of {tp} TP "
    "rank(s): {vector_formula}":
        "un latente de {kv_lora_rank} + {qk_rope_head_dim} = {n} canales, sin factor 2, replicado en cada uno de los "
        "{tp} rango(s) TP: {vector_formula}",
    "one entry of {entry_dim} channels per {compress_ratio} token(s), replicated on TP: {vector_formula}":
        "una entrada de {entry_dim} canales cada {compress_ratio} token(s), replicada en TP: {vector_formula}",
    "{entry_dim} (indexer key)": "{entry_dim} (clave del indexador)",
    "one indexer key of {entry_dim} channels per token, replicated on TP: {vector_formula}":
        "una clave de indexador de {entry_dim} canales por token, replicada en TP: {vector_formula}",
    "ring of the last {window_tokens} tokens x {entry_dim} channels, replicated on TP: {vector_formula} per token":
        "anillo de los últimos {window_tokens} tokens x {entry_dim} canales, replicado en TP: {vector_formula} por "
        "token",
    "{shape_note}: {split_formula} = {units:,} units x {elements_per_unit} elements = {n:,} elements; "
    "{vector_formula} per layer and sequence":
        "{shape_note}: {split_formula} = {units:,} unidades x {elements_per_unit} elementos = {n:,} elementos; "
        "{vector_formula} por capa y secuencia",
    "fixed {state_bytes:,} B per layer and sequence (reported)": "{state_bytes:,} B fijos por capa y secuencia (publicado)",
    "{num_layers} x {entry_bytes} B / {tokens_per_entry} ({name})":
        "{num_layers} x {entry_bytes} B / {tokens_per_entry} ({name})",
    "{terms} = {arch:,.6g} B/token": "{terms} = {arch:,.6g} B/token",
    "{sum} + {term}": "{sum} + {term}",
    "no growing groups known": "no se conoce ningún grupo que crezca",
    "{text}; reported {reported:,.6g} B/token": "{text}; publicado {reported:,.6g} B/token",
    "Per GPU at TP {tp}, PP {pp}: each group's layers per GPU = ceil(layers / {pp}); KV heads per GPU = max(1, "
    "ceil(H_kv / {tp})); latents and compressed entries are replicated on TP.":
        "Por GPU con TP {tp}, PP {pp}: capas de cada grupo por GPU = ceil(capas / {pp}); cabezas KV por GPU = max(1, "
        "ceil(H_kv / {tp})); los latentes y las entradas comprimidas se replican en TP.",
    "Total in the pool per GPU: {kv_bytes:,} B; per replica ({gpus:,} GPU): {kv_bytes_per_replica:,} B; outside the "
    "pool: {state_bytes:,} B per session.":
        "Total en el pool por GPU: {kv_bytes:,} B; por réplica ({gpus:,} GPU): {kv_bytes_per_replica:,} B; fuera del "
        "pool: {state_bytes:,} B por sesión.",
    "Total in the pool per GPU: {kv_bytes:,} B; per replica ({gpus:,} GPUs): {kv_bytes_per_replica:,} B; outside the "
    "pool: {state_bytes:,} B per session.":
        "Total en el pool por GPU: {kv_bytes:,} B; por réplica ({gpus:,} GPU): {kv_bytes_per_replica:,} B; fuera del "
        "pool: {state_bytes:,} B por sesión.",
    "{n:,} // {tokens_per_entry} = {entries:,} entries": "{n:,} // {tokens_per_entry} = {entries:,} entradas",
    "in the HBM pool": "en el pool de HBM",
    "outside the pool (per session)": "fuera del pool (por sesión)",
    "{name} [{kv_format}]: entry = {formula}. {num_layers_per_gpu} layer(s) x {ent} x {entry_bytes:,} B = {bytes:,} "
    "B, {where}.":
        "{name} [{kv_format}]: entrada = {formula}. {num_layers_per_gpu} capa(s) x {ent} x {entry_bytes:,} B = "
        "{bytes:,} B, {where}.",
    " x {coefficient_scale:.4g} (largest PP stage)": " x {coefficient_scale:.4g} (la mayor etapa PP)",
    "Growing KV uses the reported coefficient: ceil({reported_kv_bytes_per_token:,.6g} B/token{scale} x {n:,}) = "
    "{growing_bytes:,} B. Architecture check: {explanation}.":
        "El KV creciente usa el coeficiente publicado: ceil({reported_kv_bytes_per_token:,.6g} B/token{scale} x "
        "{n:,}) = {growing_bytes:,} B. Comprobación con la arquitectura: {explanation}.",
    "{entries} state per sequence": "{entries} estado por secuencia",
    "min({n:,}, cap) = {entries:,} entries": "min({n:,}, límite) = {entries:,} entradas",
    "{entries:,} entries": "{entries:,} entradas",
    # -- vLLM paging and the engine view ----------------------------------------------------------------------------
    "state layers of different shapes: vLLM's Mamba grouping of them is not modelled":
        "capas de estado de formas distintas: no se modela cómo las agrupa vLLM para Mamba",
    "a Mamba hybrid whose attention layers have several page sizes: vLLM's page alignment for it is not modelled":
        "un híbrido Mamba cuyas capas de atención tienen varios tamaños de página: no se modela cómo alinea vLLM sus "
        "páginas",
    "hybrid KV cache manager off (e.g. with a KV connector): vLLM stores full KV on sliding and chunked layers too "
    "(unify_hybrid_kv_cache_specs)":
        "gestor híbrido de la caché KV desactivado (p. ej. con un conector de KV): vLLM guarda el KV completo también "
        "en las capas deslizantes y por fragmentos (unify_hybrid_kv_cache_specs)",
    "attention block size raised from {block} to {needed} tokens so that an attention page ({needed} x {per_token:,} "
    "B) holds a Mamba page of {raw_page:,} B (HybridAttentionMambaModelConfig)":
        "tamaño de bloque de atención elevado de {block} a {needed} tokens para que una página de atención ({needed} x "
        "{per_token:,} B) contenga una página Mamba de {raw_page:,} B (HybridAttentionMambaModelConfig)",
    "Mamba page of {raw_page:,} B padded to the attention page of {mamba_page:,} B (+{value:.2f} %, "
    "mamba_page_size_padded)":
        "página Mamba de {raw_page:,} B rellenada hasta la página de atención de {mamba_page:,} B (+{value:.2f} %, "
        "mamba_page_size_padded)",
    "{names}: page size {page:,} B grown to {max_page:,} B by a block size of {value} tokens "
    "(unify_kv_cache_spec_page_size)":
        "{names}: tamaño de página de {page:,} B ampliado a {max_page:,} B con un tamaño de bloque de {value} tokens "
        "(unify_kv_cache_spec_page_size)",
    "{names}: {layers} layers fill {n} KV-cache group(s) of {group_size}: {pad} padding layer(s) "
    "(_get_kv_cache_groups_uniform_page_size)":
        "{names}: {layers} capas ocupan {n} grupo(s) de caché KV de {group_size}: {pad} capa(s) de relleno "
        "(_get_kv_cache_groups_uniform_page_size)",
    "the reported coefficient": "el coeficiente publicado",
    "{what}: vLLM's paging of this layout is not modelled; engine view = theory for it":
        "{what}: no se modela la paginación de vLLM para esta disposición; vista del motor = teoría para ella",
    "{names}: one Mamba page per layer and sequence, {blocks} x {page_size_bytes:,} B (the state, {value:,} B per "
    "layer, padded to the attention page)":
        "{names}: una página Mamba por capa y secuencia, {blocks} x {page_size_bytes:,} B (el estado, {value:,} B por "
        "capa, rellenado hasta la página de atención)",
    "{why}; plus {pad} padding layer(s)": "{why}; más {pad} capa(s) de relleno",
    "{names}: stored as full attention (hybrid manager off): ceil({n:,} / {block_size}) = {blocks:,} blocks per layer "
    "instead of a capped window":
        "{names}: guardado como atención completa (gestor híbrido desactivado): ceil({n:,} / {block_size}) = "
        "{blocks:,} bloques por capa en lugar de una ventana limitada",
    "{names}: block rounding, ceil({n:,} / {block_size}) = {blocks:,} blocks = {value:,} token slots per layer":
        "{names}: redondeo a bloques, ceil({n:,} / {block_size}) = {blocks:,} bloques = {value:,} huecos de token por "
        "capa",
    "{names}: theory keeps min(n, W) = {kept:,} tokens; vLLM holds min(ceil({n:,} / {block_size}), "
    "cdiv(min({cap_tokens:,} - 1 + {max_num_batched_tokens:,}, {max_len:,}), {block_size}) + 1) = {blocks:,} blocks "
    "per layer (window plus one prefill chunk, +1 for a window not aligned to a block)":
        "{names}: la teoría guarda min(n, W) = {kept:,} tokens; vLLM reserva min(ceil({n:,} / {block_size}), "
        "cdiv(min({cap_tokens:,} - 1 + {max_num_batched_tokens:,}, {max_len:,}), {block_size}) + 1) = {blocks:,} "
        "bloques por capa (la ventana más un fragmento de prellenado, +1 por una ventana no alineada a un bloque)",
    "page = {min_block} tokens x {page_per_token:,} B = {page:,} B per layer per block; num_blocks = {how} = "
    "{num_blocks:,}; GPU KV cache size = {num_blocks:,} // {num_kv_groups} x {min_block} = {max_tokens:,} tokens; "
    "blocks per {m:,}-token request = {blocks_per_request:,}; maximum concurrency = {num_blocks:,} / "
    "{blocks_per_request:,} = {concurrency:.2f}x":
        "página = {min_block} tokens x {page_per_token:,} B = {page:,} B por capa y bloque; num_blocks = {how} = "
        "{num_blocks:,}; tamaño de la caché KV de la GPU = {num_blocks:,} // {num_kv_groups} x {min_block} = "
        "{max_tokens:,} tokens; bloques por petición de {m:,} tokens = {blocks_per_request:,}; concurrencia máxima = "
        "{num_blocks:,} / {blocks_per_request:,} = {concurrency:.2f}x",
    "{char} {meaning} x {count}": "{char} {meaning} x {count}",
    "full attention": "atención completa",
    "sliding window": "ventana deslizante",
    "chunked local (Llama 4)": "local por fragmentos (Llama 4)",
    "linear attention (Gated DeltaNet)": "atención lineal (Gated DeltaNet)",
    "Mamba (SSM state)": "Mamba (estado SSM)",
    "MLA latent": "latente MLA",
    "MLA latent + DSA indexer keys": "latente MLA + claves del indexador DSA",
    "compressed entries (DeepSeek V4)": "entradas comprimidas (DeepSeek V4)",
    "window ring only (DeepSeek V4)": "solo anillo de ventana (DeepSeek V4)",
    "shares another layer's KV (stores none)": "comparte el KV de otra capa (no guarda ninguno)",
    "no KV (MLP / MoE block)": "sin KV (bloque MLP / MoE)",
    "{names}: theory keeps one chunk of {cap_tokens:,}; vLLM holds min(ceil({n:,} / {block_size}), "
    "cdiv(min({cap_tokens:,} + {max_num_batched_tokens:,}, {max_len:,}), {block_size})) = {blocks:,} blocks per layer":
        "{names}: la teoría guarda un fragmento de {cap_tokens:,}; vLLM reserva min(ceil({n:,} / {block_size}), "
        "cdiv(min({cap_tokens:,} + {max_num_batched_tokens:,}, {max_len:,}), {block_size})) = {blocks:,} bloques por "
        "capa",
    "Maximum concurrency is pool tokens / max_model_len: the number of full-length requests that fit at once. It is "
    "not a cap on concurrent requests: shorter requests fit more, and the scheduler also stops at max_num_seqs.":
        "La concurrencia máxima es tokens del pool / max_model_len: el número de peticiones de longitud completa que "
        "caben a la vez. No limita las peticiones simultáneas: caben más si son más cortas, y el planificador de vLLM "
        "también se detiene en max_num_seqs.",
    "The KV budget is what is left after weights and the profiled activation peak; the engine re-profiles when "
    "max_model_len or max_num_batched_tokens change, so the budget can move with them "
    "(github.com/vllm-project/vllm/issues/10517: Llama-3.1-8B on one RTX 3090, 3.81 GiB at max_model_len 20k but "
    "2.89 GiB at 29k).":
        "El presupuesto de KV es lo que queda tras los pesos y el pico de activaciones medido; el motor vuelve a "
        "medirlo cuando cambian max_model_len o max_num_batched_tokens, así que el presupuesto puede moverse con ellos "
        "(github.com/vllm-project/vllm/issues/10517: Llama-3.1-8B en una RTX 3090, 3,81 GiB con max_model_len 20k "
        "pero 2,89 GiB con 29k).",
    # -- the plan ------------------------------------------------------------------------------------------------------
    "Tensor-parallel attention (vLLM and SGLang default): {ranks}{pp}; {spans}, so sessions are counted per replica "
    "and per GPU is that count / GPUs.":
        "Atención con paralelismo tensorial (por defecto en vLLM y SGLang): {ranks}{pp}; {spans}, así que las sesiones "
        "se cuentan por réplica y por GPU es esa cifra / GPU.",
    "Data-parallel attention (SGLang --enable-dp-attention, DeepSeek's deployments): each GPU holds whole sessions at "
    "TP 1{pp}; sessions per replica = sessions per GPU x {gpus}.":
        "Atención con paralelismo de datos (SGLang --enable-dp-attention, los despliegues de DeepSeek): cada GPU guarda "
        "sesiones enteras con TP 1{pp}; sesiones por réplica = sesiones por GPU x {gpus}.",
    ", pipeline parallel {pp} (layers split)": ", paralelismo de pipeline {pp} (capas repartidas)",
    "one GPU holds the whole KV of each layer": "una GPU guarda todo el KV de cada capa",
    "the replica's {tp} TP ranks {what}": "los {tp} rangos TP de la réplica {what}",
    "each session is on its one GPU": "cada sesión está en su única GPU",
    "each session spans all {gpus}": "cada sesión ocupa las {gpus}",
    "split the KV": "se reparten el KV",
    "split the {heads:,} KV heads ({per_gpu} per GPU)": "se reparten las {heads:,} cabezas KV ({per_gpu} por GPU)",
    "split the {heads:,} KV head ({per_gpu} per GPU)": "se reparten la {heads:,} cabeza KV ({per_gpu} por GPU)",
    "repeat the {heads:,} KV heads (TP {tp} passes them: each GPU keeps one head, each head is on {ranks} or more "
    "ranks)":
        "repiten las {heads:,} cabezas KV (TP {tp} las supera: cada GPU guarda una cabeza, cada cabeza está en "
        "{ranks} rangos o más)",
    "repeat the {heads:,} KV head (TP {tp} passes it: each GPU keeps one head, each head is on {ranks} or more ranks)":
        "repiten la {heads:,} cabeza KV (TP {tp} la supera: cada GPU guarda una cabeza, cada cabeza está en {ranks} "
        "rangos o más)",
    "replicate the one-head entries ({names}) on every rank":
        "replican en cada rango las entradas de una sola cabeza ({names})",
    "one GPU": "una GPU",
    "the replica": "la réplica",
    "one pipeline of {gpus} GPUs": "un pipeline de {gpus} GPU",
    "Nothing fits: weights ({weights} GiB per GPU) and reserve ({reserve:g} GiB) exceed HBM x utilization ({usable} "
    "GiB). Add GPUs per replica, more HBM or a smaller weight format.":
        "No cabe nada: los pesos ({weights} GiB por GPU) y la reserva ({reserve:g} GiB) superan HBM x utilización "
        "({usable} GiB). Añada GPU por réplica, más HBM o un formato de pesos más pequeño.",
    "Not one session fits {where}: the shared prefix plus one session need {need} GiB per GPU, usable KV is {usable} "
    "GiB per GPU.":
        "No cabe ni una sesión en {where}: el prefijo compartido más una sesión necesitan {need} GiB por GPU y el KV "
        "utilizable es de {usable} GiB por GPU.",
    "{message} Under tensor-parallel attention (attention_parallelism=tp) the replica's {gpus} would split each "
    "session's KV heads and {sessions:,} sessions would fit per replica.":
        "{message} Con atención tensorial (attention_parallelism=tp), las {gpus} de la réplica se repartirían las "
        "cabezas KV de cada sesión y cabrían {sessions:,} sesiones por réplica.",
    "Memory does not bound sessions: every token of a session is in the shared prefix (reported as {sessions:,}).":
        "La memoria no limita las sesiones: todos los tokens de una sesión están en el prefijo compartido (se indica "
        "{sessions:,}).",
    "No output tokens: request rate is undefined (no decode).":
        "Sin tokens de salida: la tasa de peticiones no está definida (no hay decodificación).",
    "HBM per GPU set to {hbm}: {times} x the {gpu}'s {how} ({catalog}); kept as given (a future part?), and every "
    "figure assumes it.":
        "HBM por GPU fijada en {hbm}: {times} x la {how} de la {gpu} ({catalog}); se mantiene tal cual (¿una pieza "
        "futura?) y todas las cifras la suponen.",
    "Measured KV bytes per token ({bytes:,.6g} B) not applied: it was measured on {on}; the planner's arithmetic is "
    "used.":
        "No se aplican los bytes de KV por token medidos ({bytes:,.6g} B): se midieron con {on}; se usa la aritmética "
        "del planificador.",
    "Measured usable KV ({gib:,.6g} GiB per GPU) not applied: it was measured with {what}; the usable KV is computed.":
        "No se aplica el KV utilizable medido ({gib:,.6g} GiB por GPU): se midió con {what}; el KV utilizable se "
        "calcula.",
    "model {measured}, not {now}": "el modelo {measured}, no {now}",
    "KV format {measured}, not {now}": "el formato KV {measured}, no {now}",
    "{name} {measured!s}, not {now!s}": "{name} {measured!s}, no {now!s}",
    "Weights of {gib:,.6g} GiB (set for {old}) not applied to {new}: its catalog weights are used.":
        "Los pesos de {gib:,.6g} GiB (fijados para {old}) no se aplican a {new}: se usan los del catálogo.",
    "State of {bytes:,} B per sequence (set for {old}) not applied to {new}: its layout's state is used.":
        "El estado de {bytes:,} B por secuencia (fijado para {old}) no se aplica a {new}: se usa el de su "
        "disposición.",
    # -- catalog models' notes (planner/catalog/entries.py) -------------------------------------------------------------------
    "890 B/token = 2.5 compressed entries per token x (288 B main + 68 B indexer key): KV-source layers 2, 8, 14 "
    "compress 2:1 and layer 20 keeps every token (3 x 1/2 + 1).":
        "890 B/token = 2,5 entradas comprimidas por token x (288 B principal + 68 B clave del indexador): las capas "
        "fuente de KV 2, 8 y 14 comprimen 2:1 y la capa 20 guarda todos los tokens (3 x 1/2 + 1).",
    "Each of the 40 layers keeps a 128-token window ring (528 B per token per layer): a fixed per-session state, in "
    "host RAM by default (V4.1 report; docs/sources.md); vLLM keeps none and replays.":
        "Cada una de las 40 capas guarda un anillo de ventana de 128 tokens (528 B por token y capa): un estado fijo "
        "por sesión, en la RAM del host por defecto (informe de V4.1; docs/sources.md); vLLM no guarda ninguno y "
        "vuelve a calcularlo.",
    "Weights default to FP8 for all 552B parameters, an upper bound: routed experts ship in FP4.":
        "Por defecto, los pesos son FP8 para los 552B parámetros, una cota superior: los expertos enrutados se "
        "publican en FP4.",
    "The reported 3,514 B/token prices growing KV in the shipped format; the window ring is priced from config.json "
    "in BF16.":
        "Los 3.514 B/token publicados valoran el KV creciente en el formato publicado; el anillo de ventana se valora "
        "a partir de config.json en BF16.",
    "Weights priced as MXFP4 throughout; attention weights actually stay BF16.":
        "Pesos valorados en MXFP4 en todo el modelo; en realidad, los pesos de atención siguen en BF16.",
    "24 Mamba2 layers keep a fixed state per sequence (SSM state in FP32, vLLM's Nemotron-H default); 4 attention "
    "layers grow with length; 24 MLP layers hold none.":
        "24 capas Mamba2 guardan un estado fijo por secuencia (estado SSM en FP32, el valor por defecto de vLLM para "
        "Nemotron-H); 4 capas de atención crecen con la longitud; 24 capas MLP no guardan nada.",
    "28 Mamba1 layers keep a fixed state per sequence; 4 attention layers grow.":
        "28 capas Mamba1 guardan un estado fijo por secuencia; 4 capas de atención crecen.",
    "Sparse attention reads index_topk 2,048 tokens per query but the cache keeps every token: MLA latent plus a "
    "132 B indexer key per layer.":
        "La atención dispersa lee index_topk 2.048 tokens por consulta, pero la caché guarda todos los tokens: el "
        "latente MLA más una clave de indexador de 132 B por capa.",
    "Global layers: 2 KV heads x 512 with K = V (both stored); sliding layers: 8 KV heads x 256 over a 1,024-token "
    "window.":
        "Capas globales: 2 cabezas KV x 512 con K = V (se guardan ambas); capas deslizantes: 8 cabezas KV x 256 sobre "
        "una ventana de 1.024 tokens.",
    "9 global layers (4 KV heads) grow; 39 sliding layers (8 KV heads) keep 128 tokens. K is 192 wide and V 128.":
        "9 capas globales (4 cabezas KV) crecen; 39 capas deslizantes (8 cabezas KV) guardan 128 tokens. K mide 192 "
        "de ancho y V, 128.",
    "Weights priced as NVFP4 throughout, a lower bound: only the experts are NVFP4; attention, dense MLP, router, "
    "vision and lm_head stay BF16 (the ignore list).":
        "Pesos valorados en NVFP4 en todo el modelo, una cota inferior: solo los expertos están en NVFP4; atención, MLP "
        "densa, router, visión y lm_head siguen en BF16 (la lista ignore).",
    "Same layers as Gemma 4 26B-A4B: global layers 2 KV heads x 512 with K = V (both stored); sliding layers 8 KV "
    "heads x 256 over 1,024 tokens.":
        "Las mismas capas que Gemma 4 26B-A4B: capas globales de 2 cabezas KV x 512 con K = V (se guardan ambas); "
        "capas deslizantes de 8 cabezas KV x 256 sobre 1.024 tokens.",
    # -- what "native" means per model; format labels (planner/catalog/entries.py, planner/kv/formats.py) ------------------------
    "BF16 (the config's dtype; no KV dtype is published)":
        "BF16 (el tipo de la configuración; no se publica ningún tipo para el KV)",
    "FP8, as the checkpoint declares (kv_cache_scheme float 8 bit)":
        "FP8, como declara el checkpoint (kv_cache_scheme float 8 bit)",
    "as shipped (3,514 B/token, DeepSeek V4.1 report); the architecture view is BF16":
        "tal como se publica (3.514 B/token, informe de DeepSeek V4.1); la vista de la arquitectura es BF16",
    "main KV NVFP4-style E2M1 + E4M3/16; indexer keys E2M1 + E8M0/32; window ring FP8 + E8M0/32":
        "KV principal E2M1 al estilo NVFP4 + E4M3/16; claves del indexador E2M1 + E8M0/32; anillo de ventana FP8 + "
        "E8M0/32",
    "vLLM 'auto' = fp8_ds_mla (656 B latent); indexer keys FP8 + FP32 / 128":
        "vLLM 'auto' = fp8_ds_mla (latente de 656 B); claves del indexador FP8 + FP32 / 128",
    "{main} (the checkpoint's or the engine's 'auto')": "{main} (el del checkpoint o el 'auto' del motor)",
    "as in config.json (BF16 unless stated)": "como en config.json (BF16 salvo que se indique otro)",
    "FP8 E4M3FN (per-tensor FP32 scale)": "FP8 E4M3FN (escala FP32 por tensor)",
    "MXFP8: E4M3 + E8M0 scale / 32": "MXFP8: E4M3 + escala E8M0 / 32",
    "NVFP4: E2M1 + E4M3 scale / 16": "NVFP4: E2M1 + escala E4M3 / 16",
    "MXFP4: E2M1 + E8M0 scale / 32": "MXFP4: E2M1 + escala E8M0 / 32",
    "INT8, FP16 scale / 128": "INT8, escala FP16 / 128",
    "INT4, FP16 scale / 128": "INT4, escala FP16 / 128",
    # -- link warnings (kvplan_app.state) ----------------------------------------------------------------------------
    "Link parameter '{key}' is too long ({chars:,} characters); default {default} used.":
        "El parámetro del enlace '{key}' es demasiado largo ({chars:,} caracteres); se usa el valor por defecto "
        "{default}.",
    " and {n:,} more": " y {n:,} más",
    "Unknown link parameters {names}{more} ignored.": "Se ignoran los parámetros desconocidos del enlace {names}{more}.",
    "Unknown link parameter {names}{more} ignored.": "Se ignora el parámetro desconocido del enlace {names}{more}.",
    "(none)": "(ninguno)",
    "Link parameter '{key}' = '{value}' is invalid (expected {allowed}); default {default} used.":
        "El parámetro del enlace '{key}' = '{value}' no es válido (se espera {allowed}); se usa el valor por defecto "
        "{default}.",
    "Link parameters {keys} do not make a valid plan together; defaults used.":
        "Los parámetros del enlace {keys} no forman juntos un plan válido; se usan los valores por defecto.",
    "Link parameters {keys} do not make a valid plan together: {why}; defaults used.":
        "Los parámetros del enlace {keys} no forman juntos un plan válido: {why}; se usan los valores por defecto.",
    "Link parameter '{key}' = '{value}' names no page (pages: {pages}); this page is shown.":
        "El parámetro del enlace '{key}' = '{value}' no nombra ninguna página (páginas: {pages}); se muestra esta.",
    # -- link warnings (kvplan_app.links: each page's own parameters, repeated keys) --------------------------------
    "Link parameter '{key}' is too long ({chars:,} characters); default used.":
        "El parámetro del enlace '{key}' es demasiado largo ({chars:,} caracteres); se usa el valor por defecto.",
    "Link parameter '{key}' = '{value}' is invalid (expected {allowed}); default used.":
        "El parámetro del enlace '{key}' = '{value}' no es válido (se espera {allowed}); se usa el valor por defecto.",
    "Link parameter '{key}' = '{value}' is invalid (expected {allowed}); left out.":
        "El parámetro del enlace '{key}' = '{value}' no es válido (se espera {allowed}); se omite.",
    "Link parameter '{key}' is given {n:,} times ({values}); the last one is used.":
        "El parámetro del enlace '{key}' aparece {n:,} veces ({values}); se usa el último.",
    "accelerator ids from kvplan gpus, comma-separated": "ids de aceleradores de kvplan gpus, separados por comas",
    "an accelerator id from kvplan gpus, or custom": "un id de acelerador de kvplan gpus, o custom",
    "0 (the plan's) or a whole number of tokens in [{lo:,}, {hi:,}]":
        "0 (el del plan) o un número entero de tokens en [{lo:,}, {hi:,}]",
    "Link parameter '{key}' is now '{value}' (was '{old}'), its control's starting value; the share link carries it. "
    "If you did not choose it, set it again.":
        "El parámetro del enlace '{key}' vale ahora '{value}' (antes '{old}'), el valor inicial de su control; el "
        "enlace para compartir lo lleva. Si no lo eligió usted, vuelva a fijarlo.",
    # -- traces: what the read found; the server's job queue ---------------------------------------------------------
    "no malformed rows ({rows:,} rows read)": "ninguna fila mal formada ({rows:,} filas leídas)",
    "line {line}: {reason}": "línea {line}: {reason}",
    "{malformed:,} of {rows:,} rows malformed and skipped ({shown}{more})":
        "{malformed:,} de {rows:,} filas mal formadas y omitidas ({shown}{more})",
    "Rows were not in arrival order ({steps:,} steps back in time); requests were stably sorted by arrival.":
        "Las filas no estaban en orden de llegada ({steps:,} saltos hacia atrás en el tiempo); las peticiones se "
        "ordenaron de forma estable por llegada.",
    "session_id is missing on {rows:,} rows: session routing uses each request's conversation block instead.":
        "falta session_id en {rows:,} filas: el enrutado por sesión usa en su lugar el bloque de conversación de cada "
        "petición.",
    "No prefix block hashes: prefix-cache hit rates cannot be measured from this trace; lengths, arrivals and "
    "concurrency still can.":
        "Sin hashes de bloques de prefijo: esta traza no permite medir tasas de acierto de la caché de prefijos; sí "
        "longitudes, llegadas y concurrencia.",
    "the job ran out of memory (the server's per-job memory cap)":
        "el trabajo se quedó sin memoria (el límite de memoria por trabajo del servidor)",
    "the job passed its time limit ({seconds:g} s)": "el trabajo superó su límite de tiempo ({seconds:g} s)",
    "the server is busy ({running} job(s) running, {waiting} waiting); try again in a minute":
        "el servidor está ocupado ({running} trabajo(s) en curso, {waiting} en espera); inténtelo de nuevo en un "
        "minuto",
    "the job's worker process died (most likely killed for memory)":
        "el proceso del trabajo terminó (lo más probable, por falta de memoria)",
    "another probe is running in this process (waited {seconds:g} s); try again when it has finished":
        "otra sonda se está ejecutando en este proceso (se esperó {seconds:g} s); inténtelo de nuevo cuando termine",
    "another probe is running in this process; try again when it has finished":
        "otra sonda se está ejecutando en este proceso; inténtelo de nuevo cuando termine",
    "at most {limit:,} bytes": "{limit:,} bytes como máximo",
    "{tokens:,} tokens or more (the pool stops growing)": "{tokens:,} tokens o más (el pool deja de crecer)",
    "{tokens:,} tokens": "{tokens:,} tokens",
    # -- recommend -------------------------------------------------------------------------------------------------------
    "{gpus:,} GPUs: {replicas:,} whole replicas = {capacity} {unit} < {target}: fails":
        "{gpus:,} GPU: {replicas:,} réplicas enteras = {capacity} {unit} < {target}: no llega",
    "{gpus:,} GPUs: {replicas:,} whole replica = {capacity} {unit} < {target}: fails":
        "{gpus:,} GPU: {replicas:,} réplica entera = {capacity} {unit} < {target}: no llega",
    "{gpus:,} GPU: {replicas:,} whole replicas = {capacity} {unit} < {target}: fails":
        "{gpus:,} GPU: {replicas:,} réplicas enteras = {capacity} {unit} < {target}: no llega",
    "{gpus:,} GPU: {replicas:,} whole replica = {capacity} {unit} < {target}: fails":
        "{gpus:,} GPU: {replicas:,} réplica entera = {capacity} {unit} < {target}: no llega",
    "not checked": "sin comprobar",
    "requests/s": "peticiones/s",
    # -- offloading tiers ----------------------------------------------------------------------------------------------
    "Reject: not one session's uncached tail fits in the HBM pool. Offloading cannot help, because a running "
    "session's KV must be in HBM; evicting would only thrash. Shorten the context, raise the prefix hit rate, add HBM "
    "or split the weights over more GPUs.":
        "Rechazo: la cola sin caché de una sola sesión no cabe en el pool de HBM. Descargar no ayuda, porque el KV de "
        "una sesión en curso debe estar en HBM; desalojar solo provocaría thrashing. Acorte el contexto, suba la tasa "
        "de acierto del prefijo, añada HBM o reparta los pesos entre más GPU.",
    "Reject {rejected:,} of {sessions:,} sessions: with an active share of {f:.3g}, {running:,} would run at once but "
    "HBM holds {hbm_sessions:,}. Running sessions cannot be offloaded, so the excess is refused.":
        "Se rechazan {rejected:,} de {sessions:,} sesiones: con una fracción activa de {f:.3g}, {running:,} "
        "funcionarían a la vez, pero la HBM admite {hbm_sessions:,}. Las sesiones en curso no se pueden descargar, así "
        "que el exceso se rechaza.",
    "Evict: {parked:,} paused sessions are parked, host RAM and SSD hold {kept:,}; the {n_evicted:,} least recently "
    "used tails are dropped and recomputed (prefill) when they resume.":
        "Desalojo: hay {parked:,} sesiones en pausa aparcadas y la RAM del host y el SSD guardan {kept:,}; las "
        "{n_evicted:,} colas usadas hace más tiempo se descartan y se recalculan (prellenado) al reanudarse.",
    "Offload: HBM holds {in_hbm:,} sessions; {parked:,} paused sessions are parked ({n_host:,} in host RAM, {n_ssd:,} "
    "on SSD) and reloaded when they resume. Latency changes, the byte count does not.":
        "Descarga: la HBM guarda {in_hbm:,} sesiones; {parked:,} sesiones en pausa quedan aparcadas ({n_host:,} en la "
        "RAM del host, {n_ssd:,} en SSD) y se recargan al reanudarse. Cambia la latencia, no el número de bytes.",
}
