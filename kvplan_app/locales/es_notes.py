"""Spanish for planner's notes, warnings and refusals shown on pages, and the page sentences that frame them.

``NOTES``: English template (``planner.messages.msg``) -> Spanish, same ``{fields}`` (merged into ``es.MESSAGES``).
``FRAMES``: page strings wrapped in ``t()`` around planner messages (merged into ``es.STRINGS``).
"""

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
    "Showing the last valid inputs.": "Se muestran las últimas entradas válidas.",
    "Using vLLM's defaults.": "Se usan los valores por defecto de vLLM.",
}

NOTES: dict[str, str] = {
}
