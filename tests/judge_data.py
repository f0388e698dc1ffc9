"""Judged data shared by the judge tests: a judge that errs in long documents only."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_size_biased(folder: Path) -> tuple[Path, Path]:
    """150 documents (a third short, the others of 1, 2, 3, 40 or 80 chunks), gold 0/1 at rate 0.3 and a
    judge that says 'relevant' wrongly in half the chunks of documents of 40 chunks or more; the first 30
    documents labelled. Writes ``l.csv`` (doc_id, chunk, gold, judge: the labelled rows) and ``j.csv``
    (doc_id, chunk, judge: every chunk) in ``folder``; returns their paths."""
    rng = np.random.default_rng(2)
    pop, lab = [], []
    for d in range(150):
        n = int(rng.choice([1, 2, 3, 40, 80])) if d % 3 else int(rng.integers(1, 4))
        for c in range(n):
            y = int(rng.random() < 0.3)
            f = 1 if (n >= 40 and rng.random() < 0.5) else y
            pop.append(f"d{d:03d},{c},{f}")
            if d < 30:
                lab.append(f"d{d:03d},{c},{y},{f}")
    labels, judge = folder / "l.csv", folder / "j.csv"
    labels.write_text("doc_id,chunk,gold,judge\n" + "\n".join(lab) + "\n")
    judge.write_text("doc_id,chunk,judge\n" + "\n".join(pop) + "\n")
    return labels, judge
