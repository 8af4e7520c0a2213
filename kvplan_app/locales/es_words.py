"""Spanish for the words kvplan writes into its data: KV group names, table values, routing policies.

These are values (a group's ``name``, a ``growth`` column, a routing policy), kept in English in data, CSV and
links; the pages translate them at display time with :func:`kvplan_app.i18n.words`. Numbers are kept (and
written in the locale's format by the caller).
"""

GROUP_WORDS: tuple[tuple[str, str], ...] = (
    # regular expression over the English name -> Spanish replacement (applied in order, all of them)
    (r"\bcompressed (1/\d+) main\b", r"principal comprimida \1"),
    (r"\bcompressed (1/\d+) indexer keys\b", r"indexador comprimido \1"),  # short: the Layout table fits 1280 px
    (r"\bDSA indexer keys\b", "claves del indexador DSA"),
    (r"\bMLA latent\b", "latente MLA"),
    (r"\b(Mamba\d?) SSM state\b", r"estado SSM de \1"),
    (r"\b(Mamba\d?) conv state\b", r"estado conv de \1"),
    (r"\blinear attention conv state\b", "estado conv de la atención lineal"),
    (r"\blinear attention recurrent state\b", "estado recurrente de la atención lineal"),
    (r"\bfixed session state\b", "estado fijo por sesión"),
    (r"\breported state per sequence\b", "estado publicado por secuencia"),
    (r"\bfull attention\b", "atención completa"),
    (r"\bsliding window\b", "ventana deslizante"),
    (r"\bwindow ring\b", "anillo de ventana"),
    (r"\bchunked local\b", "local por bloques"),
    (r"\b1 KV heads?\b", "1 cabeza KV"),
    (r"\b(\d+) KV heads\b", r"\1 cabezas KV"),
)
"""The vocabulary of KV group names (``planner.hf.config``, ``config_state``, ``config_deepseek``, ``models``)."""

VALUES: dict[str, str] = {
    # breakdown table (planner.kv.models.breakdown_frame)
    "capped": "limitado", "growing": "creciente",
    # config.json import report (planner.hf.report): derived fields and values
    "merged": "fusionado", "kv sharing": "KV compartido", "indexer layers": "capas con indexador",
    "indexer keys": "claves del indexador", "sliding layers": "capas deslizantes",
    "layers without KV": "capas sin KV", "state dtype": "dtype del estado", "Mamba2 state": "estado de Mamba2",
    "Mamba1 state": "estado de Mamba1",
    # routing policies (planner.traces)
    "random": "aleatorio", "session": "por sesión", "prefix": "por prefijo", "round-robin": "round-robin",
    # frontier's limits (planner.frontier rate_limit)
    "decode throughput": "rendimiento de decodificación", "sessions": "sesiones", "none": "ninguno",
    # fleet methods (planner.traces.fleet)
    "stack distances": "distancias de pila", "simulation": "simulación",
    # KV format value
    "native": "nativo",
}
"""Whole values -> Spanish."""

VALUE_SHAPES: tuple[tuple[str, str], ...] = (
    (r"^(\d[\d,]*) entries$", r"\1 entradas"),
    (r"^(\d[\d,]*) layers$", r"\1 capas"),
    (r"^(\d[\d,]*) source layers serve (\d[\d,]*) others$", r"\1 capas fuente sirven a otras \2"),
)
"""Values with a number in them (the import report's ``value`` column)."""

STRINGS: dict[str, str] = {"field": "campo", "value": "valor", "how": "cómo", "note": "nota"}
"""The import report's column headers."""
