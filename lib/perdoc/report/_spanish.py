"""Spanish names of perdoc's interval methods, in one place for every part of a Spanish report
(the every-method table, the headline, the summary box, the checklist, the charts' long labels).

The JSON keeps the English labels; :func:`label_es` gives the Spanish one for an English label,
or None when the label is not known (callers then show the English one with Spanish numbers).
"""

from __future__ import annotations

import re

__all__ = ["label_es"]

# Spanish names of the interval methods, keyed by the English label the library gives them.
_LABELS_ES = {
    "CR1, t with K-1 df": "CR1, t con K-1 grados de libertad",
    "CR2, Bell-McCaffrey df": "CR2, grados de libertad de Bell-McCaffrey",
    "CR2, Imbens-Kolesar df": "CR2, grados de libertad de Imbens-Kolesár",
    "CR3 (jackknife), t with K-1 df": "CR3 (jackknife), t con K-1 grados de libertad",
    "t on document rates, K-1 df": "t sobre las tasas por documento, K-1 grados de libertad",
    "bootstrap-t by document (replicate CR1)": "bootstrap-t por documento (CR1 de cada réplica)",
    "bootstrap-t by document (replicate sd/sqrt(K))": "bootstrap-t por documento (sd/sqrt(K) de cada réplica)",
    "percentile bootstrap by document": "bootstrap percentil por documento",
    "Korn-Graubard (beta), in [0, 1]": "Korn-Graubard (beta), en [0; 1]",
    "logit, in [0, 1]": "logit, en [0; 1]",
    "Wilson with effective n, in [0, 1]": "Wilson con n efectivo, en [0; 1]",
    "jackknife bias-corrected ratio, jackknife se, t with K-1 df":
        "razón corregida por sesgo con jackknife, error estándar jackknife, t con K-1 grados de libertad",
    "logit scale, CR2 se, Bell-McCaffrey df, in [0, 1]":
        "escala logit, error estándar CR2, grados de libertad de Bell-McCaffrey, en [0; 1]",
    "atanh scale, CR2 se, Bell-McCaffrey df, in [-1, 1]":
        "escala atanh, error estándar CR2, grados de libertad de Bell-McCaffrey, en [-1; 1]",
    "bootstrap-t on the logit scale by document (replicate CR1), in [0, 1]":
        "bootstrap-t por documento en escala logit (CR1 de cada réplica), en [0; 1]",
    "bootstrap-calibrated (prepivoted) logit CR2, Bell-McCaffrey df, in [0, 1]":
        "CR2 en escala logit calibrado por bootstrap (prepivotado), grados de libertad de Bell-McCaffrey, en [0; 1]",
    "bootstrap-calibrated (prepivoted) CR2, Bell-McCaffrey df":
        "CR2 calibrado por bootstrap (prepivotado), grados de libertad de Bell-McCaffrey",
    "bootstrap-calibrated (prepivoted) t on the logit of the macro mean, in [0, 1]":
        "t sobre el logit de la media macro calibrado por bootstrap (prepivotado), en [0; 1]",
    "bootstrap-calibrated (prepivoted) t on document rates, K-1 df":
        "t sobre las tasas por documento calibrado por bootstrap (prepivotado), K-1 grados de libertad",
    "Wald iid (chunks as cases)": "Wald iid (cada fragmento como un caso)",
    "Wald, effective n = N/DEFF": "Wald con n efectivo = N/DEFF",
    "two-stage ratio to size, t with K-1 df": "razón al tamaño en dos etapas, t con K-1 grados de libertad",
    "delta method, CR1, t with K-1 df": "método delta, CR1, t con K-1 grados de libertad",
    "frame: prediction, ratio model, HC2 se, Bell-McCaffrey df":
        "marco muestral: predicción con el modelo de razón, error estándar HC2, grados de libertad de "
        "Bell-McCaffrey",
    "frame: prediction, rate linear in log size, HC2 se, Bell-McCaffrey df":
        "marco muestral: predicción con la tasa lineal en el logaritmo del tamaño, error estándar HC2, grados de "
        "libertad de Bell-McCaffrey",
    "frame: prediction, ratio model, HC2 se, Bell-McCaffrey df, logit scale, in [0, 1]":
        "marco muestral: predicción con el modelo de razón, error estándar HC2, grados de libertad de "
        "Bell-McCaffrey, escala logit, en [0; 1]",
    "frame: prediction, rate linear in log size, HC2 se, Bell-McCaffrey df, logit scale, in [0, 1]":
        "marco muestral: predicción con la tasa lineal en el logaritmo del tamaño, error estándar HC2, grados de "
        "libertad de Bell-McCaffrey, escala logit, en [0; 1]",
    "frame: prediction, rate linear in the size's rank in the frame, HC2 se, Bell-McCaffrey df":
        "marco muestral: predicción con la tasa lineal en el rango del tamaño dentro del marco, error estándar "
        "HC2, grados de libertad de Bell-McCaffrey",
    "frame: prediction, rate linear in the size's rank in the frame, HC2 se, Bell-McCaffrey df, logit scale, "
    "in [0, 1]":
        "marco muestral: predicción con la tasa lineal en el rango del tamaño dentro del marco, error estándar "
        "HC2, grados de libertad de Bell-McCaffrey, escala logit, en [0; 1]",
    "frame: GREG (calibrated to the frame's documents and chunks), design-based se, K-2 df":
        "marco muestral: GREG (calibrado a los documentos y fragmentos del marco), error estándar según el "
        "diseño, K-2 grados de libertad",
    "frame: GREG (calibrated to the frame's documents and chunks), design-based se, K-2 df, logit scale, in [0, 1]":
        "marco muestral: GREG (calibrado a los documentos y fragmentos del marco), error estándar según el "
        "diseño, K-2 grados de libertad, escala logit, en [0; 1]",
    "design-based (Hajek ratio)": "según el diseño (razón de Hájek)",
    "design-based (weighted document rates)": "según el diseño (tasas por documento ponderadas)",
    "design-based, on the logit scale": "según el diseño, en escala logit",
    "t on per-document differences (documents scored by both)":
        "t sobre las diferencias por documento (documentos evaluados con ambos sistemas)",
}
_LABEL_PATTERNS_ES = (
    (re.compile(r"wild cluster bootstrap \((\w+)\)"), r"bootstrap salvaje por conglomerados (\1)"),
    (re.compile(r"combined ratio, stratified \((\d+) strata\), t with K-H df"),
     r"razón combinada estratificada (\1 estratos), t con K-H grados de libertad"),
    (re.compile(r"stratified mean of document rates \((\d+) strata\), t with K-H df"),
     r"media estratificada de las tasas por documento (\1 estratos), t con K-H grados de libertad"),
)



def label_es(label: str) -> str | None:
    """The Spanish name of the interval method labelled ``label`` in English, or None."""
    if label in _LABELS_ES:
        return _LABELS_ES[label]
    for pattern, repl in _LABEL_PATTERNS_ES:
        if pattern.fullmatch(label):
            return pattern.sub(repl, label)
    return None
