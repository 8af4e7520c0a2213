"""Spanish catalogue: English source text -> Spanish.

Placeholders (``{name}``) must be kept. Add a line per new string; ``tests/test_i18n.py`` lists wrapped strings
that have no translation yet.
"""

STRINGS: dict[str, str] = {
    # -- router, sidebar, share link -----------------------------------------------------------------------------
    "kvplan: KV-cache capacity planner": "kvplan: planificador de capacidad de la caché KV",
    "GB = 10^9 B · GiB = 2^30 B. Figures are per GPU unless marked per replica.":
        "GB = 10^9 B · GiB = 2^30 B. Las cifras son por GPU salvo que se indique por réplica.",
    "Plan": "Plan",
    "Model": "Modelo",
    "Traces": "Trazas",
    "Frontier": "Frontera",
    "GB vs context": "GB según contexto",
    "Live probe": "Sonda en vivo",
    "Share link": "Enlace para compartir",
    "Opens this page with the same inputs, numbers and language.":
        "Abre esta página con las mismas entradas, cifras e idioma.",
    # -- Plan page: first screen ---------------------------------------------------------------------------------
    "KV-cache plan": "Plan de caché KV",
    "GPU": "GPU",
    "Custom HBM size": "Tamaño de HBM propio",
    "GPUs per replica": "GPU por réplica",
    "GPUs that split one replica's weights, 1 to 1,024.": "GPU que se reparten los pesos de una réplica, de 1 a 1.024.",
    "TP: split KV heads": "TP: reparte KV",
    "DP: whole sessions": "DP: sesiones enteras",
    "Attention parallelism": "Paralelismo de atención",
    "tp (vLLM, SGLang default): each session spans the replica's GPUs, which split its KV heads (MLA latents are "
    "replicated); sessions are counted per replica. dp (SGLang --enable-dp-attention): each GPU holds whole sessions.":
        "tp (por defecto en vLLM y SGLang): cada sesión ocupa todas las GPU de la réplica, que se reparten sus cabezas KV "
        "(los latentes MLA se replican); las sesiones se cuentan por réplica. dp (SGLang --enable-dp-attention): cada "
        "GPU guarda sesiones enteras.",
    "Context (tokens per session)": "Contexto (tokens por sesión)",
    "Prompt + history per session: 1,000,000, 1M, 128k or 1e6.":
        "Prompt + historial por sesión: 1.000.000, 1M, 128k o 1e6.",
    "Output tokens per request": "Tokens de salida por petición",
    "KV format": "Formato KV",
    "native (the model's own)": "nativo (el del modelo)",
    "HBM per GPU (GiB)": "HBM por GPU (GiB)",
    "HBM (GiB), typed": "HBM (GiB), escrita",
    "Prefix hit rate": "Tasa de acierto del prefijo",
    "Hit rate, typed": "Acierto escrito",
    "HBM {gb} GB, slider {lo} to {hi} GiB": "HBM {gb} GB, control de {lo} a {hi} GiB",
    "{capacity} on the data sheet": "{capacity} en la hoja de datos",
    "custom": "propia",
    ", the device's reported total": ", el total que informa el dispositivo",
    "hit rate 0 to 1: the share of each context already in the prefix cache.":
        "tasa de acierto de 0 a 1: la parte de cada contexto que ya está en la caché de prefijos.",
    "Sessions per GPU ({attention} attention)": "Sesiones por GPU (atención {attention})",
    "Sessions per replica ({attention} attention)": "Sesiones por réplica (atención {attention})",
    "{gpus} per replica.": "{gpus} por réplica.",
    "GPUs": "GPU",
    "Request rate per GPU": "Peticiones por segundo por GPU",
    "undefined (no output tokens)": "sin definir (sin tokens de salida)",
    "Limited by {limit}.": "Limitada por {limit}.",
    "decode throughput": "el rendimiento de decodificación",
    "none": "nada",
    "Usable KV per GPU": "KV utilizable por GPU",
    " (measured)": " (medido)",
    "HBM x utilization - weights - reserve.": "HBM x utilización - pesos - reserva.",
    "KV per session in HBM": "KV por sesión en HBM",
    "Per GPU: the uncached tail plus output tokens": "Por GPU: la cola sin caché más los tokens de salida",
    " plus window state": " más el estado de ventana",
    "; the shared prefix is stored once.": "; el prefijo compartido se guarda una sola vez.",
    # -- Plan page: chart --------------------------------------------------------------------------------------------
    "Context (tokens)": "Contexto (tokens)",
    "Sessions per GPU": "Sesiones por GPU",
    "sessions per GPU": "sesiones por GPU",
    "past the model's maximum": "más allá del máximo del modelo",
    "model maximum {tokens} tokens": "máximo del modelo {tokens} tokens",
    "this plan: {sessions} at {tokens} tokens": "este plan: {sessions} con {tokens} tokens",
    "this plan: no session fits at {tokens} tokens": "este plan: no cabe ninguna sesión con {tokens} tokens",
    # -- Plan page: assumptions ----------------------------------------------------------------------------------
    "Parallelism, memory and throughput assumptions": "Supuestos de paralelismo, memoria y rendimiento",
    "GPU memory utilization": "Uso de la memoria de la GPU",
    "Runtime reserve per GPU (GiB)": "Reserva del motor por GPU (GiB)",
    "Weight format": "Formato de los pesos",
    "catalog ({format})": "catálogo ({format})",
    "Decode throughput per GPU (tokens/s)": "Rendimiento de decodificación por GPU (tokens/s)",
    "Decode speed per session (tokens/s)": "Velocidad de decodificación por sesión (tokens/s)",
    "Keep window state in HBM (not host RAM)": "Guardar el estado de ventana en HBM (no en la RAM del host)",
    "Window state in HBM": "Estado de ventana en HBM",
    "Hybrid KV cache manager": "Gestor híbrido de caché KV",
    "Pipeline stages (split layers)": "Etapas de pipeline (capas repartidas)",
    "Must divide the GPUs per replica; TP = GPUs / stages.": "Debe dividir las GPU por réplica; TP = GPU / etapas.",
    "Misses, replay and tiers": "Fallos, repetición y niveles",
    "Distinct shared prefixes per GPU": "Prefijos compartidos distintos por GPU",
    "Each is stored once; sessions share them.": "Cada uno se guarda una vez; las sesiones los comparten.",
    "Mean pause between turns (s)": "Pausa media entre turnos (s)",
    "Tool calls, approvals, background jobs. 0 = no pauses.":
        "Llamadas a herramientas, aprobaciones, tareas de fondo. 0 = sin pausas.",
    "Pause distribution": "Distribución de las pausas",
    "exponential": "exponencial",
    "fixed": "fija",
    "Window-state TTL in host RAM (s)": "TTL del estado de ventana en la RAM del host (s)",
    "DeepSeek V4.1: minute-level. 0 = never persisted (vLLM always replays).":
        "DeepSeek V4.1: del orden de minutos. 0 = nunca se conserva (vLLM siempre repite).",
    "Prefill throughput per GPU (tokens/s)": "Rendimiento de prellenado por GPU (tokens/s)",
    "Prices replay and recompute (assumed).": "Da el coste de repetir y recalcular (supuesto).",
    "Host RAM per GPU (GiB)": "RAM del host por GPU (GiB)",
    "node: {gib} GiB": "nodo: {gib} GiB",
    "Node RAM / GPUs per node. Empty = {node}.": "RAM del nodo / GPU por nodo. Vacío = {node}.",
    "SSD per GPU (GiB)": "SSD por GPU (GiB)",
    "Node SSD / GPUs per node. Empty = {node}.": "SSD del nodo / GPU por nodo. Vacío = {node}.",
    "Sessions to carry per GPU": "Sesiones que llevar por GPU",
    "what HBM holds": "lo que cabe",
    "Running + paused; beyond HBM, paused sessions are parked in host RAM / SSD.":
        "En curso + en pausa; más allá de la HBM, las sesiones en pausa se aparcan en la RAM del host / SSD.",
    "Host RAM link": "Enlace con la RAM del host",
    "SSD link": "Enlace con el SSD",
    "Showing the last valid plan.": "Se muestra el último plan válido.",
    "This plan uses measured figures: ": "Este plan usa cifras medidas: ",
    "Use the planner's arithmetic instead": "Usar la aritmética del planificador",
    # -- Plan page: details ------------------------------------------------------------------------------------------
    "Details": "Detalles",
    "Assumes": "Supone:",
    "KV per GPU at {tokens} tokens": "KV por GPU con {tokens} tokens",
    "KV per session with output (no sharing)": "KV por sesión con la salida (sin compartir)",
    "Shared prefix (stored once)": "Prefijo compartido (guardado una vez)",
    "Per session in HBM: {bytes} (uncached tail of {tail} + {output}":
        "Por sesión en HBM: {bytes} (cola sin caché de {tail} + {output}",
    " + window state {bytes}": " + estado de ventana {bytes}",
    "). KV bytes per token: {bpt} B. Weights per GPU: {weights}. HBM: {hbm} ({source}). Rate limited by {limit}.":
        "). Bytes de KV por token: {bpt} B. Pesos por GPU: {weights}. HBM: {hbm} ({source}). Ritmo limitado por "
        "{limit}.",
    "set by user": "fijada por el usuario",
    "reported by the device": "informada por el dispositivo",
    "vendor figure": "cifra del fabricante",
    "token": "token",
    "tokens": "tokens",
    "output token": "token de salida",
    "output tokens": "tokens de salida",
    "session": "sesión",
    "sessions": "sesiones",
    "Window state in host RAM: {each} per session, {total} for {sessions}.":
        "Estado de ventana en la RAM del host: {each} por sesión, {total} para {sessions}.",
    "Miss probability (window state expired)": "Probabilidad de fallo (estado de ventana caducado)",
    "P(pause > TTL), {distribution} pauses of mean {pause}, TTL {ttl}":
        "P(pausa > TTL), pausas {distribution} de media {pause}, TTL {ttl}",
    "Replay per turn": "Repetición por turno",
    "{expected} tokens expected ({per_miss} per miss) at {rate} tokens/s":
        "{expected} tokens esperados ({per_miss} por fallo) a {rate} tokens/s",
    "Time to first token (resumed turn)": "Tiempo hasta el primer token (turno reanudado)",
    "restore (state reload or replay, parked tail) + one decode step":
        "restaurar (recarga del estado o repetición, cola aparcada) + un paso de decodificación",
    "Parked session: reload from host RAM": "Sesión aparcada: recarga desde la RAM del host",
    "{bytes} over {link}": "{bytes} por {link}",
    "Parked session: recompute": "Sesión aparcada: recálculo",
    "{tokens} tokens at {rate} tokens/s": "{tokens} tokens a {rate} tokens/s",
    "Bytes per tier for {sessions} ({running} running): HBM {hbm} · host RAM {host} of {host_total} · SSD {ssd} of "
    "{ssd_total} · evicted {evicted} · total {total}. Parked session back from SSD: {reload} ({link}); fastest "
    "recovery: {fastest}.":
        "Bytes por nivel para {sessions} ({running} en curso): HBM {hbm} · RAM del host {host} de {host_total} · SSD "
        "{ssd} de {ssd_total} · expulsados {evicted} · total {total}. Sesión aparcada de vuelta desde el SSD: {reload} "
        "({link}); recuperación más rápida: {fastest}.",
    "host RAM reload": "recarga desde la RAM del host",
    "SSD reload": "recarga desde el SSD",
    "recompute": "recálculo",
    "KV cache of one sequence vs context": "Caché KV de una secuencia según el contexto",
    "KV cache by context (one sequence)": "Caché KV por contexto (una secuencia)",
    "KV (B)": "KV (B)",
    "KV (GB)": "KV (GB)",
    "KV (GiB)": "KV (GiB)",
    "State outside the pool (B)": "Estado fuera del pool (B)",
    "Export": "Exportar",
    "Download plan CSV": "Descargar el plan en CSV",
    "Download plan JSON": "Descargar el plan en JSON",
    "Every input of this plan (docs/plan-files.md); `kvplan plan --plan FILE` reads it.":
        "Todas las entradas de este plan (docs/plan-files.md); `kvplan plan --plan FICHERO` lo lee.",
    "Load plan JSON": "Cargar un plan JSON",
    "A plan file of at most {kib} KiB.": "Un fichero de plan de {kib} KiB como mucho.",
    "Source: {source}": "Fuente: {source}",
}

# -- Frontier page ---------------------------------------------------------------------------------------------------
STRINGS.update({
    "Frontier: sessions and request rate": "Frontera: sesiones y ritmo de peticiones",
    "Accelerators (one line each)": "Aceleradores (una línea cada uno)",
    "Longest context": "Contexto más largo",
    "Prefix hit rate (context and rate figures)": "Tasa de acierto del prefijo (gráficos de contexto y ritmo)",
    "Heatmap accelerator": "Acelerador del mapa de calor",
    "custom (plan)": "propio (el del plan)",
    "Scale throughput": "Escalar ritmos",
    "Scale the plan's decode throughput by HBM bandwidth and its prefill throughput by BF16 FLOP/s, relative to the "
    "plan's accelerator. Off: every accelerator gets the plan's figures.":
        "Escala el rendimiento de decodificación del plan por el ancho de banda de HBM y el de prellenado por los "
        "FLOP/s en BF16, respecto al acelerador del plan. Sin marcar: todos los aceleradores usan las cifras del plan.",
    "Time to first token": "Tiempo hasta el primer token",
    "{model}, {gpus} per replica, output {output}, {prefixes}, pauses {pause} ({distribution}), TTL {ttl}: every "
    "other input comes from the Plan page.":
        "{model}, {gpus} por réplica, salida {output}, {prefixes}, pausas {pause} ({distribution}), TTL {ttl}: el resto "
        "de entradas viene de la página Plan.",
    "shared prefix": "prefijo compartido",
    "shared prefixes": "prefijos compartidos",
    "Sessions per GPU at hit rate {hit}": "Sesiones por GPU con acierto {hit}",
    "Request rate per GPU at hit rate {hit}": "Peticiones/s por GPU con acierto {hit}",
    "{gpu}, {tokens} tokens.": "{gpu}, {tokens} tokens.",
    "Current plan ({gpu}, {tokens} tokens, hit rate {hit}): {sessions} sessions per GPU ({replica} per replica), "
    "{bytes} per session. The black diamond marks it on every figure.":
        "Plan actual ({gpu}, {tokens} tokens, acierto {hit}): {sessions} sesiones por GPU ({replica} por réplica), "
        "{bytes} por sesión. El rombo negro lo marca en cada gráfico.",
    "Download the {name} grid (CSV)": "Descargar la rejilla {name} (CSV)",
    "sessions-vs-context": "sesiones según contexto",
    "sessions-vs-hit-rate": "sesiones según acierto",
    "request-rate": "ritmo de peticiones",
    "sessions-heatmap": "mapa de sesiones",
    "Sessions per GPU vs context": "Sesiones por GPU según el contexto",
    "Sessions per GPU vs prefix hit rate": "Sesiones por GPU según la tasa de acierto",
    "Request-rate frontier": "Frontera del ritmo de peticiones",
    "No output tokens in the plan: the request rate is undefined (no decode).":
        "El plan no tiene tokens de salida: el ritmo de peticiones no está definido (no hay decodificación).",
    "min(decode throughput / output tokens incl. replay prefill, sessions / time per request); ":
        "mín(rendimiento de decodificación / tokens de salida con el prellenado repetido, sesiones / tiempo por "
        "petición); ",
    "throughputs scaled per accelerator.": "rendimientos escalados por acelerador.",
    "every accelerator gets the plan's throughputs.": "todos los aceleradores usan los rendimientos del plan.",
    "Sessions over context and hit rate": "Sesiones según contexto y tasa de acierto",
})

# -- GB vs context page ----------------------------------------------------------------------------------------------
STRINGS.update({
    "KV cache vs context": "Caché KV según el contexto",
    "One sequence's KV cache in the engine's pool (native KV formats; window state kept outside the pool, as for "
    "DeepSeek V4.1-Flash, is not included). GB = 10^9 B on the left axis, GiB = 2^30 B on the right.":
        "La caché KV de una secuencia en el pool del motor (formatos KV nativos; no incluye el estado de ventana que se "
        "guarda fuera del pool, como en DeepSeek V4.1-Flash). GB = 10^9 B en el eje izquierdo, GiB = 2^30 B en el "
        "derecho.",
    "Models": "Modelos",
    "Accelerator (HBM line)": "Acelerador (línea de HBM)",
    "Draw each curve past its model's maximum context (dashed)":
        "Dibujar cada curva más allá del contexto máximo de su modelo (a trazos)",
    "Download the curves (CSV)": "Descargar las curvas (CSV)",
    "all {tokens} (the model's maximum)": "los {tokens} (el máximo del modelo)",
    "at least {tokens}": "al menos {tokens}",
    "Where one sequence stops fitting": "Dónde deja de caber una secuencia",
    "KV per token at 1M tokens (B)": "KV por token con 1M tokens (B)",
    "Longest context in {gpu} HBM (tokens)": "Contexto más largo en la HBM de {gpu} (tokens)",
    "Longest context in usable KV (tokens)": "Contexto más largo en el KV utilizable (tokens)",
    "unknown (no parameter count)": "desconocido (sin número de parámetros)",
    "{gpu}: {bytes} ({how}). Usable KV: each model's weights (catalog format) over {gpus} per replica, the plan's "
    "reserve ({reserve} GiB) and utilization ({util}).":
        "{gpu}: {bytes} ({how}). KV utilizable: los pesos de cada modelo (formato del catálogo) en {gpus} por réplica, "
        "la reserva del plan ({reserve} GiB) y su uso de memoria ({util}).",
    "as the device reports it": "como lo informa el dispositivo",
    "DeepSeek V4.1-Flash: KV by context": "DeepSeek V4.1-Flash: KV por contexto",
    "Window state outside the pool (B)": "Estado de ventana fuera del pool (B)",
    "890 B per token (DeepSeek V4.1 report, quoted in docs/sources.md) x tokens: 100k -> 0.089 GB, 250k -> 0.2225 "
    "GB, 500k -> 0.445 GB, 1M -> 0.89 GB (0.829 GiB).":
        "890 B por token (informe de DeepSeek V4.1, citado en docs/sources.md) x tokens: 100k -> 0.089 GB, "
        "250k -> 0.2225 GB, 500k -> 0.445 GB, 1M -> 0.89 GB (0.829 GiB).",
})
STRINGS.update({
    "Usable KV measured on {gpu} ({bytes}) applies to that accelerator only; the others use HBM x utilization - "
    "weights - reserve.":
        "El KV utilizable medido en {gpu} ({bytes}) vale solo para ese acelerador; los demás usan HBM x uso - pesos - "
        "reserva.",
})

# -- Model page ------------------------------------------------------------------------------------------------------
STRINGS.update({
    "Model: KV accounting": "Modelo: cuentas del KV",
    "Every figure is per GPU unless marked per replica. GB = 10^9 B, GiB = 2^30 B.":
        "Cada cifra es por GPU salvo que se indique por réplica. GB = 10^9 B, GiB = 2^30 B.",
    "Model source": "Origen del modelo",
    "Catalog": "Catálogo",
    "Import config.json": "Importar config.json",
    "Starts from the Plan page's model, KV format, GPUs per replica (as TP), context and usable KV per GPU.":
        "Parte del modelo, formato KV, GPU por réplica (como TP), contexto y KV utilizable por GPU de la página Plan.",
    "Tensor parallel (TP)": "Paralelismo de tensor (TP)",
    "Pipeline parallel (PP)": "Paralelismo de pipeline (PP)",
    "Context tokens (e.g. 128k, 1M)": "Tokens de contexto (p. ej. 128k, 1M)",
    "KV per GPU (pool)": "KV por GPU (pool)",
    "KV bytes per token per GPU": "Bytes de KV por token y GPU",
    "State per session": "Estado por sesión",
    "Per-group breakdown (per GPU)": "Desglose por grupo (por GPU)",
    "Download the breakdown (CSV)": "Descargar el desglose (CSV)",
    "Theory vs engine (vLLM), one sequence per GPU": "Teoría frente a motor (vLLM), una secuencia por GPU",
    "vLLM capacity for a KV budget (per GPU)": "Capacidad de vLLM para un presupuesto de KV (por GPU)",
    "Upload a config.json": "Subir un config.json",
    "…or paste it": "…o pegarlo",
    "Engine settings (vLLM view) and KV budget": "Ajustes del motor (vista de vLLM) y presupuesto de KV",
    "Block size (tokens)": "Tamaño de bloque (tokens)",
    "max_num_batched_tokens": "max_num_batched_tokens",
    "Hybrid KV cache manager on (off e.g. with a KV connector)":
        "Gestor híbrido de la caché KV activo (desactivado p. ej. con un conector de KV)",
    "Available KV memory per GPU (GiB)": "Memoria de KV disponible por GPU (GiB)",
    "max_model_len (blank: the model's maximum context)": "max_model_len (vacío: el contexto máximo del modelo)",
    "Columns as docs/csv.md lists them in its section on the model breakdown (units in the names).":
        "Columnas como las lista docs/csv.md en su sección sobre el desglose del modelo (unidades en los nombres).",
    "Theory (window-capped), per GPU": "Teoría (con tope de ventana), por GPU",
    "vLLM allocates, per GPU": "Lo que reserva vLLM, por GPU",
    "KV blocks (num_gpu_blocks)": "Bloques de KV (num_gpu_blocks)",
    "GPU KV cache size": "Tamaño de la caché KV de la GPU",
    "Largest max_model_len for this budget": "Mayor max_model_len para este presupuesto",
    "How this is computed": "Cómo se calcula",
    "Sources": "Fuentes",
    "What the import read, derived, defaulted or ignored": "Qué leyó, dedujo, supuso o ignoró la importación",
    "Upload or paste a Hugging Face config.json. Until then the previous model stays.":
        "Sube o pega un config.json de Hugging Face. Mientras tanto se mantiene el modelo anterior.",
    "Why they differ:": "Por qué difieren:",
})

# -- Traces page -----------------------------------------------------------------------------------------------------
STRINGS.update({
    "Traces: measured prefix-cache hit rates": "Trazas: tasas de acierto medidas de la caché de prefijos",
    "Trace": "Traza",
    "TTL (entries unused this long expire)": "TTL (caducan las entradas sin uso durante este tiempo)",
    "Requests": "Peticiones",
    "Duration": "Duración",
    "Mean arrival rate": "Ritmo medio de llegada",
    "Prompt tokens, median": "Tokens del prompt, mediana",
    "Prompt tokens, mean": "Tokens del prompt, media",
    "Malformed rows": "Filas mal formadas",
    "Token hit rate": "Acierto por tokens",
    "Block hit rate": "Acierto por bloques",
    "Eviction policy": "Política de desalojo",
    "LRU, tail blocks evicted first (vLLM)": "LRU, los bloques finales se desalojan primero (vLLM)",
    "LRU over radix-tree leaves (SGLang)": "LRU sobre las hojas del árbol radix (SGLang)",
    "Eviction: {policy}. A request looks up the cache as it was before it, then its blocks are touched tail first.":
        "Desalojo: {policy}. Una solicitud consulta la caché tal como estaba antes de ella y luego usa sus bloques "
        "empezando por el último.",
    "Cache (usable KV per GPU)": "Caché (KV utilizable por GPU)",
    "Unlimited-cache token hit rate": "Acierto por tokens con caché ilimitada",
    "Download the curve (CSV)": "Descargar la curva (CSV)",
    "Format": "Formato",
    "Tokens per hash_ids block (generic JSONL)": "Tokens por bloque de hash_ids (JSONL genérico)",
    "Columns as docs/csv.md lists them in its section on the trace curve (units in the names).":
        "Columnas como las lista docs/csv.md en su sección sobre la curva de la traza (unidades en los nombres).",
    "Lengths, arrivals and concurrency": "Longitudes, llegadas y concurrencia",
    "Upload a trace, or pick a bundled one.": "Sube una traza o elige una de las incluidas.",
    "Upload a trace": "Subir una traza",
})

# -- Live probe page -------------------------------------------------------------------------------------------------
STRINGS.update({
    "Live probe: the KV pool's real bytes": "Sonda en vivo: los bytes reales del pool de KV",
    "Check for torch again": "Buscar torch de nuevo",
    "Run here": "Ejecutar aquí",
    "Upload a result": "Subir un resultado",
    "ProbeResult JSON (from `kvplan probe … --json`)": "JSON de ProbeResult (de `kvplan probe … --json`)",
    "Planner: bytes per token": "Planificador: bytes por token",
    "Measured: bytes per token": "Medido: bytes por token",
    "Allocator and page overhead": "Sobrecoste del asignador y las páginas",
    "KV cache size in free memory": "Tamaño de la caché KV en la memoria libre",
    "Download this result (JSON)": "Descargar este resultado (JSON)",
    "In the plan": "En el plan",
    "Use the measured bytes per token in the plan": "Usar en el plan los bytes por token medidos",
    "Sessions per GPU (planner arithmetic)": "Sesiones por GPU (aritmética del planificador)",
    "No probe yet: run one here or upload a result.": "Aún no hay sonda: ejecuta una aquí o sube un resultado.",
    "Unavailable: torch is not installed here.": "No disponible: torch no está instalado aquí.",
    "Only for a CUDA probe: a CPU probe's free memory is host RAM.":
        "Solo para una sonda CUDA: la memoria libre de una sonda en CPU es RAM del host.",
    "Back to the planner's arithmetic": "Volver a la aritmética del planificador",
    "Yes, run on this server's CPU (it allocates host memory)":
        "Sí, ejecutar en la CPU de este servidor (reserva memoria del host)",
    "Tokens in the pool (e.g. 1M, 128k)": "Tokens en el pool (p. ej. 1M, 128k)",
    "Device": "Dispositivo",
    "Most of the free memory to use": "Máximo de memoria libre a usar",
    "Run the probe": "Ejecutar la sonda",
    "Tick the box to run the probe on this server's CPU.": "Marca la casilla para ejecutar la sonda en la CPU de este servidor.",
})
STRINGS.update({
    "native = {label}": "nativo = {label}",
    "native": "nativo",
    "{model} at {tokens} tokens": "{model} con {tokens} tokens",
    "{tokens} tokens is more than this model's maximum context ({max}): the figures extrapolate its layout.":
        "{tokens} tokens es más que el contexto máximo de este modelo ({max}): las cifras extrapolan su estructura.",
    "KV per replica ({gpus})": "KV por réplica ({gpus})",
    "{tokens} tokens": "{tokens} tokens",
    "Maximum concurrency for {tokens} tokens per request": "Concurrencia máxima con {tokens} tokens por petición",
})
STRINGS.update({
    "Group": "Grupo", "Role": "Papel", "Layers": "Capas", "Blocks": "Bloques", "Entries per block": "Entradas por bloque",
    "Entry (B)": "Entrada (B)", "Entries": "Entradas", "Planner (B)": "Planificador (B)", "Pool (B)": "Pool (B)",
    "Channels": "Canales", "Relative RMS error": "Error RMS relativo", "Largest absolute error": "Mayor error absoluto",
    "Quantize (GB/s)": "Cuantizar (GB/s)", "Dequantize (GB/s)": "Descuantizar (GB/s)",
    "Plain copy (GB/s)": "Copia simple (GB/s)", "Quantize vs copy": "Cuantizar frente a copiar",
    "Dequantize vs copy": "Descuantizar frente a copiar",
    "same as the planner": "igual que el planificador", "{ratio}x the planner's": "{ratio}x la del planificador",
})
STRINGS.update({
    "Layers (model)": "Capas (modelo)", "Layers per GPU": "Capas por GPU", "KV heads per GPU": "Cabezas KV por GPU",
    "Head dim / channels": "Dimensión de cabeza / canales", "Tokens per entry": "Tokens por entrada",
    "B per token (growing)": "B por token (creciente)", "Entries at {tokens}": "Entradas con {tokens}",
    "Bytes at {tokens}": "Bytes con {tokens}", "Capped or growing": "Con tope o creciente",
    "In the HBM pool": "En el pool de HBM", "Replicated on TP": "Replicado en TP",
})
STRINGS.update({
    "Measured at the usable KV of one {gpu}": "Medido con el KV utilizable de una {gpu}",
    "Use this hit rate on the Plan page ({hit}, token-weighted)":
        "Usar esta tasa de acierto en la página Plan ({hit}, ponderada por tokens)",
    "The Plan page's prefix hit rate is now {hit} (rounded to its 0.01 step).":
        "La tasa de acierto del prefijo de la página Plan es ahora {hit} (redondeada a su paso de 0,01).",
    "Trace file (JSONL or CSV, at most {mb} MB)": "Fichero de traza (JSONL o CSV, {mb} MB como mucho)",
})
STRINGS.update({
    "Recommend GPUs": "Recomendar GPU",
    "Reconcile a log": "Cotejar un registro",
    "Your own accelerator": "Tu propio acelerador",
    "yours, as the device reports it": "el tuyo, como lo informa el dispositivo",
    "{name} (yours)": "{name} (el tuyo)",
})

# -- Recommend and Reconcile pages (wrapped strings; their sentences with figures are still English) ------------------
STRINGS.update({
    "Target": "Objetivo",
    "Target value": "Valor objetivo",
    "Accelerators": "Aceleradores",
    "KV formats": "Formatos KV",
    "Weight formats": "Formatos de los pesos",
    "No configuration meets the target: add accelerators, GPUs per replica or KV formats.":
        "Ninguna configuración alcanza el objetivo: añade aceleradores, GPU por réplica o formatos KV.",
    "Reconcile an engine log": "Cotejar el registro de un motor",
    "Load the example: Qwen3-235B-A22B at TP 4, vLLM vs SGLang (https://github.com/vllm-project/vllm/issues/21348)":
        "Cargar el ejemplo: Qwen3-235B-A22B con TP 4, vLLM frente a SGLang (https://github.com/vllm-project/vllm/issues/21348)",
    "TP size (0 = from the log, else 1)": "Tamaño de TP (0 = el del registro, si no 1)",
    "Paste a log above, or load the example.": "Pega un registro arriba o carga el ejemplo.",
})
STRINGS.update({
    "Chart against cost per hour (priced rows only)": "Gráfico según el coste por hora (solo filas con precio)",
    "Scale throughput per accelerator": "Escalar ritmos por acelerador",
    "Scale the plan's decode throughput by HBM bandwidth and its prefill throughput by BF16 FLOP/s, relative to the "
    "plan's accelerator (as the Frontier page does).":
        "Escala el rendimiento de decodificación del plan por el ancho de banda de HBM y el de prellenado por los "
        "FLOP/s en BF16, respecto al acelerador del plan (como la página Frontera).",
})
STRINGS.update({"Fleet: N replicas, each with this cache": "Flota: N réplicas, cada una con esta caché"})
STRINGS.update({"Load a saved curve": "Cargar una curva guardada"})

# -- charts: words the figure builders (kvplan_app.charts.figures, kvplan_app.charts.traces) take through ``tr`` ---------------
STRINGS.update({
    "this plan's usable KV on {gpu}": "KV utilizable de este plan en {gpu}",
    "Hit rate vs cache capacity (TTL: {ttl})": "Tasa de acierto según capacidad de caché (TTL: {ttl})",
    "usable KV on {gpu}": "KV utilizable en {gpu}",
    "{gpu} HBM (reported)": "HBM de {gpu} (informada)",
    "{gpu} HBM (vendor figure)": "HBM de {gpu} (cifra del fabricante)",
    "usable KV per GPU for {model}": "KV utilizable por GPU para {model}",
    "current plan": "plan actual",
    "Requests/s per GPU": "Peticiones/s por GPU",
    "Headroom over the target (%)": "Margen sobre el objetivo (%)",
    "accelerator": "acelerador",
    "Sessions per GPU at hit rate {hit_rate}": "Sesiones por GPU con acierto {hit_rate}",
    "Sessions per GPU at {tokens} tokens": "Sesiones por GPU a {tokens} tokens",
    "this plan: rate undefined": "este plan: tasa sin definir",
    "Requests/s per GPU at hit rate {hit_rate}": "Peticiones/s por GPU con acierto {hit_rate}",
    "this plan": "este plan",
    "%{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB<br>%{customdata[1]:,.0f} B":
        "%{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB<br>%{customdata[1]:,.0f} B",
    "this plan: {gb} GB ({gib} GiB) at {tokens} tokens": "este plan: {gb} GB ({gib} GiB) a {tokens} tokens",
    "KV cache of one sequence (GB = 10^9 B)": "Caché KV de una secuencia (GB = 10^9 B)",
    "plan: {tokens} tokens, {sessions} sessions": "plan: {tokens} tokens, {sessions} sesiones",
    "this plan: {sessions}": "este plan: {sessions}",
    "this plan:": "este plan:",
    'Fleet: the hit rate with N replicas, each with this cache, by routing (below the single-GPU figures).': 'Flota: la tasa de acierto con N réplicas, cada una con esta caché, según el enrutado (debajo de las cifras de una GPU).',
    'Queued...': 'En cola...',
    'Jobs ahead in the queue: {ahead}': 'Trabajos por delante en la cola: {ahead}',
    'reading the trace': 'leyendo la traza',
    'stack distances': 'distancias de pila',
    'replay': 'reproducción',
    'fleet of replicas': 'flota de réplicas',
    "**At the plan's context, {tokens} tokens, on {gpu}, hit rate {hit}:**": '**Con el contexto del plan, {tokens} tokens, en {gpu}, acierto {hit}:**',
    '{gpu}, {tokens} tokens, hit rate {hit}.': '{gpu}, {tokens} tokens, acierto {hit}.',
    'Miss probability': 'Probabilidad de fallo',
    "Probability that a session's window state has expired when it resumes (the plan's hit rate).": 'Probabilidad de que el estado de ventana de una sesión haya caducado al reanudarse (con el acierto del plan).',
    "The plan's context ({tokens} tokens) is beyond the longest context shown ({longest} tokens): the charts over context do not mark it.": 'El contexto del plan ({tokens} tokens) supera el contexto más largo mostrado ({longest} tokens): los gráficos por contexto no lo marcan.',
    'The context charts are at hit rate {hit}; the black diamond is the plan at its own hit rate {plan_hit}.': 'Los gráficos por contexto usan acierto {hit}; el rombo negro es el plan con su propio acierto {plan_hit}.',
    "this plan (hit rate {hit_rate}):": "este plan (acierto {hit_rate}):",
    "this plan: {tokens} tokens (beyond this chart)": "este plan: {tokens} tokens (fuera de este gráfico)",
    "plan: hit rate {hit_rate}, {sessions} sessions": "plan: acierto {hit_rate}, {sessions} sesiones",
    "plan: {tokens} tokens, {rate} requests/s": "plan: {tokens} tokens, {rate} peticiones/s",
    "hit rate %{x:.2f}<br>%{y:,} tokens<br>%{customdata:,.2~f} sessions per GPU":
        "acierto %{x:.2f}<br>%{y:,} tokens<br>%{customdata:,.2~f} sesiones por GPU",
    "plan: {tokens} tokens, {gb} GB ({gib} GiB)": "plan: {tokens} tokens, {gb} GB ({gib} GiB)",
    "this plan: {gb} GB ({gib} GiB)": "este plan: {gb} GB ({gib} GiB)",
    "{gpus} GPUs ({replicas} x {per_replica}), KV {kv_format}, attention {attention}":
        "{gpus} GPU ({replicas} x {per_replica}), KV {kv_format}, atención {attention}",
    "Pareto front": "Frente de Pareto",
    "recommended plan": "plan recomendado",
    "recommended plan: {gpus} GPUs": "plan recomendado: {gpus} GPU",
    "this plan: %{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB":
        "este plan: %{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB",
    "{label} (not on this chart)": "{label} (fuera de este gráfico)",
    "model maximum {tokens}": "máximo del modelo {tokens}",
    "this plan: {rate} /s": "este plan: {rate} /s",
    "Sessions<br>per GPU": "Sesiones<br>por GPU",
    "%{text}<br>headroom %{y:.1f}%": "%{text}<br>margen %{y:.1f}%",
    "Cost per hour": "Coste por hora",
    "Total GPUs": "GPU en total",
    "%{x:,} tokens<br>%{y:,.2~f} sessions per GPU<br>per session %{customdata[0]:.4g} GB (%{customdata[1]:.4g} GiB)":
        "%{x:,} tokens<br>%{y:,.2~f} sesiones por GPU<br>por sesión %{customdata[0]:.4g} GB (%{customdata[1]:.4g} GiB)",
    "%{x:,} tokens<br>%{y:,.4g} requests/s per GPU<br>limited by %{customdata[0]}<br>TTFT %{customdata[1]:,.3g} ms":
        "%{x:,} tokens<br>%{y:,.4g} peticiones/s por GPU<br>limitada por %{customdata[0]}<br>TTFT %{customdata[1]:,.3g} ms",
    "{model} past its maximum ({tokens})": "{model} más allá de su máximo ({tokens})",
    "hit rate %{x:.2f}<br>%{y:,.2~f} sessions per GPU": "acierto %{x:.2f}<br>%{y:,.2~f} sesiones por GPU",
    "plan: hit rate {hit_rate}, {tokens} tokens": "plan: acierto {hit_rate}, {tokens} tokens",
    "no TTL": "sin TTL",
    "cache contents (GB = 10^9 B)": "contenido de la caché (GB = 10^9 B)",
    "cache contents (blocks)": "contenido de la caché (bloques)",
    "hit rate %{y:.1%}": "acierto %{y:.1%}",
    "cache capacity (GB = 10^9 B; GiB = 2^30 B below)": "capacidad de la caché (GB = 10^9 B; GiB = 2^30 B debajo)",
    "cache capacity (blocks)": "capacidad de la caché (bloques)",
    "%{x:.2f} min: %{y:.4g} GB (%{customdata[0]:.4g} GiB), %{customdata[1]:,} blocks":
        "%{x:.2f} min: %{y:.4g} GB (%{customdata[0]:.4g} GiB), %{customdata[1]:,} bloques",
    "%{x:.2f} min: %{y:,} blocks": "%{x:.2f} min: %{y:,} bloques",
    "Replicas (each with the cache size)": "Réplicas (cada una con ese tamaño de caché)",
    "Token hit rate (%)": "Acierto por tokens (%)",
    "routing": "enrutado",
    "Hit rate": "Tasa de acierto",
    "requests in flight": "peticiones en curso",
    "Time since first arrival (min)": "Tiempo desde la primera llegada (min)",
    "cache": "caché",
    "time since first arrival (min)": "tiempo desde la primera llegada (min)",
    "requests": "peticiones",
    "minute since first arrival": "minuto desde la primera llegada",
    "Tokens per request (log scale)": "Tokens por petición (escala logarítmica)",
    "%{customdata[0]:,} blocks · %{customdata[3]:,} tokens": "%{customdata[0]:,} bloques · %{customdata[3]:,} tokens",
    "%{x:.2f} min: %{y} requests": "%{x:.2f} min: %{y} peticiones",
    "mean {value}": "media {value}",
    "this plan's usable KV": "KV utilizable de este plan",
    "minute %{x}: %{y:,} requests": "minuto %{x}: %{y:,} peticiones",
    "this plan: {ttl}": "este plan: {ttl}",
    "this plan: {sessions} sessions per GPU": "este plan: {sessions} sesiones por GPU",
    "this plan: {rate} requests/min per GPU": "este plan: {rate} peticiones/min por GPU",
    "10^%{x:.2f} tokens: %{y} requests": "10^%{x:.2f} tokens: %{y} peticiones",
    "%{customdata[0]:,.0f} to %{customdata[1]:,.0f} tokens: %{y:,} requests":
        "%{customdata[0]:,.0f} a %{customdata[1]:,.0f} tokens: %{y:,} peticiones",
    "from minute %{x}: %{y:,} requests in {k} minutes": "desde el minuto %{x}: %{y:,} peticiones en {k} minutos",
    "requests per {k} minutes": "peticiones por {k} minutos",
    "this plan: {rate} requests per {k} minutes per GPU": "este plan: {rate} peticiones por {k} minutos por GPU",
    "per {k} minutes": "por {k} minutos",
    "this plan: {tokens} tokens": "este plan: {tokens} tokens",
    "%{x} replicas: token hit rate %{y:.1f}%, block %{customdata[0]:.1f}%<br>load imbalance %{customdata[1]:.3f} "
    "(max / mean requests), %{customdata[2]}":
        "%{x} réplicas: acierto por tokens %{y:.1f}%, por bloques %{customdata[0]:.1f}%<br>desequilibrio de carga "
        "%{customdata[1]:.3f} (peticiones máx. / media), %{customdata[2]}",
    "this plan's hit rate: {hit_rate}": "tasa de acierto de este plan: {hit_rate}",
    "Prefix-cache hit rate vs cache capacity": "Tasa de acierto de la caché de prefijos según su capacidad",
    "Prefix-cache hit rate vs TTL": "Tasa de acierto de la caché de prefijos según el TTL",
    "Concurrent requests (estimated)": "Peticiones simultáneas (estimadas)",
    "Prefix-cache contents over time": "Contenido de la caché de prefijos en el tiempo",
    "Arrivals per minute": "Llegadas por minuto",
    "Prompt and output lengths": "Longitudes de prompt y salida",
    "Token hit rate vs replicas, by routing": "Acierto por tokens según réplicas, por enrutado",
    "Hit rate vs TTL at the usable KV": "Tasa de acierto según el TTL con el KV utilizable",
    "token-weighted": "ponderada por tokens",
    "block-weighted": "ponderada por bloques",
    "prompt tokens": "tokens de prompt",
})

MESSAGES: dict[str, str] = {
    # -- planner's messages shown on pages: an exact sentence, or a template whose {fields} take the message's values;
    # a field ending in _t holds words and must itself be in STRINGS (else the message stays in English) ------------
    "{field}: {value} is not allowed; expected {allowed_t}": "{field}: {value} no está permitido; se espera {allowed_t}",
    "{gpus} GPUs: {replicas} whole replicas = {capacity} {unit_t} < {target}: fails":
        "{gpus} GPU: {replicas} réplicas enteras = {capacity} {unit_t} < {target}: no llega",
    "{gpus} GPUs: {replicas} whole replica = {capacity} {unit_t} < {target}: fails":
        "{gpus} GPU: {replicas} réplica entera = {capacity} {unit_t} < {target}: no llega",
}
"""planner's English messages -> Spanish (see ``kvplan_app.i18n.planner_message``)."""

STRINGS.update({
    "requests/s": "peticiones/s",
    "not checked": "sin comprobar",
})

# -- Recommend page --------------------------------------------------------------------------------------------------
STRINGS.update({
    "For {model} at {tokens} tokens, TTL {ttl} s, pauses {pause} s (the Plan page's inputs). tp: a replica's GPUs "
    "split each session's KV heads; dp: each GPU holds whole sessions. Identical replicas, no pipeline parallel; rows "
    "rank by total GPUs, then cost, then headroom.":
        "Para {model} a {tokens} tokens, TTL {ttl} s, pausas {pause} s (las entradas de la página Plan). tp: las GPU "
        "de una réplica se reparten las cabezas KV de cada sesión; dp: cada GPU guarda sesiones enteras. Réplicas "
        "idénticas, sin paralelismo de pipeline; las filas se ordenan por GPU en total, luego coste, luego margen.",
    "Fewest GPUs: {gpus} x {accelerator} (1 replica of {per_replica}, KV {kv_format}), {capacity} against {target}.":
        "Menos GPU: {gpus} x {accelerator} (1 réplica de {per_replica}, KV {kv_format}), {capacity} frente a {target}.",
    "Fewest GPUs: {gpus} x {accelerator} ({replicas} replicas of {per_replica}, KV {kv_format}), {capacity} against "
    "{target}.":
        "Menos GPU: {gpus} x {accelerator} ({replicas} réplicas de {per_replica}, KV {kv_format}), {capacity} frente "
        "a {target}.",
    "Rank": "Puesto",
    "Accelerator": "Acelerador",
    "Attention": "Atención",
    "Replicas": "Réplicas",
    "Sessions per replica": "Sesiones por réplica",
    "Decode (tokens/s per GPU)": "Decodificación (tokens/s por GPU)",
    "Prefill (tokens/s per GPU)": "Prellenado (tokens/s por GPU)",
    "Capacity ({unit})": "Capacidad ({unit})",
    "Headroom": "Margen",
    "Price per GPU-hour": "Precio por GPU-hora",
    "Checked by the plan": "Comprobada por el plan",
    "With one GPU fewer": "Con una GPU menos",
    "{searched} configurations searched, {infeasible} hold nothing; the first {rows} rows are checked by the plan "
    "itself.":
        "{searched} configuraciones exploradas, {infeasible} no admiten nada; las primeras {rows} filas las comprueba "
        "el propio plan.",
    "concurrent sessions": "sesiones simultáneas",
    "requests per second": "peticiones por segundo",
    "Price per GPU-hour (optional)": "Precio por GPU-hora (opcional)",
    "the catalogue's": "la del catálogo",
    "measured on the {sample} sample trace at each configuration's KV pool":
        "medida en la traza de ejemplo {sample} con el KV de cada configuración",
    "Reading the trace's reuse profile ...": "Leyendo el perfil de reutilización de la traza ...",
    "the plan's ({hit_rate})": "la del plan ({hit_rate})",
    "open plan": "abrir plan",
    "conversation": "conversación",
    "synthetic": "sintética",
})

# -- Traces page: sentences -----------------------------------------------------------------------------------------
STRINGS.update({
    "Replay a real request trace through an LRU prefix cache of the plan's usable KV and a TTL. GB = 10^9 B, "
    "GiB = 2^30 B. Semantics and formats: docs/traces.md.":
        "Reproduce una traza real de peticiones en una caché de prefijos LRU del tamaño del KV utilizable del plan, "
        "con un TTL. GB = 10^9 B, GiB = 2^30 B. Semántica y formatos: docs/traces.md.",
    "{model}: {per_token} B per token at the trace's mean prompt ({tokens} tokens), {block_tokens}-token blocks of "
    "{block_bytes} B: {blocks} blocks fit. TTL: {ttl}. Every reuse in the trace hits from {saturation} blocks up, "
    "{saturation_bytes}.":
        "{model}: {per_token} B por token con el prompt medio de la traza ({tokens} tokens), bloques de "
        "{block_tokens} tokens de {block_bytes} B: caben {blocks} bloques. TTL: {ttl}. Toda reutilización de la "
        "traza acierta desde {saturation} bloques, {saturation_bytes}.",
    "Routing (prefix is simulated request by request: slower)":
        "Enrutado (prefix se simula petición a petición: más lento)",
    "Each request is active for its output tokens at {speed} tokens/s (the plan's decode speed per session), "
    "queueing ignored: peak {peak}, mean {mean} requests in flight; the plan fits {sessions} sessions per GPU "
    "({attention} attention).":
        "Cada petición está activa mientras genera sus tokens de salida a {speed} tokens/s (la velocidad de "
        "decodificación por sesión del plan), sin colas: pico de {peak} y media de {mean} peticiones en curso; el plan "
        "admite {sessions} sesiones por GPU (atención {attention}).",
    "Hit rates are not measurable from this trace: it has lengths and arrival times only, no prefix block hashes. "
    "Its lengths, arrivals and concurrency are below.":
        "Esta traza no permite medir tasas de acierto: solo tiene longitudes y tiempos de llegada, sin hashes de "
        "bloques de prefijo. Debajo están sus longitudes, llegadas y concurrencia.",
    "Routing: random and round-robin ignore the cache; session keeps a conversation on one replica (by the first "
    "block past the prefix every request shares, when the trace has no session id); prefix sends a request to the "
    "replica holding its longest cached prefix (simulated). Load imbalance = most requests on one replica / the mean. "
    "docs/traces.md says how each is computed.":
        "Enrutado: random y round-robin ignoran la caché; session mantiene una conversación en una réplica (por el "
        "primer bloque tras el prefijo que comparten todas las peticiones, si la traza no tiene id de sesión); prefix "
        "envía cada petición a la réplica con su prefijo más largo en caché (simulado). Desequilibrio de carga = "
        "máximo de peticiones en una réplica / la media. docs/traces.md explica cómo se calcula cada uno.",
    "Download the fleet table (CSV)": "Descargar la tabla de la flota (CSV)",
    "Routing": "Enrutado",
    "The Plan page's prefix hit rate is now {hit}.": "La tasa de acierto del prefijo de la página Plan es ahora {hit}.",
    "Computing stack distances...": "Calculando distancias de pila...",
    "No usable KV on this GPU: the cache holds nothing.": "No queda KV utilizable en esta GPU: la caché no guarda nada.",
    "Replaying for cache contents over time...": "Reproduciendo para el contenido de la caché en el tiempo...",
    "Columns as docs/csv.md lists them in its section on the fleet table (units in the names).":
        "Columnas como las lista docs/csv.md en su sección sobre la tabla de la flota (unidades en los nombres).",
    "Use this hit rate on the Plan page ({hit}: {replicas} replicas, {routing})":
        "Usar esta tasa en la página Plan ({hit}: {replicas} réplicas, {routing})",
    "Use this hit rate on the Plan page ({hit}: 1 replica, {routing})":
        "Usar esta tasa en la página Plan ({hit}: 1 réplica, {routing})",
    "The Plan page's prefix hit rate is now {hit} ({replicas} replicas, {routing}).":
        "La tasa de acierto del prefijo de la página Plan es ahora {hit} ({replicas} réplicas, {routing}).",
    "Custom (the plan's HBM)": "Propia (la HBM del plan)",
    "Replaying across replicas...": "Reproduciendo en varias réplicas...",
})

# -- Reconcile page; the Plan page's own-accelerator form --------------------------------------------------------------
STRINGS.update({
    "Paste what vLLM or SGLang printed at start-up. kvplan reads the KV-cache lines as printed, puts its own "
    "prediction for the same settings beside them (bytes per token per GPU, GB = 10^9 B and GiB = 2^30 B) and names "
    "the cause of each difference. Lines it cannot read are listed, never guessed.":
        "Pega lo que vLLM o SGLang imprimieron al arrancar. kvplan lee las líneas de la caché KV tal como se "
        "imprimieron, pone al lado su propia predicción para los mismos ajustes (bytes por token por GPU, "
        "GB = 10^9 B y GiB = 2^30 B) y nombra la causa de cada diferencia. Las líneas que no sabe leer se listan, "
        "nunca se adivinan.",
    "Log 1": "Registro 1",
    "Log 2 (optional, e.g. the other engine)": "Registro 2 (opcional, p. ej. el otro motor)",
    "{log}: upload": "{log}: subir",
    "{log}: paste": "{log}: pegar",
    "Log {n}": "Registro {n}",
    "kvplan: bytes per token per GPU": "kvplan: bytes por token por GPU",
    "Setting": "Ajuste",
    "Value": "Valor",
    "Quantity (per GPU)": "Magnitud (por GPU)",
    "Engine printed": "Impreso por el motor",
    "Status": "Estado",
    "Cause": "Causa",
    "Not computed: ": "Sin calcular: ",
    "1 line mentions KV or memory but was not read": "1 línea menciona KV o memoria pero no se leyó",
    "{n} lines mention KV or memory but were not read": "{n} líneas mencionan KV o memoria pero no se leyeron",
    "over {limit} bytes; upload the start-up part": "más de {limit} bytes; sube la parte del arranque",
    "(the model the log names)": "(el modelo que nombra el registro)",
    "from the log": "del registro",
    "Your accelerator (travels in the share link)": "Tu acelerador (viaja en el enlace para compartir)",
    "Id (slug)": "Id (slug)",
    "Name": "Nombre",
    "Memory as the device reports it": "Memoria tal como la informa el dispositivo",
    "Unit": "Unidad",
    "HBM bandwidth (GB/s)": "Ancho de banda de HBM (GB/s)",
    "Dense BF16 TFLOP/s": "TFLOP/s densos en BF16",
    "Host link GB/s (0 = the plan's)": "Enlace con el host GB/s (0 = el del plan)",
    "Price per GPU-hour (0 = not priced)": "Precio por GPU-hora (0 = sin precio)",
    "nvidia-smi prints MiB; rocm-smi can print bytes": "nvidia-smi imprime MiB; rocm-smi puede imprimir bytes",
    "bytes": "bytes",
})

# -- Live probe page ---------------------------------------------------------------------------------------------------
STRINGS.update({
    "torch {version} became available at {time}. Reload this page (F5) to start from a clean state; if the probe then "
    "fails to import torch, restart the server (`kvplan serve`, or `streamlit run app.py`).":
        "torch {version} está disponible desde las {time}. Recarga esta página (F5) para empezar de cero; si la sonda "
        "sigue sin poder importar torch, reinicia el servidor (`kvplan serve` o `streamlit run app.py`).",
    "torch is not installed on this server, so the probe cannot run here. To run it here: `pip install "
    "'kvplan[probe]'` in the server's environment, then press '{button}' (or restart the server if it is still not "
    "found). Or run `kvplan probe --model … --tokens … --json` on a GPU machine and upload its result below.":
        "torch no está instalado en este servidor, así que la sonda no puede ejecutarse aquí. Para ejecutarla aquí: "
        "`pip install 'kvplan[probe]'` en el entorno del servidor y pulsa '{button}' (o reinicia el servidor si sigue "
        "sin encontrarlo). O ejecuta `kvplan probe --model … --tokens … --json` en una máquina con GPU y sube aquí "
        "su resultado.",
    "Use the probe's free GPU memory ({bytes}) as usable KV per GPU":
        "Usar la memoria libre de la GPU medida por la sonda ({bytes}) como KV utilizable por GPU",
    "Planner ({model}, {kv_format}): KV bytes per token": "Planificador ({model}, {kv_format}): bytes de KV por token",
    "Plan now ({source}): KV bytes per token": "Plan actual ({source}): bytes de KV por token",
    "Sessions per GPU (plan now, usable KV {source})": "Sesiones por GPU (plan actual, KV utilizable {source})",
    "Measured figures travel in the share link (mkv, musable, with what they measured: mkv_model, mkv_fmt, mu_gpu, "
    "...) and in plan files; they are dropped, with a notice, when the model, format or GPU changes. The Plan page "
    "marks them as measured and offers to go back to the planner's arithmetic.":
        "Las cifras medidas viajan en el enlace para compartir (mkv, musable, con lo que midieron: mkv_model, "
        "mkv_fmt, mu_gpu, ...) y en los archivos de plan; se descartan, con un aviso, si cambian el modelo, el "
        "formato o la GPU. La página Plan las marca como medidas y ofrece volver a la aritmética del planificador.",
    "No GPU on this server: torch {version} sees no CUDA device. Upload a ProbeResult JSON measured on a GPU machine, "
    "or run the probe on this server's CPU (host memory), if you choose to.":
        "No hay GPU en este servidor: torch {version} no ve ningún dispositivo CUDA. Sube un ProbeResult JSON medido "
        "en una máquina con GPU o, si lo prefieres, ejecuta la sonda en la CPU de este servidor (memoria del host).",
    "Round-trip error on synthetic KV (normal values, one outlier channel in 64 at 10x). Throughput: GB/s of source "
    "bytes, best of N, next to a plain copy of the same bytes in the same run.":
        "Error de ida y vuelta sobre KV sintético (valores normales, un canal atípico de cada 64 a 10x). Rendimiento: "
        "GB/s de bytes de origen, el mejor de N, junto a una copia simple de los mismos bytes en la misma ejecución.",
    "At most {limit} bytes; every figure is checked.": "Como máximo {limit} bytes; se comprueba cada cifra.",
    "{file} not loaded: {why}": "{file} no se ha cargado: {why}",
    "{change} per replica": "{change} por réplica",
    "Tick the box above to run on the CPU.": "Marca la casilla de arriba para ejecutarla en la CPU.",
    "native (as the model ships)": "nativo (el del modelo)",
    "CPU (host memory)": "CPU (memoria del host)",
    "measured": "medido",
    "computed": "calculado",
})

# -- UI: Streamlit's uploader words (kvplan_app.uploads), uploaders and number formats (kept apart for merges) -------
STRINGS.update({
    "Upload": "Subir",
    "Drop the file here": "Suelta el archivo aquí",
    "{mb} MB per file": "{mb} MB por archivo",
    "Curve file (JSON from kvplan trace --sweep --save, at most {mb} MB)":
        "Archivo de curva (JSON de kvplan trace --sweep --save, como mucho {mb} MB)",
    "Trace file (JSONL, CSV or Parquet; plain, .gz or .zst; at most {mb} MB)":
        "Archivo de traza (JSONL, CSV o Parquet; sin comprimir, .gz o .zst; como mucho {mb} MB)",
    "TP: a replica's GPUs split each session's KV heads (tensor parallel). DP: each GPU holds whole sessions (data "
    "parallel).":
        "TP: las GPU de una réplica se reparten las cabezas KV de cada sesión (paralelismo tensorial). DP: cada GPU "
        "guarda sesiones enteras (paralelismo de datos).",
    "native: the model's own KV format.": "nativo: el formato KV propio del modelo.",
    "Every column": "Todas las columnas",
    "Layers of each group: {groups}.": "Capas de cada grupo: {groups}.",
    "Layout": "Disposición",
    "Per token": "Por token",
    "At {tokens} tokens": "Con {tokens} tokens",
    "Weight format, hit rate, replicas, sessions, request rate, throughput and the plan's checks; on a narrow screen "
    "the table then scrolls sideways.":
        "Formato de pesos, tasa de acierto, réplicas, sesiones, ritmo de peticiones, rendimiento y las comprobaciones "
        "del plan; en una pantalla estrecha la tabla se desplaza entonces en horizontal.",
    # -- the Model page's vLLM table headers -------------------------------------------------------------------------
    "Kind": "Tipo",
    "Cap (tokens)": "Tope (tokens)",
    "Padding": "Relleno",
    "Block (tokens)": "Bloque (tokens)",
    "Page (B)": "Página (B)",
    "Blocks/layer": "Bloques/capa",
    "Theory (B)": "Teoría (B)",
    "vLLM (B)": "vLLM (B)",
    "Why": "Motivo",
    # -- the Plan page chart's plan hover (kvplan_app.charts.figures.PLAN_FIGURE_TEXTS) ----------------------------------------
    "this plan: {tokens} tokens<br>{sessions} sessions per GPU<br>per session {gb} GB ({gib} GiB)":
        "este plan: {tokens} tokens<br>{sessions} sesiones por GPU<br>por sesión {gb} GB ({gib} GiB)",
    # -- the bundled traces' names (planner.traces.samples.SAMPLES labels) ------------------------------------------
    "Mooncake conversation (Kimi, 1 h, 12,031 requests)": "Mooncake conversación (Kimi, 1 h, 12.031 peticiones)",
    "Mooncake synthetic (ShareGPT + L-Eval + LooGLE, 3,993 requests)":
        "Mooncake sintética (ShareGPT + L-Eval + LooGLE, 3.993 peticiones)",
    "Azure conversation 2023 (19,366 requests, lengths only)":
        "Azure conversación 2023 (19.366 peticiones, solo longitudes)",
    "Azure code 2023 (8,819 requests, lengths only)": "Azure código 2023 (8.819 peticiones, solo longitudes)",
})

from kvplan_app.locales.es_pydantic import PATTERNS as _PATTERNS  # noqa: E402
from kvplan_app.locales.es_pydantic import WORDS  # noqa: E402  (pydantic's words, plan-file rules)
from kvplan_app.locales.es_rules import RULES  # noqa: E402  (planner's input rules, in their own module)

PATTERNS: dict[str, str] = {**MESSAGES, **_PATTERNS}
"""Plain English text (no template known) matched by its shape: the entries above and pydantic's own words."""
MESSAGES.update(RULES)
MESSAGES.update(WORDS)

from kvplan_app.locales.es_frames import FRAMES  # noqa: E402  (the page text around planner's messages)
from kvplan_app.locales.es_notes import NOTES  # noqa: E402  (planner's notes, warnings and refusals)
from kvplan_app.locales.es_reconcile import RECONCILE  # noqa: E402  (engine-log reconciliation)
from kvplan_app.locales.es_config import CONFIG_NOTES, HOW  # noqa: E402  (the config.json import report)

STRINGS.update(FRAMES)
MESSAGES.update(NOTES)
MESSAGES.update(RECONCILE)
MESSAGES.update(CONFIG_NOTES)
STRINGS.update(HOW)

from kvplan_app.locales.es_words import STRINGS as _WORD_HEADERS  # noqa: E402  (values kept in English in data)

STRINGS.update(_WORD_HEADERS)
