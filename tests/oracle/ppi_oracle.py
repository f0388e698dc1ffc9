"""Golden values of prediction-powered inference from ppi_py (the iid oracle of perdoc.methods.ppi).

    python tests/oracle/ppi_oracle.py [OUT]     (default: tests/oracle/golden_ppi.json)

Needs ``ppi-python`` (``pip install ppi-python``; tests/oracle/run.sh makes a virtual environment
for it). Seeded: for several data sets (gold labels and judge scores of n labelled items, judge
scores of N unlabelled items; 0/1 and continuous, good and useless judges), writes the data and
``ppi_mean_ci`` at two levels with the PPI++ weight (``lam=None``) and fixed weights 0, 0.5 and 1,
``ppi_mean_pointestimate``, and the weight ``_calc_lam_glm`` chooses, as ppi_mean_ci computes it.
"""

import json
import sys
from pathlib import Path

import numpy as np
import ppi_py
from ppi_py import ppi

OUT = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("golden_ppi.json")


def lam_of(Y, Yhat, Yu):
    """The PPI++ weight exactly as ppi_mean_ci computes it (lam=None)."""
    Y2, Yh2, Yu2 = (ppi.reshape_to_2d(x) for x in (Y, Yhat, Yu))
    pt = ppi.ppi_mean_pointestimate(Y2, Yh2, Yu2, lam=1)
    return float(ppi._calc_lam_glm(Y2 - pt, Yh2 - pt, Yu2 - pt, np.eye(1), coord=None, clip=True))


def case(name, rng, n, N, kind, quality):
    if kind == "binary":
        p = rng.uniform(0.2, 0.8)
        Y = (rng.uniform(size=n + N) < p).astype(float)
        noise = rng.uniform(size=n + N) < (1 - quality) / 2
        Yhat = np.where(noise, 1 - Y, Y)
        Yhat = np.where(rng.uniform(size=n + N) < 0.1, 1.0, Yhat)     # a judge biased towards 1
    else:
        Y = rng.beta(2, 3, n + N)
        Yhat = np.clip(quality * Y + (1 - quality) * rng.uniform(size=n + N) + 0.05, 0, 1)
    Yl, Yhl, Yhu = Y[:n], Yhat[:n], Yhat[n:]
    out = {"name": name, "kind": kind, "quality": quality, "Y": Yl.tolist(), "Yhat": Yhl.tolist(),
           "Yhat_unlabeled": Yhu.tolist(), "lam_ppi": lam_of(Yl, Yhl, Yhu), "results": []}
    for alpha in (0.1, 0.05):
        for lam in (None, 0.0, 0.5, 1.0):
            lo, hi = ppi.ppi_mean_ci(Yl, Yhl, Yhu, alpha=alpha, lam=lam)
            pt = ppi.ppi_mean_pointestimate(Yl, Yhl, Yhu, lam=lam)
            out["results"].append({"alpha": alpha, "lam": lam, "estimate": float(np.ravel(pt)[0]),
                                   "low": float(np.ravel(lo)[0]), "high": float(np.ravel(hi)[0])})
    return out


def main():
    rng = np.random.default_rng(20261202)
    cases = []
    for i, (n, N, kind, quality) in enumerate([(40, 400, "binary", 0.9), (60, 1000, "binary", 0.0),
                                               (25, 300, "continuous", 0.95), (80, 2000, "continuous", 0.5),
                                               (30, 30, "binary", 0.7), (100, 5000, "continuous", 0.0)]):
        cases.append(case(f"case{i}", rng, n, N, kind, quality))
    OUT.write_text(json.dumps({"ppi_py": getattr(ppi_py, "__version__", "0.2.3"), "numpy": np.__version__,
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
