"""Make the small synthetic example: 20 documents of a made-up regulatory corpus, one row per chunk.

SYNTHETIC data, seeded and deterministic: document sizes are skewed (a few long documents hold most
chunks) and each document has its own hit rate, as in retrieval evaluations of real corpora.
Run: python data/example/make_example.py  (writes data/example/chunks.csv)
"""

from pathlib import Path

import numpy as np

SEED = 20261011
K = 20


def main(out: Path = Path(__file__).with_name("chunks.csv")) -> None:
    rng = np.random.default_rng(SEED)
    sizes = np.maximum(1, np.round(rng.lognormal(mean=3.0, sigma=1.0, size=K))).astype(int)
    rates = rng.beta(0.6, 2.6, size=K)
    lines = ["doc_id,chunk_id,hit"]
    for d in range(K):
        hits = rng.random(sizes[d]) < rates[d]
        for c in range(sizes[d]):
            lines.append(f"doc{d + 1:03d},{c + 1},{int(hits[c])}")
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
