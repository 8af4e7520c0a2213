"""Spanish for what the Reconcile page shows of ``planner.engines.reconcile``: causes, refusals, the two-log summary, the
settings and the comparison rows (merged into ``es.MESSAGES``)."""

RECONCILE: dict[str, str] = {
    # -- reconciling an engine log (planner/engines/reconcile.py) -------------------------------------------------------------
    "{error}": "{error}",
    "SGLang prints GB for GiB: its sizes are divided by 1024**3 (GB = 1024 * 1024 * 1024 in "
    "sglang/srt/mem_cache/memory_pool.py), so '8.23 GB' is 8.23 GiB = 8.84 GB.":
        "SGLang escribe GB donde son GiB: divide sus tamaños entre 1024**3 (GB = 1024 * 1024 * 1024 en "
        "sglang/srt/mem_cache/memory_pool.py), así que '8.23 GB' son 8,23 GiB = 8,84 GB.",
    "vLLM V0 prints 'Loading model weights took X GB' with X = bytes / 2**30: the figure is GiB labelled GB.":
        "vLLM V0 escribe 'Loading model weights took X GB' con X = bytes / 2**30: la cifra son GiB con la etiqueta GB.",
    "SGLang lists K and V separately: the KV pool is K + V, twice the K size for equal K and V widths.":
        "SGLang indica K y V por separado: el pool de KV es K + V, el doble del tamaño de K cuando K y V tienen el "
        "mismo ancho.",
    "SGLang's pool is what mem_fraction_static of total GPU memory leaves after the weights (the rest is for "
    "activations and CUDA graphs): a budget, not a per-token cost.":
        "El pool de SGLang es lo que deja mem_fraction_static de la memoria total de la GPU tras los pesos (el resto es "
        "para activaciones y grafos CUDA): un presupuesto, no un coste por token.",
    "For hybrid models vLLM reports 'GPU KV cache size' as num_blocks // num_kv_cache_groups x the smallest block "
    "size, while 'Maximum concurrency' counts the blocks one full-length request needs across all groups; the two "
    "need not agree (vLLM, https://github.com/vllm-project/vllm/issues/40691).":
        "En los modelos híbridos, vLLM indica 'GPU KV cache size' como num_blocks // num_kv_cache_groups x el menor "
        "tamaño de bloque, mientras que 'Maximum concurrency' cuenta los bloques que necesita una petición de longitud "
        "completa en todos los grupos; ambas cifras pueden no coincidir (vLLM, "
        "https://github.com/vllm-project/vllm/issues/40691).",
    "KV dtype {dtype!r} is not one kvplan maps to a format: pass the KV format":
        "el tipo KV {dtype!r} no corresponde a ningún formato de kvplan: indique el formato KV",
    "no model: kvplan's prediction needs one (--model)": "sin modelo: la predicción de kvplan necesita uno (--model)",
    "{key} is printed {times} times with different values ({values}): typically one line per rank; the first is "
    "compared.":
        "{key} aparece {times} veces con valores distintos ({values}): normalmente una línea por rango; se compara la "
        "primera.",
    "a KV connector is set": "hay un conector de KV configurado",
    "the log says so": "así lo indica el registro",
    "; this model has such layers": "; este modelo tiene capas así",
    "; no effect on a full-attention model": "; sin efecto en un modelo de atención completa",
    "vLLM's hybrid KV cache manager is off ({why}): sliding-window and chunked layers store full KV{effect}":
        "el gestor híbrido de la caché KV de vLLM está desactivado ({why}): las capas de ventana deslizante y por "
        "fragmentos guardan el KV completo{effect}",
    "Both engines store {pt:,} B per token per GPU; only the budgets differ: {names} {size} holds {pool_tokens:,} "
    "tokens, {names2} {size2} holds {pool_tokens2:,} tokens per GPU ({value:.2f}x).":
        "Ambos motores guardan {pt:,} B por token por GPU; solo difieren los presupuestos: {names} con {size} admite "
        "{pool_tokens:,} tokens y {names2} con {size2} admite {pool_tokens2:,} tokens por GPU ({value:.2f}x).",
    # -- reconcile: the settings and the rows of the comparison table -------------------------------------------------
    "given": "indicado",
    "log line {line_no}": "línea {line_no} del registro",
    "assumed: {why}": "supuesto: {why}",
    "no TP size in the log": "el registro no indica TP",
    "no PP size in the log": "el registro no indica PP",
    "no KV dtype in the log: the model's own": "el registro no indica el tipo KV: el del modelo",
    "vLLM's default": "el valor por defecto de vLLM",
    "not in the log: the model's maximum": "no está en el registro: el máximo del modelo",
    "matched from line {line} of the log ({value})": "identificado en la línea {line} del registro ({value})",
    "none: the log names no catalog model": "ninguno: el registro no nombra ningún modelo del catálogo",
    "none: line {line} names no catalog model": "ninguno: la línea {line} no nombra ningún modelo del catálogo",
    "{printed} = {size}": "{printed} = {size}",
    "{printed} (GiB labelled GB) = {size}": "{printed} (GiB con la etiqueta GB) = {size}",
    "budget // {block_bytes:,} B per block ({layers} layers x {page:,} B)":
        "presupuesto // {block_bytes:,} B por bloque ({layers} capas x {page:,} B)",
    "engine only": "solo el motor",
    "match": "coincide",
    "differs": "difiere",
    "free GPU memory after the pool": "memoria libre de la GPU tras el pool",
    "weights per GPU": "pesos por GPU",
    "{lo:,} to {hi:,}": "de {lo:,} a {hi:,}",
    "{blocks:,} / {per_request:,} blocks per request = {ratio:.2f}x":
        "{blocks:,} / {per_request:,} bloques por petición = {ratio:.2f}x",
    "{blocks:,} blocks x {block} = {tokens:,}": "{blocks:,} bloques x {block} = {tokens:,}",
    "bytes per token per GPU": "bytes por token por GPU",
    "{per_token:,} B ({shown})": "{per_token:,} B ({shown})",
    "the log's budget and token count imply this range{nearest}":
        "el presupuesto y los tokens del registro implican este rango{nearest}",
    "; the nearest KV format is {best} ({off:.1%} off)": "; el formato KV más cercano es {best} (a un {off:.1%})",
    "{lo:,.0f} to {hi:,.0f} B (budget / tokens)": "de {lo:,.0f} a {hi:,.0f} B (presupuesto / tokens)",
    "{format}: {bytes:,} B": "{format}: {bytes:,} B",
    "{list}; {item}": "{list}; {item}",
    "native": "nativo",
    "tokens in the KV pool": "tokens en el pool de KV",
    "per GPU; under TP every rank holds its share of the same tokens":
        "por GPU; con TP cada rango guarda su parte de los mismos tokens",
    "KV pool per GPU": "pool de KV por GPU",
    "{tokens:,} tokens x {per_token:,} B = {size}": "{tokens:,} tokens x {per_token:,} B = {size}",
    "mem_fraction_static": "mem_fraction_static",
    "KV budget per GPU": "presupuesto de KV por GPU",
    "taken from the log": "tomado del registro",
    "what profiling left after weights, activation peak and CUDA graphs":
        "lo que dejó el perfilado tras los pesos, el pico de activaciones y los grafos CUDA",
    "block rounding: {block}-token blocks; {why}": "redondeo a bloques: bloques de {block} tokens; {why}",
    "the printed budget holds {tokens:,} tokens at {per_token:,} B; the engine reports {reported:,}: {gap} "
    "({share:.1%}) of the printed budget holds no blocks. kvplan's arithmetic does not explain this residual (the "
    "printed budget may come from another rank or step than the pool size)":
        "el presupuesto impreso admite {tokens:,} tokens a {per_token:,} B; el motor indica {reported:,}: {gap} "
        "({share:.1%}) del presupuesto impreso no contiene bloques. La aritmética de kvplan no explica este resto (el "
        "presupuesto impreso puede venir de otro rango u otro paso que el tamaño del pool)",
    "{blocks:,} x {block_bytes:,} B per block = {size} of KV": "{blocks:,} x {block_bytes:,} B por bloque = {size} de KV",
    "Maximum concurrency for {tokens:,} tokens": "Concurrencia máxima para {tokens:,} tokens",
    "tokens the KV cache can store (start-up error)": "tokens que cabe guardar en la caché KV (error de arranque)",
    "max_model_len {printed} needs more than the pool: vLLM refuses to start":
        "max_model_len {printed} necesita más que el pool: vLLM no arranca",
    "as printed": "tal como se imprime",
    "equal within the printed rounding": "igual dentro del redondeo impreso",
    "differs by {size}: not explained by the per-token cost": "difiere en {size}: el coste por token no lo explica",
    "no per-token prediction": "sin predicción por token",
    "as printed; SGLang's GB are GiB": "tal como se imprime; los GB de SGLang son GiB",
    "GPU blocks": "bloques de GPU",
    "GPU KV cache size (tokens)": "tamaño de la caché KV de la GPU (tokens)",
    "= {tokens:,} tokens at {block} tokens per block; the log prints no budget, so the blocks cannot be checked "
    "against one":
        "= {tokens:,} tokens a {block} tokens por bloque; el registro no imprime ningún presupuesto, así que los "
        "bloques no se pueden comprobar con él",
    "GPU KV cache size / max_model_len": "tamaño de la caché KV de la GPU / max_model_len",
    "the log's own concurrency is {printed}x. {hybrid_quirk}": "la concurrencia del propio registro es {printed}x. "
                                                               "{hybrid_quirk}",
}
"""planner.engines.reconcile's English templates -> Spanish."""
