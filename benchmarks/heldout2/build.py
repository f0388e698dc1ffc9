"""Build the second set of held-out censuses in benchmarks/heldout2/ (see README.md there).

    .venv/bin/python benchmarks/heldout2/build.py              # every census
    .venv/bin/python benchmarks/heldout2/build.py perlmods     # only the ones named

Built the same way as benchmarks/heldout/ and with its code: this script imports
benchmarks/heldout/build.py (by path) and reuses its chunking, BM25 ranking, id cleaning, CSV
writing and statistics. What is new here is the text sources (Perl POD, Debian changelogs, reST
files, GNU info nodes; none used in the first set) and two synthetic generators (log-logistic
sizes with a non-monotone size effect; a size mixture with cluster-shifted discrete ranks).

Each census is a gzip CSV with one row per chunk (`doc`, `hit5`, `rr`) and an entry in
censuses.json. Deterministic: seeded RNGs (streams keyed "heldout2/NAME" under the first set's
seed), sorted inputs, gzip mtime 0. The real censuses depend on what is installed on the machine;
censuses.json records a sha256 of the extracted text of each.

These censuses were built after perdoc's pilot-planning rule was fixed, to judge it. Do not tune
anything on them.
"""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
_OLD_PATH = HERE.parent / "heldout" / "build.py"
_spec = importlib.util.spec_from_file_location("heldout_build", _OLD_PATH)
old = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(old)

STREAM = "heldout2/"           # rng streams: old.rng_for("heldout2/NAME"), seed old.SEED
MAX_RANK = old.MAX_RANK
EASY, MEDIUM, HARD = old.EASY, old.MEDIUM, old.HARD


def rng_for(name: str) -> np.random.Generator:
    return old.rng_for(STREAM + name)


@contextlib.contextmanager
def _min_last(value: int):
    """old.chunk_docs reads the module constant MIN_LAST (a trailing window shorter than it joins
    the previous one); set it for one call and restore it."""
    saved = old.MIN_LAST
    old.MIN_LAST = value
    try:
        yield
    finally:
        old.MIN_LAST = saved


def chunk_docs(docs, size, min_last):
    """old.chunk_docs with the trailing-window threshold as a parameter (the first set always used
    50 words, with windows of 100 or 150; the shorter windows here use half a window)."""
    with _min_last(min_last):
        return old.chunk_docs(docs, size)


def text_fingerprint(docs) -> str:
    h = hashlib.sha256()
    for dname, text in docs:
        h.update(dname.encode() + b"\0" + text.encode("utf-8", "replace") + b"\0")
    return h.hexdigest()


def walk_files(roots, keep) -> list[Path]:
    """Regular files (not symlinks) under roots whose name passes keep(); symlinked folders are not
    followed and a file reached twice (by real path) is listed once. Sorted."""
    seen, out = set(), []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            for fn in sorted(filenames):
                f = Path(dirpath) / fn
                if not keep(fn) or f.is_symlink() or not f.is_file():
                    continue
                rp = os.path.realpath(f)
                if rp not in seen:
                    seen.add(rp)
                    out.append(f)
    return sorted(out)


# --------------------------------------------------------------------------------------------
# text sources
# --------------------------------------------------------------------------------------------

PERL_ROOTS = ["/usr/share/perl"] + sorted(str(p) for p in Path("/usr/lib/x86_64-linux-gnu")
                                          .glob("perl*") if p.is_dir() and not p.is_symlink())
_POD_CMD = re.compile(r"=([a-zA-Z]\w*)[ \t]*(.*)")
_POD_E = {"lt": "\x01", "gt": "\x02", "verbar": "|", "sol": "/", "quot": '"', "amp": "&",
          "nbsp": " "}


def _pod_code(m):
    code, body = m.group(1), m.group(2)
    if code in "XZ":                              # index entries, null
        return ""
    if code == "E":
        b = body.strip()
        if b in _POD_E:
            return _POD_E[b]
        try:
            return chr(int(b, 16) if b.lower().startswith("0x") else int(b))
        except (ValueError, OverflowError):
            return " "
    if code == "L":                                # L<text|target>, L<name/"section">
        body = body.split("|", 1)[0] if "|" in body else body.replace("/", " ")
        return body.replace('"', "")
    return body                                    # B I C F S and unknown codes: their text


def pod_markup(text: str) -> str:
    """POD formatting codes reduced to their text: B<..> I<..> C<..> F<..> S<..> -> the text,
    L<text|target> -> text (L<target> -> target), E<gt> etc. -> the character, X<..> Z<> dropped;
    the multi-bracket forms C<< .. >> too."""
    for n in (4, 3, 2):
        text = re.sub(rf"([A-Z])<{{{n}}}\s+(.*?)\s+>{{{n}}}", _pod_code, text, flags=re.S)
    inner = re.compile(r"([A-Z])<([^<>]*)>")
    while True:
        new = inner.sub(_pod_code, text)
        if new == text:
            break
        text = new
    return text.replace("\x01", "<").replace("\x02", ">")


def pod_text(src: str) -> str:
    """The POD of a Perl file: lines from a POD command (=head1, =pod, =item, ...) to =cut, with the
    command words dropped (heading and item text kept), =begin/=end blocks, =for, =encoding,
    =over/=back left out, and the markup reduced by pod_markup."""
    out, inpod, skip = [], False, False
    for line in src.splitlines():
        m = _POD_CMD.match(line)
        if m:
            cmd, rest = m.groups()
            if cmd == "cut":
                inpod = skip = False
                continue
            inpod = True
            if cmd == "begin":
                skip = True
                continue
            if cmd == "end":
                skip = False
                continue
            if cmd in ("pod", "for", "encoding", "over", "back"):
                continue
            line = rest
        if inpod and not skip:
            out.append(line)
    return pod_markup("\n".join(out))


def perl_pod() -> list[tuple[str, str]]:
    """(id, POD text) of every *.pm and *.pod under the Perl library folders; id = the path under
    /usr/. Files with no POD give empty text and are dropped by the 30-word rule."""
    files = walk_files(PERL_ROOTS, lambda fn: fn.endswith((".pm", ".pod")))
    docs = []
    for f in files:
        src = f.read_bytes().decode("utf-8", errors="replace")
        docs.append((str(f.relative_to("/usr")), pod_text(src)))
    return sorted(docs)


def changelogs() -> list[tuple[str, str]]:
    """(package, text) of /usr/share/doc/PKG/changelog.Debian.gz, or changelog.gz where there is no
    Debian changelog; symlinked package folders (aliases of another package's) left out."""
    docs = []
    for d in sorted(Path("/usr/share/doc").iterdir()):
        if d.is_symlink() or not d.is_dir():
            continue
        for fn in ("changelog.Debian.gz", "changelog.gz"):
            f = d / fn
            if f.is_file() and not f.is_symlink():
                docs.append((d.name, gzip.decompress(f.read_bytes())
                             .decode("utf-8", errors="replace")))
                break
    return docs


RST_PRUNE = ("/proc", "/sys", "/work", "/tmp")
_RST_ABBREV = [(re.compile(r"^root/\.pyenv/versions/([^/]+)/lib/python[^/]+/site-packages/"),
                r"pyenv-\1:"),
               (re.compile(r"^root/\.pyenv/versions/([^/]+)/lib/python[^/]+/"), r"pyenv-\1-stdlib:"),
               (re.compile(r"^usr/lib/google-cloud-sdk/"), "gcloud-sdk:")]


def rst_id(path: str) -> str:
    """A shorter id for a reST file: the path without the leading / and with the pyenv and
    Google Cloud SDK prefixes abbreviated (keeps the CSV small)."""
    s = path.lstrip("/")
    for pat, rep in _RST_ABBREV:
        s = pat.sub(rep, s)
    return s


def rst_docs(rng, target_docs) -> list[tuple[str, str]]:
    """A seeded sample of the *.rst files on the machine (outside /proc, /sys, /work, /tmp; found
    with `find -type f`, so symlinks are left out, and identical real paths once): files in a
    seeded random order until target_docs of them have at least 30 words. One file = one
    document, its raw reST text."""
    prune = " -o ".join(f"-path {p}" for p in RST_PRUNE)
    r = subprocess.run(f"find / \\( {prune} \\) -prune -o -name '*.rst' -type f -print0",
                       shell=True, capture_output=True)
    paths = sorted(set(p.decode("utf-8", "surrogateescape") for p in r.stdout.split(b"\0") if p))
    docs = []
    for j in rng.permutation(len(paths)):
        try:
            text = Path(paths[j]).read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        if len(text.split()) >= old.MIN_DOC_WORDS:
            docs.append((rst_id(paths[j]), text))
            if len(docs) >= target_docs:
                break
    return sorted(docs)


_INFO_NODE = re.compile(r"Node:\s*([^,\t\n]+)")


def info_nodes() -> list[tuple[str, str]]:
    """Nodes of the GNU info manuals in /usr/share/info: MANUAL.info.gz with its parts
    MANUAL.info-1.gz, -2, ... joined in order, split at the 0x1f separators; a part whose header
    line starts with `File:` is a node (the indirect and tag tables are not). id = MANUAL/NODE;
    text = the node without its header (navigation) line."""
    manuals: dict[str, list[tuple[int, Path]]] = {}
    for f in sorted(Path("/usr/share/info").iterdir()):
        m = re.fullmatch(r"(.+)\.info(?:-(\d+))?\.gz", f.name)
        if m and f.is_file() and not f.is_symlink():
            manuals.setdefault(m.group(1), []).append((int(m.group(2) or 0), f))
    docs = []
    for man in sorted(manuals):
        text = "".join(gzip.decompress(f.read_bytes()).decode("utf-8", errors="replace")
                       for _, f in sorted(manuals[man]))
        for part in text.split("\x1f"):
            part = part.lstrip("\n")
            if not part.startswith("File:"):
                continue
            head, _, body = part.partition("\n")
            m = _INFO_NODE.search(head)
            if m:
                docs.append((f"{man}/{m.group(1).strip()}", body))
    return docs


# --------------------------------------------------------------------------------------------
# synthetic censuses
# --------------------------------------------------------------------------------------------

def _hit_ranks(rng, hit):
    """A rank for every chunk given its hit5: a hit ranks 1-5 (probabilities 0.55, 0.2, 0.12,
    0.08, 0.05), a miss ranks 6 + floor(exp(U * log 400)) (log-uniform, often beyond 100)."""
    r_hit = 1 + rng.choice(5, size=hit.size, p=[0.55, 0.2, 0.12, 0.08, 0.05])
    r_miss = 6 + np.floor(np.exp(rng.random(hit.size) * np.log(400.0)))
    return np.where(hit == 1, r_hit, r_miss).astype(float)


def synth_loglogistic(rng):
    """Log-logistic sizes (scale 1.8, shape 1.15: a heavy tail, a handful of documents over 1,000
    chunks; capped at 3,000). 30% of documents are perfect (never miss). The others miss with a
    document probability q_d ~ Beta(a, b) of mean m(n) = 0.03 + 0.3 exp(-(log n - log 25)^2 / 2)
    (a bump: the mid-size documents, around 25 chunks, do worst; a = 2 m / (1 - m), b = 2).
    hit5 ~ Bernoulli(1 - q_d) per chunk; rank given hit5 from _hit_ranks."""
    M = 4000
    u = rng.random(M)
    n = np.minimum(np.ceil(1.8 * (u / (1 - u)) ** (1 / 1.15)), 3000).astype(np.int64)
    m = 0.03 + 0.3 * np.exp(-(np.log(n) - np.log(25.0)) ** 2 / 2)
    q = rng.beta(2 * m / (1 - m), 2.0)
    q[rng.random(M) < 0.3] = 0.0
    d = np.repeat(np.arange(M), n)
    hit = (rng.random(d.size) >= q[d]).astype(np.int64)
    rank = _hit_ranks(rng, hit)
    ids = [f"ll{i:05d}" for i in range(M)]
    return ids, d, {"hit5": hit, "rr": np.where(rank <= MAX_RANK, 1.0 / rank, 0.0)}


def synth_mixture(rng):
    """Sizes from a mixture: with probability 0.7 a small document of 1-5 chunks (uniform), else
    6 + floor(5.5 W), W ~ Weibull(shape 0.45) (a stretched-exponential long tail). Four document
    clusters with rank - 1 ~ NegBin(r 0.7, mean c_k e^(u_d)), c = 0.3, 2, 8, 40, u_d ~ N(0, 0.5^2);
    the small documents fall in the clusters with probabilities 0.4/0.3/0.2/0.1, the long ones
    0.1/0.3/0.3/0.3. hit5 = rank <= 5, rr = 1/rank (0 beyond 100)."""
    M = 3000
    small = rng.random(M) < 0.7
    n = np.where(small, rng.integers(1, 6, M),
                 6 + np.floor(5.5 * rng.weibull(0.45, M))).astype(np.int64)
    p_small, p_long = [0.4, 0.3, 0.2, 0.1], [0.1, 0.3, 0.3, 0.3]
    cluster = np.where(small, rng.choice(4, M, p=p_small), rng.choice(4, M, p=p_long))
    mean = np.array([0.3, 2.0, 8.0, 40.0])[cluster] * np.exp(0.5 * rng.standard_normal(M))
    d = np.repeat(np.arange(M), n)
    r = 0.7
    rank = 1.0 + rng.negative_binomial(r, r / (r + mean[d]))
    ids = [f"mx{i:05d}" for i in range(M)]
    return ids, d, {"hit5": (rank <= 5).astype(np.int64),
                    "rr": np.where(rank <= MAX_RANK, 1.0 / rank, 0.0)}


# --------------------------------------------------------------------------------------------
# census definitions
# --------------------------------------------------------------------------------------------

CENSUSES = {
    "perlmods": {
        "kind": "retrieval",
        "source": "POD text of the Perl modules and .pod files under /usr/share/perl and "
                  "/usr/lib/x86_64-linux-gnu/perl* (Debian 12 perl 5.36), markup reduced to "
                  "text; one file = one document",
        "docs": lambda rng: perl_pod(),
        "chunk_words": 50, "min_last": 25,
        "query": EASY,
    },
    "changelogs": {
        "kind": "retrieval",
        "source": "Debian changelogs /usr/share/doc/PKG/changelog.Debian.gz (changelog.gz where "
                  "there is none) of the installed packages; one package = one document "
                  "(binary packages of one source often share an identical changelog)",
        "docs": lambda rng: changelogs(),
        "chunk_words": 150, "min_last": 50,
        "query": EASY,
    },
    "rstdocs": {
        "kind": "retrieval",
        "source": "*.rst files on this machine outside /proc, /sys, /work, /tmp (mostly awscli "
                  "examples in a pyenv site-packages): a seeded sample of 5,000 files with at "
                  "least 30 words; raw reST text; one file = one document",
        "docs": lambda rng: rst_docs(rng, 5000),
        "chunk_words": 40, "min_last": 20,
        "query": MEDIUM,
    },
    "infonodes": {
        "kind": "retrieval",
        "source": "GNU info manuals in /usr/share/info (MANUAL.info.gz with its -1, -2 parts "
                  "joined), split into nodes at the 0x1f separators; one node = one document",
        "docs": lambda rng: info_nodes(),
        "chunk_words": 35, "min_last": 17,
        "query": HARD,
    },
    "synth_loglogistic": {
        "kind": "synthetic",
        "source": "synthetic: sizes min(ceil(1.8 (U/(1-U))^(1/1.15)), 3,000) (log-logistic); 30% of "
                  "documents never miss, the others miss w.p. q_d ~ Beta(2m/(1-m), 2), "
                  "m = 0.03 + 0.3 exp(-(log n_d - log 25)^2/2) (mid-size worst); rank 1-5 on a "
                  "hit (0.55/0.2/0.12/0.08/0.05), 6 + floor(400^U) on a miss; rr = 1/rank "
                  "(0 beyond 100)",
        "make": synth_loglogistic,
    },
    "synth_mixture": {
        "kind": "synthetic",
        "source": "synthetic: sizes U{1..5} w.p. 0.7 else 6 + floor(5.5 Weibull(0.45)); rank - 1 ~ "
                  "NegBin(r 0.7, mean c_k e^u_d), cluster means c = 0.3/2/8/40, u_d ~ N(0, 0.5^2), "
                  "cluster probabilities 0.4/0.3/0.2/0.1 (small docs) or 0.1/0.3/0.3/0.3 (long); "
                  "hit5 = rank <= 5, rr = 1/rank (0 beyond 100)",
        "make": synth_mixture,
    },
}


def build(name, spec):
    """old.build's steps, with this folder as the output, the chunking parameters per census and
    this set's rng streams (old.build writes to benchmarks/heldout/ and uses fixed chunking)."""
    rng = rng_for(name)
    t0 = time.perf_counter()
    extra = {}
    if spec["kind"] == "retrieval":
        docs = spec["docs"](rng)
        fingerprint = text_fingerprint(docs)
        size, min_last = spec["chunk_words"], spec["min_last"]
        ids, chunk_doc, chunks = chunk_docs(docs, size, min_last)
        kept = set(ids)
        texts = {}
        for dname, text in docs:
            if dname in kept:
                texts.setdefault(" ".join(text.split()), []).append(dname)
        identical = sum(len(v) - 1 for v in texts.values())
        fixed = old.distinct_ids(ids)
        renamed = sum(a != b for a, b in zip(ids, fixed))
        ids = fixed
        t1 = time.perf_counter()
        ranks = old.rank_sources(chunks, spec["query"], rng)
        scores = {"hit5": (ranks <= 5).astype(np.int64),
                  "rr": np.where(ranks <= MAX_RANK, 1.0 / ranks, 0.0)}
        extra = {
            "chunking": f"consecutive windows of {size} whitespace words (a last window "
                        f"under {min_last} words joins the previous one); documents under "
                        f"{old.MIN_DOC_WORDS} words left out",
            "query": {"span_words": list(spec["query"]["span"]), "drop": spec["query"]["drop"],
                      "swap": spec["query"]["swap"]},
            "retrieval": f"BM25 (k1 {old.K1}, b {old.B}, idf log(1 + (N - df + 0.5)/(df + 0.5))) "
                         "over all chunks; lower-cased [a-z0-9]+ tokens, stop words and "
                         "1-character tokens removed; ties broken by a seeded permutation",
            "text_sha256": fingerprint,
            "documents_read": len(docs),
            "identical_documents": identical,
            "queries_without_source_term": int(np.isinf(ranks).sum()),
            "ids_suffixed": renamed,
        }
        timing = f"text {t1 - t0:.1f} s, BM25 {time.perf_counter() - t1:.1f} s"
    else:
        ids, chunk_doc, scores = spec["make"](rng)
        timing = f"{time.perf_counter() - t0:.1f} s"
    path = HERE / f"{name}.csv.gz"
    old.write_csv_gz(path, ids, chunk_doc, scores)
    entry = old.describe(name, spec, ids, chunk_doc, scores, extra)
    entry["file_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    entry["file_bytes"] = path.stat().st_size
    means = ", ".join(f"{c} {v['micro_mean']:.4f} (macro {v['macro_mean']:.4f})"
                      for c, v in entry["scores"].items())
    print(f"{name}: {entry['documents']} docs, {entry['chunks']} chunks, median "
          f"{entry['size_median']:g} max {entry['size_max']}, cv {entry['size_cv']}, top1% "
          f"{entry['top1pct_share']}, {means}; {path.stat().st_size / 1e6:.3f} MB; {timing}, "
          f"total {time.perf_counter() - t0:.1f} s", flush=True)
    return entry


def main(argv):
    names = argv or list(CENSUSES)
    unknown = [n for n in names if n not in CENSUSES]
    if unknown:
        sys.exit(f"unknown census: {', '.join(unknown)} (known: {', '.join(CENSUSES)})")
    meta_path = HERE / "censuses.json"
    prev = json.loads(meta_path.read_text())["censuses"] if meta_path.exists() else []
    entries = {e["name"]: e for e in prev if e["name"] in CENSUSES}
    t0 = time.perf_counter()
    for name in names:
        entries[name] = build(name, CENSUSES[name])
        meta = {"seed": old.SEED, "rng_streams": f"{STREAM}NAME",
                "built_by": "benchmarks/heldout2/build.py (reusing benchmarks/heldout/build.py)",
                "censuses": [entries[n] for n in CENSUSES if n in entries]}
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
