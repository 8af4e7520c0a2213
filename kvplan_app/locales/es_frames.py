"""Spanish for the page sentences (``t()``) that frame planner messages: the Model page's captions, engine view
and sources, error frames (merged into ``es.STRINGS``)."""

FRAMES: dict[str, str] = {
    "vLLM's figures need max_model_len: this model's maximum context is not known. Type it under 'Engine settings "
    "(vLLM view) and KV budget' above.":
        "Las cifras de vLLM necesitan max_model_len: no se conoce el contexto máximo de este modelo. Escríbalo arriba, "
        "en 'Ajustes del motor (vista de vLLM) y presupuesto de KV'.",
    "No vLLM figure for this model: vLLM pages full, sliding, chunked and MLA attention, and this model's KV is "
    "{what}. The theory figures above hold.":
        "No hay cifra de vLLM para este modelo: vLLM pagina atención completa, deslizante, por fragmentos y MLA, y el "
        "KV de este modelo es {what}. Las cifras teóricas de arriba siguen valiendo.",
    "No vLLM figure: {error}.": "No hay cifra de vLLM: {error}.",
    "This config cannot be imported: {error}. Keeping the previous model ({model}).":
        "Esta configuración no se puede importar: {error}. Se mantiene el modelo anterior ({model}).",
    "none yet": "ninguno todavía",
    "one of {choices}": "uno de {choices}",
    "Plan file {file} not loaded: {error}": "El archivo de plan {file} no se ha cargado: {error}",
    "Loaded {file} (schema {schema}, written by kvplan {version}).":
        "Cargado {file} (esquema {schema}, escrito por kvplan {version}).",
    "{model}, {kv_format}, {tokens} tokens": "{model}, {kv_format}, {tokens} tokens",
    "{source} · {device}: {name} · torch {torch}{cuda} · {time} UTC · fill {fill} · block {block} tokens":
        "{source} · {device}: {name} · torch {torch}{cuda} · {time} UTC · relleno {fill} · bloque de {block} tokens",
    "{bytes} B for {tokens} tokens; whole blocks: {pool} B": "{bytes} B para {tokens} tokens; en bloques enteros: {pool} B",
    "torch.cuda.memory_allocated delta: {bytes} B": "diferencia de torch.cuda.memory_allocated: {bytes} B",
    "the pool tensors' storage bytes: {bytes} B": "bytes de almacenamiento de los tensores del pool: {bytes} B",
    "mem_get_info delta {bytes} B minus measured": "diferencia de mem_get_info, {bytes} B, menos lo medido",
    "process RSS delta {bytes} B minus measured": "diferencia del RSS del proceso, {bytes} B, menos lo medido",
    "the largest pool of this layout (whole blocks, windows capped) in free {free}; under the {cap} cap with scratch: "
    "{fit}":
        "el mayor pool de esta disposición (bloques enteros, ventanas limitadas) en {free} libres; con el límite {cap} "
        "y la memoria temporal: {fit}",
    "Released afterwards: {released} (residual {residual} B). Pool {pool}; device total {total}, free {free} before "
    "the probe.":
        "Liberado después: {released} (residuo {residual} B). Pool {pool}; total del dispositivo {total}, libre {free} "
        "antes de la sonda.",
    "yes": "sí",
    "NO": "NO",
    "a token count in [{lo}, {hi}] (e.g. 131072, 128k, 1M)": "una cantidad de tokens en [{lo}, {hi}] (p. ej. 131072, "
                                                             "128k, 1M)",
    "accelerator ids from kvplan gpus, comma-separated": "ids de aceleradores de kvplan gpus, separados por comas",
    "a hit rate in [0, 1]": "una tasa de acierto en [0, 1]",
    "an accelerator id from kvplan gpus, or custom": "un id de acelerador de kvplan gpus, o custom",
    "1 or 0": "1 o 0",
    "GPU: {name} (torch {torch}, CUDA {cuda}).": "GPU: {name} (torch {torch}, CUDA {cuda}).",
    "measured here on {device}": "medido aquí en {device}",
    "uploaded: {file}": "subido: {file}",
    "queued": "en cola",
    "started": "iniciado",
    "waiting": "esperando",
    "allocating": "reservando memoria",
    "releasing": "liberando memoria",
    "done": "hecho",
    "Keeping the plan's model and GPU.": "Se mantienen el modelo y la GPU del plan.",
    "Compute a curve once on a big machine (kvplan trace FILE --sweep --save curve.json) and load it here.":
        "Calcule una curva una vez en una máquina grande (kvplan trace FILE --sweep --save curve.json) y cárguela "
        "aquí.",
    "curve file: {size} B is larger than the {limit} B limit.":
        "archivo de curva: {size} B supera el límite de {limit} B.",
    "Saved curve of {summary}. TTL: {ttl}.": "Curva guardada de {summary}. TTL: {ttl}.",
    "Sampled curve: {rate} of distinct blocks (SHARDS); expected error about ±{error} in hit rate.":
        "Curva muestreada: {rate} de los bloques distintos (SHARDS); error esperado de unos ±{error} en la tasa de "
        "acierto.",
    "At the largest saved capacity not above the usable KV: {at} of {blocks} blocks ({model} at {bytes} B per token; "
    "a lower bound, as the hit rate never falls with capacity).":
        "Con la mayor capacidad guardada que no supera el KV utilizable: {at} de {blocks} bloques ({model} con {bytes} "
        "B por token; una cota inferior, porque la tasa de acierto nunca baja al crecer la capacidad).",
    "Generic JSONL: one object per line with timestamp_s (or timestamp_ms), input_length, output_length and optional "
    "hash_ids (chained block hashes). Mooncake blocks are {tokens} tokens.":
        "JSONL genérico: un objeto por línea con timestamp_s (o timestamp_ms), input_length, output_length y, "
        "opcionalmente, hash_ids (hashes de bloque encadenados). Los bloques de Mooncake son de {tokens} tokens.",
    "trace: {size} B is larger than the {limit} B ({mb} MB) limit.":
        "traza: {size} B supera el límite de {limit} B ({mb} MB).",
    "This page hit an unexpected error (reference {ref}). Your inputs are kept; the details are in the server log "
    "under that reference.":
        "Esta página ha tenido un error inesperado (referencia {ref}). Sus entradas se conservan; los detalles están "
        "en el registro del servidor con esa referencia.",
    "Showing the last valid inputs.": "Se muestran las últimas entradas válidas.",
    "Using vLLM's defaults.": "Se usan los valores por defecto de vLLM.",
    "Link parameter '{key}' = '{value}' is invalid (expected {allowed}); default used.":
        "El parámetro del enlace '{key}' = '{value}' no es válido (se espera {allowed}); se usa el valor por defecto.",
    "needed: this model's maximum context is not known": "necesario: no se conoce el contexto máximo de este modelo",
    "{bytes} B per GPU (TP {tp}, PP {pp}: one GPU of the largest pipeline stage); basis: {basis}. Per replica counts "
    "every layer once per TP rank (replicated heads and latents included).":
        "{bytes} B por GPU (TP {tp}, PP {pp}: una GPU de la mayor etapa del pipeline); base: {basis}. Por réplica se "
        "cuenta cada capa una vez por rango TP (incluidas las cabezas y los latentes replicados).",
    "State per session: {pool_state} B in the pool (Mamba / linear attention, constant in length, included above), "
    "{state} B outside it.":
        "Estado por sesión: {pool_state} B en el pool (Mamba / atención lineal, constante con la longitud, incluido "
        "arriba), {state} B fuera de él.",
    "No per-session state outside the KV (no Mamba or linear-attention layers).":
        "Sin estado por sesión fuera de la KV (no hay capas Mamba ni de atención lineal).",
    "reported coefficient": "coeficiente publicado",
    "architecture": "arquitectura",
    "Layers: `{pattern}` ({legend})": "Capas: `{pattern}` ({legend})",
    "explains it": "lo explica",
    "does not explain it (the shipped format differs)": "no lo explica (el formato publicado es otro)",
    "Growing KV priced by the published coefficient ({bytes} B/token, the source of truth); the architecture below "
    "{verdict}: {explanation}.":
        "KV creciente valorado con el coeficiente publicado ({bytes} B/token, la fuente de referencia); la "
        "arquitectura de abajo {verdict}: {explanation}.",
    "Budget {bytes} per GPU.": "Presupuesto de {bytes} por GPU.",
    "vLLM would refuse to start: one {tokens}-token request needs {bytes} of KV, more than the budget.":
        "vLLM se negaría a arrancar: una petición de {tokens} tokens necesita {bytes} de KV, más que el presupuesto.",
    "Engine view: vLLM holds ceil(n / {block}) blocks per layer for full attention; a sliding window W reserves "
    "cdiv(min(W - 1 + {batched}, max_model_len), {block}) + 1 blocks; a block of one layer is block_size x entry "
    "bytes.":
        "Vista del motor: vLLM reserva ceil(n / {block}) bloques por capa para la atención completa; una ventana "
        "deslizante W reserva cdiv(min(W - 1 + {batched}, max_model_len), {block}) + 1 bloques; un bloque de una capa "
        "ocupa block_size x bytes por entrada.",
    "{name}: ({layers} + {padding} padding) layers x {blocks} blocks x {page} B = {bytes} B":
        "{name}: ({layers} + {padding} de relleno) capas x {blocks} bloques x {page} B = {bytes} B",
    "Capacity: {formula}.": "Capacidad: {formula}.",
    "Model: {source}": "Modelo: {source}",
    "Format {format}: {source}": "Formato {format}: {source}",
    "Engine view and capacity: {source}": "Vista del motor y capacidad: {source}",
    "Defaulted (not in the config): {fields}. Check them before relying on the numbers.":
        "Valores por defecto (no están en la configuración): {fields}. Revíselos antes de fiarse de las cifras.",
    "KV bytes per token = {bytes} B (measured on {model}, {kv_format})":
        "bytes de KV por token = {bytes} B (medidos con {model}, {kv_format})",
    "usable KV per GPU = {bytes} (measured on {gpu})": "KV utilizable por GPU = {bytes} (medido en {gpu})",
}
