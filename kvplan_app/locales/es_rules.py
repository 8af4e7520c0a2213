"""Spanish for planner's input rules: what a :class:`planner.errors.PlanInputError` says is allowed.

English template (``planner.messages.msg``) -> Spanish, same ``{fields}``. Each rule completes the sentence
"{field}: {value} no está permitido; se espera ...". Field names, ids, file names and units stay as they are.
"""

RULES: dict[str, str] = {
    "{field}: {value} is not allowed; expected {allowed}": "{field}: {value} no está permitido; se espera {allowed}",
    # -- numbers and ranges -----------------------------------------------------------------------------------------
    "a whole number in [{lo:,}, {hi:,}]": "un número entero en [{lo:,}, {hi:,}]",
    "a finite number in {value}, {hi:,.0f}]": "un número finito en {value}, {hi:,.0f}]",
    "a whole number in {left}, {right}": "un número entero en {left}, {right}",
    "a finite number in {left}, {right}": "un número finito en {left}, {right}",
    "a whole number of bytes": "un número entero de bytes",
    "a number": "un número",
    "a whole number": "un número entero",
    "a positive number": "un número positivo",
    "an integer >= 0": "un entero >= 0",
    "true or false": "true o false",
    "one of {choices}": "uno de {choices}",
    "numbers in [0, 1]": "números en [0, 1]",
    "whole numbers in [1, 1,024]": "números enteros en [1, 1.024]",
    "a number in (0, 1,000,000,000] bytes": "un número en (0, 1.000.000.000] bytes",
    "a whole number of bytes in [0, 10**15]": "un número entero de bytes en [0, 10**15]",
    "a whole number of tokens in [0, {maximum:,}]": "un número entero de tokens en [0, {maximum:,}]",
    "a whole number in [1, {max_parallel:,}]": "un número entero en [1, {max_parallel:,}]",
    "a whole number of tokens in [1, {max_block_size:,}]": "un número entero de tokens en [1, {max_block_size:,}]",
    "a whole number of tokens in [1, {max_probe_tokens:,}]": "un número entero de tokens en [1, {max_probe_tokens:,}]",
    "a whole number of tokens in [1, {max_block_tokens:,}]": "un número entero de tokens en [1, {max_block_tokens:,}]",
    "a whole number of replicas in [1, {max_replicas:,}]": "un número entero de réplicas en [1, {max_replicas:,}]",
    "a whole number in [0, 2**62)": "un número entero en [0, 2**62)",
    "a whole number of threads in [1, 4096], or None": "un número entero de hilos en [1, 4096], o None",
    "a fraction of free memory in (0, 1]": "una fracción de la memoria libre en (0, 1]",
    "a fraction of blocks in (0, 1]": "una fracción de bloques en (0, 1]",
    "seconds in (0, 3600]": "segundos en (0, 3600]",
    "seconds in [0, 3600]": "segundos en [0, 3600]",
    "a finite number in (0, {max_target:,.0f}]": "un número finito en (0, {max_target:,.0f}]",
    "finite numbers >= 0 per GPU-hour": "números finitos >= 0 por GPU-hora",
    "a finite number of bytes > 0": "un número finito de bytes > 0",
    "a finite number of bytes >= 0": "un número finito de bytes >= 0",
    "{kind} in [{lo:g}, {hi:g}]": "{kind} en [{lo:g}, {hi:g}]",
    "a speed in tokens/s in [{min_tokens_per_s:g}, {max_tokens_per_s:,.0f}]":
        "una velocidad en tokens/s en [{min_tokens_per_s:g}, {max_tokens_per_s:,.0f}]",
    "None (unlimited) or a whole number of blocks in [0, {max_capacity_blocks:,}]":
        "None (sin límite) o un número entero de bloques en [0, {max_capacity_blocks:,}]",
    "None (no TTL) or a number of seconds >= 0": "None (sin TTL) o un número de segundos >= 0",
    "token counts in [1, {max_context_tokens:,}]": "cantidades de tokens en [1, {max_context_tokens:,}]",
    "1 to {max_curve_points} context lengths": "de 1 a {max_curve_points} longitudes de contexto",
    "a whole number of tokens in [{minimum:,}, {maximum:,}] (e.g. {examples}; a comma only between groups of three "
    "digits)":
        "un número entero de tokens en [{minimum:,}, {maximum:,}] (p. ej. {examples}; coma solo entre grupos de tres "
        "cifras)",
    "a whole number in [{minimum:,}, {maximum:,}] (e.g. {examples}; a comma only between groups of three digits)":
        "un número entero en [{minimum:,}, {maximum:,}] (p. ej. {examples}; coma solo entre grupos de tres cifras)",
    "a whole number of {noun} in [{minimum:,}, {maximum:,}] (e.g. {examples}; a comma only between groups of three "
    "digits)":
        "un número entero de {noun} en [{minimum:,}, {maximum:,}] (p. ej. {examples}; coma solo entre grupos de tres "
        "cifras)",
    "a whole number of tokens (the model's maximum is not known)":
        "un número entero de tokens (no se conoce el máximo del modelo)",
    "an integer in [{minimum}, {maximum:,}]{others}: {why}": "un entero en [{minimum}, {maximum:,}]{others}: {why}",
    "an integer in [{minimum}, {maximum:,}]": "un entero en [{minimum}, {maximum:,}]",
    "a list of integers in [{minimum}, {maximum:,}]": "una lista de enteros en [{minimum}, {maximum:,}]",
    "an integer in [{minimum}, {maximum:,}] ({why})": "un entero en [{minimum}, {maximum:,}] ({why})",
    "the field is required": "el campo es obligatorio",
    # -- nouns and words used inside rules -------------------------------------------------------------------------
    "file": "archivo",
    "plan file": "archivo de plan",
    "config.json": "config.json",
    "a file": "un archivo",
    "a file that decompresses": "un archivo descomprimido",
    "tokens": "tokens",
    "sessions": "sesiones",
    "units": "unidades",
    "a whole number of {noun}, without a dot before three digits (a decimal point in English, a thousands separator "
    "in Spanish): {plain} or {spaced}":
        "un número entero de {noun}, sin un punto antes de tres cifras (separador de miles en español, coma decimal "
        "en inglés): {plain} o {spaced}",
    "blocks": "bloques",
    "requests": "peticiones",
    "replicas": "réplicas",
    "GPUs": "GPU",
    "": "",
    # -- accelerators --------------------------------------------------------------------------------------------
    "a table of fields (id, name, memory_..., ...)": "una tabla de campos (id, name, memory_..., ...)",
    "one of the fields {choices}": "uno de los campos {choices}",
    "exactly one of memory_bytes, memory_mib, memory_gib (as the device reports it)":
        "exactamente uno de memory_bytes, memory_mib, memory_gib (tal como lo informa el dispositivo)",
    "a file of at most {max_file_bytes:,} bytes": "un archivo de {max_file_bytes:,} bytes como máximo",
    "a non-empty list of accelerators ([[accelerator]] tables in TOML)":
        "una lista no vacía de aceleradores (tablas [[accelerator]] en TOML)",
    "at most {max_accelerators} accelerators": "{max_accelerators} aceleradores como máximo",
    "a compact accelerator of at most {max_link_chars} characters":
        "un acelerador compacto de {max_link_chars} caracteres como máximo",
    "a new slug of lowercase letters, digits, '.', '-', '_' (at most 40 characters; not a catalog id nor 'custom')":
        "un slug nuevo de minúsculas, cifras, '.', '-', '_' (40 caracteres como máximo; ni un id del catálogo ni "
        "'custom')",
    "printable text of 1 to {name_max} characters without '~'": "texto imprimible de 1 a {name_max} caracteres sin '~'",
    "a value (required)": "un valor (obligatorio)",
    "valid JSON or TOML ({error})": "JSON o TOML válido ({error})",
    "valid {kind} ({error})": "{kind} válido ({error})",
    "ids that appear once": "ids que aparezcan una sola vez",
    "a readable file ({strerror})": "un archivo legible ({strerror})",
    "key:value parts with keys {choices}, each once": "partes clave:valor con las claves {choices}, cada una una vez",
    "a comma-separated list of accelerator ids (kvplan gpus) or custom:N":
        "una lista separada por comas de ids de aceleradores (kvplan gpus) o custom:N",
    "a catalog id (kvplan gpus), custom:N or one of your accelerators: {choices}":
        "un id del catálogo (kvplan gpus), custom:N o uno de sus aceleradores: {choices}",
    "custom:N with N GiB in (0, 100,000]": "custom:N con N GiB en (0, 100.000]",
    "a size in GiB when gpu is 'custom'": "un tamaño en GiB cuando gpu es 'custom'",
    "at most the GPU's HBM ({value:,.4g} GiB)": "como máximo la HBM de la GPU ({value:,.4g} GiB)",
    # -- model configs ---------------------------------------------------------------------------------------------
    "a list of at least {num_layers} ratios (one per layer, MTP layers may follow)":
        "una lista de al menos {num_layers} razones (una por capa; pueden seguir capas MTP)",
    "at least one KV-source layer with a ratio >= 1": "al menos una capa fuente de KV con razón >= 1",
    "an integer for a model with index_head_dim: vLLM keys its sparse-attention indexer cache on index_topk":
        "un entero para un modelo con index_head_dim: vLLM dimensiona la caché del indexador de atención dispersa "
        "según index_topk",
    "{num_layers} entries of 'full' or 'shared'": "{num_layers} entradas 'full' o 'shared'",
    "a config.json of at most {max_config_bytes:,} bytes": "un config.json de {max_config_bytes:,} bytes como máximo",
    "a JSON object ({{...}}) at the top level": "un objeto JSON ({{...}}) en el nivel superior",
    "a JSON object": "un objeto JSON",
    "a multiple of num_attention_heads ({num_heads}) when head_dim is absent":
        "un múltiplo de num_attention_heads ({num_heads}) cuando falta head_dim",
    "at least one layer with KV heads >= 1": "al menos una capa con cabezas KV >= 1",
    "a JSON object; this file is not valid JSON ({json_error_text})":
        "un objeto JSON; este archivo no es JSON válido ({json_error_text})",
    "a divisor of the attention heads ({attn_heads}) (layer {i})":
        "un divisor de las cabezas de atención ({attn_heads}) (capa {i})",
    "at most max_position_embeddings ({max_ctx:,})": "como máximo max_position_embeddings ({max_ctx:,})",
    "at most max_position_embeddings ({max_ctx:,}): a window larger than the context is contradictory":
        "como máximo max_position_embeddings ({max_ctx:,}): una ventana mayor que el contexto es contradictoria",
    "a window >= 1 for a sliding layer": "una ventana >= 1 para una capa deslizante",
    "; kvplan cannot size its state: give the model's bytes per token and per-sequence state bytes instead (kvplan kv "
    "--bytes-per-token B --state-bytes S)":
        "; kvplan no puede dimensionar su estado: indique en su lugar los bytes por token y los bytes de estado por "
        "secuencia del modelo (kvplan kv --bytes-per-token B --state-bytes S)",
    "a list of {num_layers} layer types (one per layer)": "una lista de {num_layers} tipos de capa (uno por capa)",
    "{num_layers} entries (one per layer)": "{num_layers} entradas (una por capa)",
    "{length} entries (one per layer)": "{length} entradas (una por capa)",
    "one of {choices}{advice}": "uno de {choices}{advice}",
    "one of {choices}{extra}": "uno de {choices}{extra}",
    "a per-layer mix (layer_types, hybrid_override_pattern, layers_block_type or attn_layer_period) for a model with "
    "state fields such as {key}{no_state_advice}":
        "una mezcla por capa (layer_types, hybrid_override_pattern, layers_block_type o attn_layer_period) para un "
        "modelo con campos de estado como {key}{no_state_advice}",
    "absent for model_type {value}: kvplan reads it as Llama 4 chunked attention only (model_type llama4*), and its "
    "meaning here is not known":
        "ausente para model_type {value}: kvplan lo lee solo como la atención por fragmentos de Llama 4 (model_type "
        "llama4*), y aquí se desconoce su significado",
    "a list of {num_layers} entries, each 0 or 1": "una lista de {num_layers} entradas, cada una 0 o 1",
    "or choose a KV format": "o elija un formato KV",
    "a KV scheme of a modelopt or compressed-tensors checkpoint (quant_method is {method}: vLLM's 'auto' KV dtype "
    "does not follow it); {advice}":
        "un esquema KV de un checkpoint modelopt o compressed-tensors (quant_method es {method}: el tipo KV 'auto' de "
        "vLLM no lo sigue); {advice}",
    "FP8 or NVFP4 (a scheme type float with num_bits 8 and dynamic false, or num_bits 4): the KV dtypes vLLM's 'auto' "
    "follows; for any other it falls back to the model dtype; {advice}":
        "FP8 o NVFP4 (un esquema type float con num_bits 8 y dynamic false, o num_bits 4): los tipos KV que sigue "
        "'auto' en vLLM; con cualquier otro vuelve al tipo del modelo; {advice}",
    "type float, num_bits 8 (FP8 KV, the scheme kvplan prices); {advice}":
        "type float, num_bits 8 (KV en FP8, el esquema que kvplan calcula); {advice}",
    "Mamba layers need their state shape": "las capas Mamba necesitan la forma de su estado",
    "{need} (Mamba1: mamba_expand x hidden_size channels; Mamba2: mamba_num_heads, mamba_head_dim, n_groups)":
        "{need} (Mamba1: mamba_expand x hidden_size canales; Mamba2: mamba_num_heads, mamba_head_dim, n_groups)",
    "Jamba's attention layers are those with i % attn_layer_period == attn_layer_offset":
        "las capas de atención de Jamba son las que cumplen i % attn_layer_period == attn_layer_offset",
    "DeepSeek V3.2 sparse attention caches an indexer key of index_head_dim channels":
        "la atención dispersa de DeepSeek V3.2 guarda una clave de indexador de index_head_dim canales",
    "at least {tail_channels} (the unscaled tail)": "al menos {tail_channels} (la cola sin escala)",
    "a divisor of {units:,} ({name}: vLLM splits it exactly over TP)":
        "un divisor de {units:,} ({name}: vLLM lo reparte exactamente entre TP)",
    "'native' for {id}: only its reported coefficient is known": "'native' para {id}: solo se conoce su coeficiente publicado",
    "1 for {id}: only its bytes per token are known, not its layers":
        "1 para {id}: solo se conocen sus bytes por token, no sus capas",
    "at most {layers} (one layer per pipeline stage; {id} has {layers})":
        "como máximo {layers} (una capa por etapa de pipeline; {id} tiene {layers})",
    "at most about {fits:,} tokens for this model at TP {tp}, PP {pp}: its KV ({largest:.3g} B) passes 2^63 B = "
    "{value:.0f} EiB, more than any machine holds (check num_hidden_layers, num_key_value_heads and head_dim)":
        "como máximo unos {fits:,} tokens para este modelo con TP {tp}, PP {pp}: su KV ({largest:.3g} B) supera "
        "2^63 B = {value:.0f} EiB, más de lo que cabe en cualquier máquina (revise num_hidden_layers, "
        "num_key_value_heads y head_dim)",
    "a model with a known parameter count, or weights given in GiB":
        "un modelo con número de parámetros conocido, o pesos indicados en GiB",
    # -- engine (vLLM paging) ---------------------------------------------------------------------------------------
    "at most max_model_len ({max_len:,})": "como máximo max_model_len ({max_len:,})",
    "a model whose KV vLLM pages as full, sliding, chunked or MLA attention (not modelled here: {what}{hint})":
        "un modelo cuyo KV pagina vLLM como atención completa, deslizante, por fragmentos o MLA (aquí no se modela: "
        "{what}{hint})",
    "; choose a KV format to page its architecture": "; elija un formato KV para paginar su arquitectura",
    "a layout whose page sizes divide each other: vLLM cannot unify page sizes {page:,} B and {max_page:,} B "
    "(NotImplementedError in vLLM)":
        "una disposición cuyos tamaños de página se dividan entre sí: vLLM no puede unificar páginas de {page:,} B y "
        "{max_page:,} B (NotImplementedError en vLLM)",
    "a Mamba page ({mamba_page:,} B) equal to the attention page ({max_page:,} B): vLLM pads one to the other":
        "una página Mamba ({mamba_page:,} B) igual a la página de atención ({max_page:,} B): vLLM rellena una hasta "
        "la otra",
    "text (a vLLM or SGLang start-up log)": "texto (un registro de arranque de vLLM o SGLang)",
    "at most {max_log_bytes:,} bytes (paste the start-up part of the log)":
        "{max_log_bytes:,} bytes como máximo (pegue la parte del arranque del registro)",
    "a full-attention or MLA model for a per-token pool figure (sliding, compressed or state layers are pooled per "
    "engine)":
        "un modelo de atención completa o MLA para una cifra de pool por token (las capas deslizantes, comprimidas o "
        "de estado se agrupan según el motor)",
    "a vLLM or an SGLang start-up log (one engine per log)":
        "un registro de arranque de vLLM o de SGLang (un motor por registro)",
    "a vLLM or an SGLang start-up log (no line of this text is from either engine)":
        "un registro de arranque de vLLM o de SGLang (ninguna línea de este texto es de uno de esos motores)",
    # -- plan inputs and plan files ---------------------------------------------------------------------------------
    "no such field (known: {choices})": "un campo conocido (los conocidos: {choices})",
    "gpu_id 'custom' alongside it (a user-defined accelerator describes the custom GPU)":
        "gpu_id 'custom' junto a él (un acelerador definido por el usuario describe la GPU propia)",
    "a divisor of gpus_per_replica ({gpus}): the replica's GPUs are TP x PP":
        "un divisor de gpus_per_replica ({gpus}): las GPU de la réplica son TP x PP",
    "a figure measured on this plan's model and format ({why})":
        "una cifra medida con el modelo y el formato de este plan ({why})",
    "a figure for TP 1: under tensor-parallel attention {id}'s KV heads split over TP {tp}, which the measurement did "
    "not see; use attention_parallelism=dp or drop it":
        "una cifra para TP 1: con atención tensorial, las cabezas KV de {id} se reparten entre TP {tp}, algo que la "
        "medida no vio; use attention_parallelism=dp o descártela",
    "a figure measured with this plan's GPU and weights ({why})":
        "una cifra medida con la GPU y los pesos de este plan ({why})",
    "an ISO 8601 date-time with a zone, e.g. 2026-01-31T12:00:00Z ({rule})":
        "una fecha y hora ISO 8601 con zona, p. ej. 2026-01-31T12:00:00Z ({rule})",
    "a value (the field is missing)": "un valor (falta el campo)",
    "a writable path ({strerror})": "una ruta con permiso de escritura ({strerror})",
    "sessions or requests_per_s": "sessions o requests_per_s",
    "at least one accelerator, KV format and weight format": "al menos un acelerador, un formato KV y un formato de pesos",
    "tp or dp (attention parallelism)": "tp o dp (paralelismo de atención)",
    "at most {max_configs:,} configurations": "{max_configs:,} configuraciones como máximo",
    "a model whose KV grows with context": "un modelo cuyo KV crezca con el contexto",
    "rows the scalar plan confirms (the array plan and the plan disagree: a bug)":
        "filas que el plan escalar confirme (el plan vectorial y el plan no coinciden: un error de kvplan)",
    "a comma-separated list of token counts (e.g. 128k,1M)":
        "una lista separada por comas de cantidades de tokens (p. ej. 128k,1M)",
    "a comma-separated list of numbers in [0, 1]": "una lista separada por comas de números en [0, 1]",
    "at least one accelerator": "al menos un acelerador",
    "at most {max_grid_points:,} points (accelerators x contexts x hit rates)":
        "{max_grid_points:,} puntos como máximo (aceleradores x contextos x tasas de acierto)",
    # -- files --------------------------------------------------------------------------------------------------------
    "a regular file (this path is {kind})": "un archivo normal (esta ruta es {kind})",
    "a {noun} of at most {cap_bytes:,} bytes (this one is {size})":
        "un {noun} de {cap_bytes:,} bytes como máximo (este tiene {size})",
    "a readable {noun} ({value})": "un {noun} legible ({value})",
    "UTF-8 JSON text; this file is not UTF-8 JSON text (byte 0x{data:02x} at offset {start:,} is not UTF-8)":
        "texto JSON en UTF-8; este archivo no lo es (el byte 0x{data:02x} en la posición {start:,} no es UTF-8)",
    "{what} of at most {max_bytes:,} B ({value:g} MB)": "{what} de {max_bytes:,} B ({value:g} MB) como máximo",
    "a readable file ({value})": "un archivo legible ({value})",
    "UTF-8 text (byte {value:,} is not)": "texto UTF-8 (el byte {value:,} no lo es)",
    "a path, bytes or a file-like object": "una ruta, bytes o un objeto de tipo archivo",
    "a readable {value} file ({exc})": "un archivo {value} legible ({exc})",
    "a readable Parquet file ({exc})": "un archivo Parquet legible ({exc})",
    # -- traces and curve files ---------------------------------------------------------------------------------------
    "a CSV header with columns {choices}": "una cabecera CSV con las columnas {choices}",
    "a CSV header with columns {choices} (missing {choices2})":
        "una cabecera CSV con las columnas {choices} (faltan {choices2})",
    "a CSV header row ({exc})": "una fila de cabecera CSV ({exc})",
    "present (a kvplan curve file, from kvplan trace --save)":
        "presente (un archivo de curva de kvplan, de kvplan trace --save)",
    "at most {max_curve_file_bytes:,} B": "{max_curve_file_bytes:,} B como máximo",
    "{curve_file_version}": "{curve_file_version}",
    "a list of 1 to {max_curve_points:,} points": "una lista de 1 a {max_curve_points:,} puntos",
    "capacity_blocks strictly increasing": "capacity_blocks estrictamente creciente",
    "a kvplan curve file (kvplan trace --sweep --save)": "un archivo de curva de kvplan (kvplan trace --sweep --save)",
    "a state-independent policy (random, round-robin, session)":
        "una política que no dependa del estado (random, round-robin, session)",
    "1 (every block) for fleets: routing keys and prefix matches need the whole trace":
        "1 (todos los bloques) para flotas: las claves de enrutado y las coincidencias de prefijo necesitan la traza "
        "completa",
    "at least one replica count and one routing policy":
        "al menos un número de réplicas y una política de enrutado",
    "{format} for {source}": "{format} para {source}",
    "{mooncake_block_tokens} for {source}": "{mooncake_block_tokens} para {source}",
    "{mooncake_block_tokens} for Mooncake traces (their hash_ids cover 512-token blocks)":
        "{mooncake_block_tokens} para trazas de Mooncake (sus hash_ids cubren bloques de 512 tokens)",
    "the block size in tokens of the trace's hash_ids (e.g. 16 for vLLM, 512 for Mooncake)":
        "el tamaño de bloque en tokens de los hash_ids de la traza (p. ej. 16 para vLLM, 512 para Mooncake)",
    "None when capacity_blocks is given (one or the other)": "None cuando se da capacity_blocks (uno u otro)",
    "KV bytes per token, to turn capacity_bytes into blocks": "bytes de KV por token, para pasar capacity_bytes a bloques",
    "at least one well-formed {fmt} row; rows read: {num_rows:,}, malformed: {num_malformed:,}{first}":
        "al menos una fila {fmt} bien formada; filas leídas: {num_rows:,}, mal formadas: {num_malformed:,}{first}",
    " ({example} on line {line})": " ({example} en la línea {line})",
    "arrivals spanning at most {max_trace_span_s:,.0f} s (366 days); this trace spans {span:,.6g} s: check the "
    "timestamp unit (timestamp_ms vs timestamp_s) and stray rows":
        "llegadas que abarquen como máximo {max_trace_span_s:,.0f} s (366 días); esta traza abarca {span:,.6g} s: "
        "revise la unidad de las marcas de tiempo (timestamp_ms o timestamp_s) y las filas sueltas",
    "a model whose KV grows with context at {context_tokens:,} tokens (every layer of this one is capped by a window); "
    "give the capacity in blocks instead":
        "un modelo cuyo KV crezca con el contexto a {context_tokens:,} tokens (en este, una ventana limita cada capa); "
        "indique la capacidad en bloques",
    "a trace with prefix block hashes (Mooncake, or JSONL with hash_ids): this one has lengths only, so hit rates are "
    "not measurable":
        "una traza con hashes de bloques de prefijo (Mooncake, o JSONL con hash_ids): esta solo tiene longitudes, así "
        "que las tasas de acierto no se pueden medir",
    "at most {max_refs:,} for an exact curve; sample it (--sample-rate)":
        "como máximo {max_refs:,} para una curva exacta; muestréela (--sample-rate)",
    "ids in [0, id_space = {id_space:,})": "ids en [0, id_space = {id_space:,})",
    'Fields ignored: {fields}.':
        'Campos ignorados: {fields}.',
    'Prompts tokenized with {tokenizer}; full {block_tokens}-token blocks hashed, each chained on its parent (a partial last block is not cached). Ignored: LoRA adapters, multimodal inputs and cache salts, which the engine also mixes into block hashes.':
        'Prompts tokenizados con {tokenizer}; bloques completos de {block_tokens} tokens con hash, cada uno encadenado al de su padre (un último bloque parcial no se guarda en caché). Se ignoran: adaptadores LoRA, entradas multimodales y sales de caché, que el motor también mezcla en los hashes de bloque.',
    'a readable JSON object ({error})':
        'un objeto JSON legible ({error})',
    'a readable Jinja file ({error})':
        'un archivo Jinja legible ({error})',
    'a Jinja template ({error})':
        'una plantilla Jinja ({error})',
    "the tokenizers package (pip install 'kvplan[prompts]')":
        "el paquete tokenizers (pip install 'kvplan[prompts]')",
    'a tokenizer.json the tokenizers library reads ({error})':
        'un tokenizer.json que la biblioteca tokenizers pueda leer ({error})',
    "tokens per block (the engine's block size), with a tokenizer":
        'tokens por bloque (el tamaño de bloque del motor), con un tokenizador',
    '{key} = {value!r} is not a number':
        '{key} = {value!r} no es un número',
    '{key} = {value} is outside [{lo}, {hi}]':
        '{key} = {value} está fuera de [{lo}, {hi}]',
    'both prompt and messages (one or the other)':
        'prompt y messages a la vez (uno u otro)',
    'prompt is a {kind}, not text':
        'prompt es un {kind}, no texto',
    'missing prompt or messages':
        'falta prompt o messages',
    'messages is not a JSON list':
        'messages no es una lista JSON',
    'messages is not a list of {{role, content}} objects':
        'messages no es una lista de objetos {{role, content}}',
    'messages without a chat template (--chat-template, or tokenizer_config.json beside the tokenizer)':
        'messages sin plantilla de chat (--chat-template, o tokenizer_config.json junto al tokenizador)',
    'chat template failed ({error})':
        'la plantilla de chat falló ({error})',
    'a whole number of worker processes in [1, {max_workers}]':
        'un número entero de procesos de trabajo en [1, {max_workers}]',
    'a worker count or a scheduler address (one of the two)':
        'un número de procesos o una dirección de planificador (uno de los dos)',
    "dask.distributed installed (pip install 'kvplan[fleet]')":
        "dask.distributed instalado (pip install 'kvplan[fleet]')",
    'the address of a running Dask scheduler ({error})':
        'la dirección de un planificador Dask en marcha ({error})',
    'unknown event {tag!r}':
        'evento desconocido {tag!r}',
    "an event is an array starting with its type, or an object with 'type'":
        "un evento es un array que empieza por su tipo, o un objeto con 'type'",
    'a batch [ts, events, data_parallel_rank] or {{ts, events}}':
        'un lote [ts, events, data_parallel_rank] o {{ts, events}}',
    'ts = {value!r} is not a finite number of seconds':
        'ts = {value!r} no es un número finito de segundos',
    'events is not a list':
        'events no es una lista',
    'block_size = {value!r} is not a whole number of tokens >= 1':
        'block_size = {value!r} no es un número entero de tokens >= 1',
    '{expected} in every BlockStored event (line {line})':
        '{expected} en cada evento BlockStored (línea {line})',
    'block_hashes is not a non-empty list':
        'block_hashes no es una lista no vacía',
    'Requests rebuilt from BlockStored events (each: the stored blocks after their ancestors). Requests that hit on every block store nothing and are absent; a prefill in chunks counts once per chunk.':
        'Solicitudes reconstruidas a partir de los eventos BlockStored (cada una: los bloques guardados tras sus antepasados). Las solicitudes que aciertan en todos sus bloques no guardan nada y no aparecen; un prellenado por partes cuenta una vez por parte.',
    'The engine removed {removed:,} blocks and cleared its cache {cleared:,} times; the replay evicts by its own capacity and policy.':
        'El motor eliminó {removed:,} bloques y vació su caché {cleared:,} veces; la repetición desaloja según su propia capacidad y política.',
    'a readable file ({error})':
        'un archivo legible ({error})',
    'a Prometheus snapshot with vllm:prefix_cache_queries and vllm:prefix_cache_hits':
        'una instantánea de Prometheus con vllm:prefix_cache_queries y vllm:prefix_cache_hits',
    "vllm for a sampled trace (radix-tree nodes need every block of each prefix)":
        "vllm para una traza muestreada (los nodos del árbol radix necesitan cada bloque de cada prefijo)",
    "no TTL for a profile computed without ages (reuse_profile(trace, with_ages=True))":
        "sin TTL para un perfil calculado sin edades (reuse_profile(trace, with_ages=True))",
    # -- a malformed trace row (planner/traces/rows.py, readers.py, azure.py) --------------------------------------------
    "not a CSV row ({exc})": "no es una fila CSV ({exc})",
    "{count} fields, the header has {header}": "{count} campos, la cabecera tiene {header}",
    "TIMESTAMP {exc}": "TIMESTAMP {exc}",
    "missing timestamp": "falta timestamp",
    "missing hash_ids": "falta hash_ids",
    "session_id is {value}, not a string of 1 to {max_chars} characters or an integer":
        "session_id es {value}, no un texto de 1 a {max_chars} caracteres ni un entero",
    "needs exactly one of timestamp_s, timestamp_ms": "necesita exactamente uno de timestamp_s, timestamp_ms",
    "a JSON {kind}, not an object": "un {kind} de JSON, no un objeto",
    "not valid JSON ({error})": "no es JSON válido ({error})",
    "missing {key}": "falta {key}",
    "{key} is {value}, not a whole number": "{key} es {value}, no un número entero",
    "{key} is {v:,}, outside [{lo:,}, {hi:,}]": "{key} es {v:,}, fuera de [{lo:,}, {hi:,}]",
    "{key} is {value}, not a finite number": "{key} es {value}, no un número finito",
    "hash_ids is {kind}, not a list": "hash_ids es {kind}, no una lista",
    "hash_ids holds {value}, not an integer": "hash_ids contiene {value}, que no es un entero",
    "hash_ids holds an integer outside the signed 64-bit range":
        "hash_ids contiene un entero fuera del rango con signo de 64 bits",
    "hash_ids has {count:,} blocks but input_length {input_tokens:,} fills at most {max_blocks:,} blocks of "
    "{block_tokens:,} tokens":
        "hash_ids tiene {count:,} bloques, pero input_length {input_tokens:,} llena como máximo {max_blocks:,} bloques "
        "de {block_tokens:,} tokens",
    "hash_ids repeats an ID (chained block hashes are unique within a request)":
        "hash_ids repite un ID (los hashes de bloque encadenados son únicos dentro de una petición)",
    "missing hash_ids (other rows have them)": "falta hash_ids (otras filas lo tienen)",
    # -- probe --------------------------------------------------------------------------------------------------------
    "a model whose pooled KV grows with every token; this pool also holds {choices}, so bytes / tokens at one length "
    "is not a per-token slope":
        "un modelo cuyo KV en el pool crezca con cada token; este pool también guarda {choices}, así que bytes / "
        "tokens a una sola longitud no es una pendiente por token",
    "a layout of full, window, MLA, compressed or state groups":
        "una disposición de grupos completos, de ventana, MLA, comprimidos o de estado",
    "a model with KV in the engine's pool": "un modelo con KV en el pool del motor",
    "a format the probe implements: {choices}": "un formato que la sonda implemente: {choices}",
    "a multiple or a divisor of {ratio}: group {name!r} stores one entry per {ratio} tokens":
        "un múltiplo o un divisor de {ratio}: el grupo {name!r} guarda una entrada cada {ratio} tokens",
    "a uint8 tensor {value} for {id}": "un tensor uint8 {value} para {id}",
    "[..., {width}] bytes for {fid} at {n} channels": "[..., {width}] bytes para {fid} con {n} canales",
    "the FP32 per-tensor scale {fid} was quantized with": "la escala FP32 por tensor con la que se cuantizó {fid}",
    "a uint8 tensor [..., {width}] for {fid} at {n} channels": "un tensor uint8 [..., {width}] para {fid} con {n} canales",
    "no such field in a ProbeResult (schema_version 1)": "un campo conocido de ProbeResult (schema_version 1)",
    "a value (the field is required)": "un valor (el campo es obligatorio)",
    "a ProbeResult JSON of at most {max_bytes:,} bytes": "un JSON de ProbeResult de {max_bytes:,} bytes como máximo",
    "a JSON object (a ProbeResult)": "un objeto JSON (un ProbeResult)",
    "{schema_version} (this kvplan reads only that)": "{schema_version} (este kvplan solo lee esa)",
    "ceil({entries} / {entries_per_block}) = {cdiv}": "ceil({entries} / {entries_per_block}) = {cdiv}",
    "num_layers x num_blocks x entries_per_block x entry_bytes = {expected:,}":
        "num_layers x num_blocks x entries_per_block x entry_bytes = {expected:,}",
    "a timestamp with a time zone (UTC)": "una marca de tiempo con zona horaria (UTC)",
    "a time between 2023-01-01 and now ({now:%Y-%m-%d})": "un instante entre 2023-01-01 y ahora ({now:%Y-%m-%d})",
    "at most total_bytes ({total_bytes:,})": "como máximo total_bytes ({total_bytes:,})",
    "the sum of the groups' pool bytes ({pool:,})": "la suma de los bytes de pool de los grupos ({pool:,})",
    "the sum of layers x entries x entry bytes ({predicted:,})":
        "la suma de capas x entradas x bytes por entrada ({predicted:,})",
    "between the pool ({floor:,}) and the pool plus allocator rounding ({ceiling:,})":
        "entre el pool ({floor:,}) y el pool más el redondeo del asignador ({ceiling:,})",
    "predicted_bytes / num_tokens = {value:.6g}": "predicted_bytes / num_tokens = {value:.6g}",
    "measured_bytes / num_tokens = {value:.6g}": "measured_bytes / num_tokens = {value:.6g}",
    "resident_bytes - measured_bytes = {value:,}": "resident_bytes - measured_bytes = {value:,}",
    "None on the CPU (and cuda_version None)": "None en la CPU (y cuda_version None)",
    "the CUDA memory_reserved delta, in bytes": "la diferencia de memory_reserved de CUDA, en bytes",
    "the largest pool of this layout in free_bytes ({free_bytes:,} B): {fit:,} tokens":
        "el mayor pool de esta disposición que cabe en free_bytes ({free_bytes:,} B): {fit:,} tokens",
    "at most tokens_fit_free ({tokens_fit_free:,})": "como máximo tokens_fit_free ({tokens_fit_free:,})",
    "the planner's {predicted_bytes:,} B for {model_id} in {kv_format} at {num_tokens:,} tokens":
        "los {predicted_bytes:,} B del planificador para {model_id} en {kv_format} con {num_tokens:,} tokens",
    "the planner's block-rounded {pool_bytes:,} B": "los {pool_bytes:,} B del planificador redondeados a bloques",
    "UTF-8 JSON ({error}: {exc})": "JSON en UTF-8 ({error}: {exc})",
    "UTF-8 JSON ({error})": "JSON en UTF-8 ({error})",
    "(missing)": "(falta)",
    # Python's json decoder (planner.reads.JSON_REASONS)
    "line {line:,}, column {column:,}: {reason}": "línea {line:,}, columna {column:,}: {reason}",
    "Expecting property name enclosed in double quotes": "se esperaba un nombre de propiedad entre comillas dobles",
    "Expecting ':' delimiter": "se esperaba el delimitador ':'",
    "Expecting ',' delimiter": "se esperaba el delimitador ','",
    "Expecting value": "se esperaba un valor",
    "Extra data": "datos de más",
    "Unterminated string starting at": "cadena sin cerrar que empieza en",
    "Invalid control character at": "carácter de control no válido en",
    "Invalid \\escape": "secuencia de escape \\ no válida",
    "Invalid \\uXXXX escape": "secuencia de escape \\uXXXX no válida",
    "{rate:g} / {copy_gbps:g} = {value:.6g}": "{rate:g} / {copy_gbps:g} = {value:.6g}",
    "measured_bytes / predicted_bytes = {ratio:.6g}": "measured_bytes / predicted_bytes = {ratio:.6g}",
    "None when predicted_bytes is 0": "None cuando predicted_bytes es 0",
    "auto, cuda, cuda:N or cpu": "auto, cuda, cuda:N o cpu",
    "quantize or tile (or None for the device's default)":
        "quantize o tile (o None para el valor por defecto del dispositivo)",
    "at most {fit_cap:,} tokens on this {type} ({model_id}, {kv_format}): the pool needs {size} plus {size2} scratch, "
    "over max_fraction {fraction:g} x free {size3} = {size4}{value}":
        "como máximo {fit_cap:,} tokens en este {type} ({model_id}, {kv_format}): el pool necesita {size} más {size2} "
        "de memoria temporal, por encima de max_fraction {fraction:g} x libre {size3} = {size4}{value}",
    "cpu: torch {version} sees no CUDA device here": "cpu: torch {version} no ve aquí ningún dispositivo CUDA",
    "cuda:0 to cuda:{value}": "de cuda:0 a cuda:{value}",
}
"""planner's input rules, English template -> Spanish (merged into ``es.MESSAGES``)."""

