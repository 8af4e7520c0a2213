"""Spanish for pydantic's own validation words and for plan-file rules (merged into ``es.MESSAGES``), and the
shapes of pydantic's sentences with numbers in them (``PATTERNS``, matched against plain text)."""

WORDS: dict[str, str] = {
    # -- pydantic's own words (a validator's range or sentence comes first; these are the rest) ----------------------
    "{head} or {last}": "{head} o {last}",
    "{first} or {second}": "{first} o {second}",
    "a valid boolean, unable to interpret input": "un booleano válido; la entrada no se puede interpretar",
    "a valid boolean": "un booleano válido",
    "a valid integer": "un entero válido",
    "a valid integer, unable to parse string as an integer": "un entero válido; el texto no es un entero",
    "a valid integer, got a number with a fractional part": "un entero válido; el número tiene parte decimal",
    "a valid number": "un número válido",
    "a valid number, unable to parse string as a number": "un número válido; el texto no es un número",
    "a finite number": "un número finito",
    "a valid string": "una cadena válida",
    "a valid dictionary": "un diccionario válido",
    "a valid list": "una lista válida",
    "a valid tuple": "una tupla válida",
    "a valid dictionary or instance of PlanInputs": "un diccionario válido o una instancia de PlanInputs",
    "a valid dictionary or instance of ProbeGroup": "un diccionario válido o una instancia de ProbeGroup",
    "an object": "un objeto",
    "a valid datetime": "una fecha y hora válida",
    "day value is outside expected range": "el día está fuera del rango esperado",
    "month value is outside expected range": "el mes está fuera del rango esperado",
    "hour value is outside expected range": "la hora está fuera del rango esperado",
    "minute value is outside expected range": "el minuto está fuera del rango esperado",
    "second value is outside expected range": "el segundo está fuera del rango esperado",
    "input is too short": "la entrada es demasiado corta",
    "invalid character in year": "carácter no válido en el año",
    "invalid character in month": "carácter no válido en el mes",
    "invalid character in day": "carácter no válido en el día",
    "unexpected extra characters at the end of the input": "caracteres de más al final de la entrada",
    "invalid date separator, expected `-`": "separador de fecha no válido, se espera `-`",
    "timezone offset must be less than 24 hours": "el desfase horario debe ser menor de 24 horas",
    "a valid datetime, invalid character in year": "una fecha y hora válida; carácter no válido en el año",
    # -- plan files --------------------------------------------------------------------------------------------------
    "at most {max_plan_file_bytes:,} bytes": "{max_plan_file_bytes:,} bytes como máximo",
    "each key once (JSON parsers disagree on which copy wins)":
        "cada clave una sola vez (los lectores de JSON no coinciden en qué copia vale)",
    "a finite number (NaN and Infinity are not JSON)": "un número finito (NaN e Infinity no son JSON)",
    "a JSON {words} (this is a JSON {kind})": "un valor JSON de tipo {words} (este es de tipo {kind})",
    "array": "array",
    "boolean": "booleano",
    "integer": "entero",
    "null": "null",
    "number": "número",
    "object": "objeto",
    "string": "cadena",
    "a JSON object with schema_version, inputs, kvplan_version":
        "un objeto JSON con schema_version, inputs, kvplan_version",
    "{schema_version} (the field is missing)": "{schema_version} (falta el campo)",
    "{schema_version}: this kvplan ({kvplan_version}) reads plan files of schema version {schema_version} only":
        "{schema_version}: este kvplan ({kvplan_version}) solo lee archivos de plan con versión de esquema "
        "{schema_version}",
    "every input field (missing: {choices}); use null for an unset field":
        "todos los campos de entrada (faltan: {choices}); use null para un campo sin valor",
}
"""pydantic's words and plan-file rules, English -> Spanish."""

PATTERNS: dict[str, str] = {
    "greater than {n}": "mayor que {n}",
    "greater than or equal to {n}": "mayor o igual que {n}",
    "less than {n}": "menor que {n}",
    "less than or equal to {n}": "menor o igual que {n}",
    "a finite number, got {value}": "un número finito (se recibió {value})",
    "Tuple should have at most {n} items after validation, not {m}":
        "una tupla de {n} elementos como máximo tras la validación (tiene {m})",
    "Tuple should have at least {n} item after validation, not {m}":
        "una tupla de al menos {n} elemento tras la validación (tiene {m})",
    "Tuple should have at least {n} items after validation, not {m}":
        "una tupla de al menos {n} elementos tras la validación (tiene {m})",
    "List should have at most {n} items after validation, not {m}":
        "una lista de {n} elementos como máximo tras la validación (tiene {m})",
    "String should have at most {n} characters": "un texto de {n} caracteres como máximo",
    "String should have at least {n} characters": "un texto de al menos {n} caracteres",
}
"""pydantic's own sentences with numbers in them, matched by shape (``kvplan_app.i18n`` fills the ``{fields}``)."""
