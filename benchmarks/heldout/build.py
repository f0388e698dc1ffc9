"""Build the held-out censuses in benchmarks/heldout/ (see README.md there).

    .venv/bin/python benchmarks/heldout/build.py            # every census
    .venv/bin/python benchmarks/heldout/build.py manpages   # only the ones named

Each census is a population in which every chunk is scored: a gzip CSV with one row per chunk
(`doc`, `hit5`, `rr` for the retrieval censuses; `doc`, `y` for the graded one), and an entry in
censuses.json (sizes, inequality, census means). None of them was used to tune perdoc.

Real censuses: text that ships on this machine (man pages, R help, Python docstrings) is cut into
chunks of 100 or 150 words, one query is made automatically from every chunk, and BM25
(implemented here with scipy.sparse; checked against a plain-Python BM25 on a subset) ranks all
chunks of the corpus for it. hit5 = the source chunk is in the top 5,
rr = 1/rank (0 beyond rank 100). Ties in score are broken by a fixed seeded permutation of the
chunks. Synthetic censuses are drawn from seeded generators unlike perdoc.synthetic's.

Deterministic: the same machine contents give byte-identical files (gzip mtime 0, seeded RNGs,
sorted inputs). The real censuses depend on the installed man pages, R packages and Python
packages (the stdlib of the interpreter that runs this script, and .venv): censuses.json
records a sha256 of the extracted text of each, so a changed machine shows up as a changed
fingerprint.

Single process, numpy + scipy only (plus Rscript for the R help text). Run it with the project's
.venv interpreter (the pydocs census reads that interpreter's standard library and .venv).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import math
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
SEED = 20261201
CHUNK_WORDS = 150          # words per chunk (consecutive, non-overlapping windows)
MIN_LAST = 50              # a trailing window shorter than this is merged into the previous one
MIN_DOC_WORDS = 30         # documents with fewer words are left out
K1, B = 1.2, 0.75          # BM25 parameters
MAX_RANK = 100             # rr = 0 beyond this rank

STOP = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just me more most
my myself no nor not now of off on once only or other our ours ourselves out over own same she
should so some such than that the their theirs them themselves then there these they this those
through to too under until up very was we were what when where which while who whom why will with
would you your yours yourself yourselves also may must shall use used using see e g eg ie etc
""".split())
TOKEN = re.compile(r"[a-z0-9]+")


def rng_for(name: str) -> np.random.Generator:
    return np.random.default_rng([SEED, zlib.crc32(name.encode())])


# --------------------------------------------------------------------------------------------
# text sources
# --------------------------------------------------------------------------------------------

_ROFF_SKIP = frozenset("""
TH de ds nr if ie el ig so tr ta ne sp br in ti ll nh ad na fi nf hy ft ps vs PD rm rn am cc ec eo
mso do char ns rs bp pl po ev fam fc lf tm ab cu ul ce rj lg ss pc mc nm nn pn pm sv os wh it em
Dd Os Dt UC Ds De Bd Ed Bl El Pp PP LP P Sp Vb Ve IX RS RE TS TE EQ EN HP TP IP hw
""".split())
_ROFF_ESC = [
    (re.compile(r'\\".*$'), ""),                          # comment to end of line
    (re.compile(r"\\f(\[[^\]]*\]|\(..|.)"), ""),           # font changes
    (re.compile(r"\\s[+-]?(\[[^\]]*\]|\(..|\d\d?)"), ""),  # size changes
    (re.compile(r"\\\*(\[[^\]]*\]|\(..|.)"), " "),          # string interpolation
    (re.compile(r"\\n[+-]?(\[[^\]]*\]|\(..|.)"), ""),       # register interpolation
    (re.compile(r"\\[hvwlLoDbxXRZ]'[^']*'"), " "),          # motions, width, drawing
    (re.compile(r"\\\[[^\]]*\]"), " "),                     # named glyphs \[..]
    (re.compile(r"\\\(.."), " "),                           # glyphs \(xx
    (re.compile(r"\\[-e]"), "-"),
    (re.compile(r"\\[&|^0c%:)!/,{}~ tdu]"), " "),
    (re.compile(r"\\."), " "),
]


def roff_to_text(src: str) -> str:
    """Strip roff (man and mdoc macros, pod2man preambles) down to plain text. Crude but enough
    for bag-of-words retrieval: macro arguments are kept as text, requests and definitions go."""
    out, skip_until = [], None
    for line in src.splitlines():
        if skip_until is not None:
            if line.startswith(skip_until):
                skip_until = None
            continue
        if line.startswith((".\\\"", "'\\\"", '.\\"')) or line in (".", "'"):
            continue
        if line.startswith((".", "'")):
            parts = line[1:].strip().split(None, 1)
            if not parts:
                continue
            name = parts[0]
            if name in ("de", "de1", "am", "ig"):
                skip_until = ".."
                continue
            if name in _ROFF_SKIP or name.startswith(("if", "ie", "el", "\\")):
                continue
            line = parts[1] if len(parts) > 1 else ""
            line = line.replace('"', " ")
        for pat, rep in _ROFF_ESC:
            line = pat.sub(rep, line)
        out.append(line)
    return "\n".join(out)


def man_files(which: str) -> list[Path]:
    """The English man pages in /usr/share/man/man[1-8], regular files only (symlinks are aliases
    of another page). which = 'general' (all but the Google Cloud CLI reference) or 'gcloud'."""
    files = []
    for sec in sorted(Path("/usr/share/man").glob("man[1-8]")):
        for f in sorted(sec.iterdir()):
            if f.is_symlink() or not f.is_file():
                continue
            if (which == "gcloud") == f.name.startswith("gcloud"):
                files.append(f)
    return files


def man_pages(files: list[Path]) -> list[tuple[str, str]]:
    """(doc id, text) of man page files; one-line `.so` redirects (aliases) are left out."""
    docs = []
    for f in files:
        raw = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
        src = raw.decode("utf-8", errors="replace")
        if src.lstrip().startswith(".so ") and src.count("\n") <= 2:
            continue
        name = f.name[:-3] if f.name.endswith(".gz") else f.name
        docs.append((name, roff_to_text(src)))
    return docs


def gcloud_groups(files, rng, target_docs):
    """Sample whole command groups of the gcloud reference: a group is a command together with its
    alpha_/beta_ variants (near-duplicate pages), so that sampled pages keep their siblings."""
    key = lambda n: re.sub(r"^gcloud_(alpha|beta)_", "gcloud_", n)
    groups: dict[str, list[int]] = {}
    for i, f in enumerate(files):
        groups.setdefault(key(f.name), []).append(i)
    names = sorted(groups)
    order = rng.permutation(len(names))
    keep = []
    for j in order:
        if len(keep) >= target_docs:
            break
        keep.extend(groups[names[j]])
    return [files[i] for i in sorted(keep)]


_R_LIST = r"""
for (lib in c("/usr/lib/R/library", "/usr/lib/R/site-library")) for (p in sort(list.files(lib))) {
  f <- file.path(lib, p, "help", paste0(p, ".rdx"))
  v <- if (file.exists(f)) sort(names(readRDS(f)$variables)) else character(0)
  if (length(v)) cat(paste(lib, p, v, sep = "\t"), sep = "\n")
}
"""
_R_FETCH = r"""
skip <- c("\\alias", "\\name", "\\keyword", "\\docType", "\\encoding", "\\concept", "\\Rdversion")
con <- file("stdin"); wanted <- readLines(con); close(con)
out <- file(commandArgs(TRUE)[1], "w", encoding = "UTF-8")
for (w in wanted) {
  x <- strsplit(w, "\t")[[1]]
  rd <- tools:::fetchRdDB(file.path(x[1], x[2], "help", x[2]), x[3])
  keep <- !vapply(rd, function(s) isTRUE(attr(s, "Rd_tag") %in% skip), TRUE)
  txt <- gsub("[[:space:]]+", " ", paste(unlist(rd[keep]), collapse = " "))
  writeLines(paste(x[2], x[3], txt, sep = "\t"), out, useBytes = TRUE)
}
close(out)
"""


def r_help(rng, target_docs) -> list[tuple[str, str]]:
    """A seeded sample of R help topics (one topic = one document; its text = every section but
    the aliases and keywords, markup dropped) from the R packages installed in /usr/lib/R."""
    listing = subprocess.run(["Rscript", "-e", _R_LIST], check=True, capture_output=True,
                             text=True).stdout.splitlines()
    listing = sorted(set(line for line in listing
                         if line.count("\t") == 2 and not line.endswith("\t")))
    pick = sorted(rng.choice(len(listing), size=min(target_docs, len(listing)), replace=False))
    wanted = "\n".join(listing[i] for i in pick) + "\n"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rhelp.tsv"
        r = subprocess.run(["Rscript", "-e", _R_FETCH, str(out)], input=wanted,
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit(f"Rscript failed:\n{r.stderr}")
        lines = out.read_bytes().decode("utf-8", errors="replace").splitlines()
    docs = []
    for line in lines:
        pkg, topic, txt = line.split("\t", 2)
        docs.append((f"{pkg}::{topic}", txt))
    return sorted(docs)


PY_ROOTS = {
    "stdlib": Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}",
    "site": HERE.parent.parent / ".venv" / "lib" /
            f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages",
}
_PY_SKIP = {"test", "tests", "testing", "idle_test", "site-packages", "__pycache__", "perdoc"}


def py_docstrings(rng, target_docs) -> list[tuple[str, str]]:
    """Docstrings of Python modules: the standard library of the interpreter running this script
    and the packages in the project's .venv, test folders left out. One module file = one
    document; its text = its module, class and function docstrings in source order. Files are
    visited in a seeded random order until target_docs of them have at least MIN_DOC_WORDS
    words of docstrings (files without a triple-quoted string are skipped unparsed)."""
    import ast
    import warnings
    files = []
    for tag, root in PY_ROOTS.items():
        if not root.is_dir():
            continue
        for f in sorted(root.rglob("*.py")):
            rel = f.relative_to(root)
            if not _PY_SKIP.intersection(rel.parts[:-1]) and not f.is_symlink():
                files.append((f"{tag}:{rel.as_posix()}", f))
    docs = []
    for j in rng.permutation(len(files)):
        name, f = files[j]
        src = f.read_bytes()
        if b'"""' not in src and b"'''" not in src:
            continue            # only modules with a triple-quoted string are parsed
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(src)
        except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError):
            continue
        nodes = [n for n in ast.walk(tree) if isinstance(
            n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
        nodes.sort(key=lambda n: getattr(n, "lineno", 0))
        text = "\n".join(d for d in (ast.get_docstring(n) for n in nodes) if d)
        if len(text.split()) >= MIN_DOC_WORDS:
            docs.append((name, text))
            if len(docs) >= target_docs:
                break
    return sorted(docs)


# --------------------------------------------------------------------------------------------
# chunks, queries, BM25
# --------------------------------------------------------------------------------------------

def chunk_docs(docs, size=CHUNK_WORDS):
    """Cut each document into windows of `size` whitespace words. Returns doc ids (one per
    document, in order), chunk -> document index, and the chunks as word lists."""
    ids, chunk_doc, chunks = [], [], []
    for name, text in docs:
        words = text.split()
        if len(words) < MIN_DOC_WORDS:
            continue
        starts = list(range(0, len(words), size))
        if len(starts) > 1 and len(words) - starts[-1] < MIN_LAST:
            starts.pop()
        ends = starts[1:] + [len(words)]
        d = len(ids)
        ids.append(name)
        for s, e in zip(starts, ends):
            chunk_doc.append(d)
            chunks.append(words[s:e])
    return ids, np.asarray(chunk_doc, dtype=np.int64), chunks


def distinct_ids(names: list[str]) -> list[str]:
    """Ids that stay distinct once letter case, Unicode form and surrounding spaces are set aside
    (perdoc refuses ids that differ only in those, e.g. the man pages R.1 and r.1): the second and
    later members of such a group get a suffix ~2, ~3, ... in their order in `names`."""
    key = lambda v: unicodedata.normalize("NFKC", v).strip().casefold()
    seen: dict[str, int] = {}
    taken = {key(v) for v in names}
    out = []
    for v in names:
        k = key(v)
        if k not in seen:
            seen[k] = 1
            out.append(v)
            continue
        while True:
            seen[k] += 1
            cand = f"{v}~{seen[k]}"
            if key(cand) not in taken:
                break
        taken.add(key(cand))
        out.append(cand)
    return out


def analyse(words) -> list[str]:
    return [t for t in TOKEN.findall(" ".join(words).lower()) if len(t) > 1 and t not in STOP]


def bm25_index(chunks):
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, words in enumerate(chunks):
        toks = analyse(words)
        cols.extend(vocab.setdefault(t, len(vocab)) for t in toks)
        rows.extend([i] * len(toks))
    n = len(chunks)
    tf = sp.csr_matrix((np.ones(len(cols)), (np.asarray(rows), np.asarray(cols))),
                       shape=(n, len(vocab)))
    tf.sum_duplicates()
    dl = np.asarray(tf.sum(axis=1)).ravel()
    df = np.bincount(tf.indices, minlength=len(vocab))
    idf = np.log1p((n - df + 0.5) / (df + 0.5))
    norm = K1 * (1 - B + B * dl / max(dl.mean(), 1e-12))
    row_of = np.repeat(np.arange(n), np.diff(tf.indptr))
    w = tf.copy()
    w.data = idf[tf.indices] * tf.data * (K1 + 1) / (tf.data + norm[row_of])
    return vocab, w.T.tocsr()       # terms x chunks


def make_query(words, rng, spec, vocab_words):
    """A query from one chunk: a random contiguous span of spec['span'] words, lower-cased, each
    word dropped with probability spec['drop'] (at least two kept), and with probability
    spec['swap'] one kept word replaced by a random word of the corpus vocabulary."""
    lo, hi = spec["span"]
    L = min(len(words), int(rng.integers(lo, hi + 1)))
    s = int(rng.integers(0, len(words) - L + 1))
    span = [w.lower() for w in words[s:s + L]]
    keep = rng.random(L) >= spec["drop"]
    if keep.sum() < 2:
        keep[rng.choice(L, size=min(2, L), replace=False)] = True
    span = [w for w, k in zip(span, keep) if k]
    if rng.random() < spec.get("swap", 0.0):
        span[int(rng.integers(0, len(span)))] = vocab_words[int(rng.integers(0, len(vocab_words)))]
    return span


def rank_sources(chunks, spec, rng):
    """Rank of each chunk's own query's source (the chunk itself) among all chunks under BM25;
    np.inf when the query shares no term with its source."""
    vocab, wt = bm25_index(chunks)
    vocab_words = sorted(vocab)
    n = len(chunks)
    qrows, qcols = [], []
    for i, words in enumerate(chunks):
        toks = [vocab[t] for t in analyse(make_query(words, rng, spec, vocab_words)) if t in vocab]
        qcols.extend(toks)
        qrows.extend([i] * len(toks))
    q = sp.csr_matrix((np.ones(len(qcols)), (np.asarray(qrows, dtype=np.int64),
                                             np.asarray(qcols, dtype=np.int64))),
                      shape=(n, len(vocab)))
    q.sum_duplicates()
    tiebreak = rng.permutation(n)
    ranks = np.full(n, np.inf)
    batch = max(16, int(2e7 // n))
    for b0 in range(0, n, batch):
        b1 = min(n, b0 + batch)
        r = (q[b0:b1] @ wt).tocsr()
        rows = np.repeat(np.arange(b1 - b0), np.diff(r.indptr))
        src = np.arange(b0, b1)
        is_src = r.indices == src[rows]
        s = np.zeros(b1 - b0)
        s[rows[is_src]] = r.data[is_src]
        srow = s[rows]
        ahead = (r.data > srow) | ((r.data == srow) & (tiebreak[r.indices] < tiebreak[src[rows]]))
        rk = 1 + np.bincount(rows, weights=ahead, minlength=b1 - b0)
        ranks[b0:b1] = np.where(s > 0, rk, np.inf)
    return ranks


# --------------------------------------------------------------------------------------------
# synthetic censuses
# --------------------------------------------------------------------------------------------

def synth_pareto(rng):
    """Pareto document sizes; a per-chunk rank whose log is normal around a document level that
    worsens with document size (and a document random effect): hit5 and rr from that rank."""
    M = 3000
    n = np.minimum(np.floor(2.0 * rng.random(M) ** (-1 / 1.15)).astype(np.int64), 4000)
    mu = -0.2 + 0.45 * np.log(n) + 1.0 * rng.standard_normal(M)
    d = np.repeat(np.arange(M), n)
    rank = np.maximum(1, np.ceil(np.exp(mu[d] + 1.2 * rng.standard_normal(d.size))))
    ids = [f"p{i:05d}" for i in range(M)]
    return ids, d, {"hit5": (rank <= 5).astype(np.int64),
                    "rr": np.where(rank <= MAX_RANK, 1.0 / rank, 0.0)}


def synth_graded(rng):
    """Zipf document sizes (1 + Zipf(2.2), the Zipf draw capped at 1,500); a graded relevance y in
    [0, 1] (3 decimals). About a quarter of the documents (more of the small ones) are off-topic:
    y mostly exactly 0. The rest have a document mean mu from a U-shaped Beta(0.6, 0.5) and
    y ~ Beta(4 mu, 4 (1 - mu)) within."""
    M = 6000
    n = 1 + np.minimum(rng.zipf(2.2, M), 1500).astype(np.int64)
    off = rng.random(M) < 1 / (1 + np.exp(0.6 + 0.5 * np.log(n)))
    mu = np.clip(rng.beta(0.6, 0.5, M), 0.02, 0.98)
    d = np.repeat(np.arange(M), n)
    y = rng.beta(4 * mu[d], 4 * (1 - mu[d]))
    offc = off[d]
    y_off = np.where(rng.random(d.size) < 0.85, 0.0, rng.beta(1, 6, d.size))
    y = np.round(np.where(offc, y_off, y), 3)
    ids = [f"g{i:05d}" for i in range(M)]
    return ids, d, {"y": y}


# --------------------------------------------------------------------------------------------
# census definitions
# --------------------------------------------------------------------------------------------

EASY = {"span": (8, 15), "drop": 0.15, "swap": 0.0}
MEDIUM = {"span": (6, 10), "drop": 0.2, "swap": 0.25}
HARD = {"span": (4, 7), "drop": 0.3, "swap": 0.5}

CENSUSES = {
    "manpages": {
        "kind": "retrieval",
        "source": "English man pages in /usr/share/man/man1-8 of this machine (Debian 12 "
                  "packages), all but the Google Cloud CLI reference; one page = one document",
        "docs": lambda rng: man_pages(man_files("general")),
        "query": EASY,
    },
    "gcloud": {
        "kind": "retrieval",
        "source": "Google Cloud CLI reference man pages (gcloud_*.1 in /usr/share/man/man1): "
                  "a seeded sample of command groups (each command with its alpha/beta variants); "
                  "one page = one document",
        "docs": lambda rng: man_pages(gcloud_groups(man_files("gcloud"), rng, 6000)),
        "chunk_words": 100,
        "query": EASY,
    },
    "rhelp": {
        "kind": "retrieval",
        "source": "R help topics of the R packages installed in /usr/lib/R/library and "
                  "/usr/lib/R/site-library: a seeded sample of 6,000 topics (those under 30 words "
                  "then left out); one topic = one document",
        "docs": lambda rng: r_help(rng, 6000),
        "chunk_words": 100,
        "query": HARD,
    },
    "pydocs": {
        "kind": "retrieval",
        "source": "docstrings of Python modules: the standard library of the building interpreter "
                  "and the packages in .venv (test folders and perdoc left out): a seeded sample "
                  "of 5,000 modules with at least 30 words of docstrings; one module = one "
                  "document",
        "docs": lambda rng: py_docstrings(rng, 5000),
        "query": MEDIUM,
    },
    "synth_pareto": {
        "kind": "synthetic",
        "source": "synthetic: Pareto(alpha 1.15, x_m 2) sizes capped at 4,000; log rank ~ "
                  "N(-0.2 + 0.45 log n_d + u_d, 1.2^2), u_d ~ N(0, 1); hit5 = rank <= 5, "
                  "rr = 1/rank (0 beyond 100)",
        "make": synth_pareto,
    },
    "synth_graded": {
        "kind": "synthetic",
        "source": "synthetic: sizes 1 + min(Zipf(2.2), 1,500); graded relevance y in [0, 1]: "
                  "off-topic documents (probability 1/(1 + e^0.6 n_d^0.5)) have y = 0 w.p. 0.85 "
                  "else Beta(1, 6); others y ~ Beta(4 mu_d, 4 (1 - mu_d)), mu_d ~ Beta(0.6, 0.5)",
        "make": synth_graded,
    },
}


def write_csv_gz(path: Path, ids, chunk_doc, scores: dict):
    order = np.argsort(chunk_doc, kind="stable")
    buf = io.StringIO()
    cols = list(scores)
    buf.write(",".join(["doc"] + cols) + "\n")
    quoted = ['"' + s.replace('"', '""') + '"' if re.search(r'[",\n]', s) else s for s in ids]
    fmt = []
    for c in cols:
        v = scores[c]
        fmt.append([str(int(x)) for x in v] if v.dtype.kind in "iub" else
                   [("%.6f" % x).rstrip("0").rstrip(".") for x in v])
    for i in order:
        buf.write(",".join([quoted[chunk_doc[i]]] + [f[i] for f in fmt]) + "\n")
    raw = buf.getvalue().encode()
    with open(path, "wb") as fh, gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0,
                                              compresslevel=9) as gz:
        gz.write(raw)


def describe(name, spec, ids, chunk_doc, scores, extra):
    M = len(ids)
    n = np.bincount(chunk_doc, minlength=M)
    k = max(1, math.ceil(0.01 * M))
    entry = {
        "name": name,
        "file": f"{name}.csv.gz",
        "kind": spec["kind"],
        "source": spec["source"],
        "documents": int(M),
        "chunks": int(n.sum()),
        "size_median": float(np.median(n)),
        "size_max": int(n.max()),
        "size_cv": round(float(n.std() / n.mean()), 4),
        "top1pct_docs": k,
        "top1pct_share": round(float(np.sort(n)[::-1][:k].sum() / n.sum()), 4),
        "scores": {},
    }
    for c, v in scores.items():
        # means of the values as written to the file (rr is written with 6 decimals)
        v = np.round(v.astype(float), 6)
        per_doc = np.bincount(chunk_doc, weights=v, minlength=M) / n
        entry["scores"][c] = {
            "micro_mean": round(float(v.mean()), 6),        # census mean over chunks
            "macro_mean": round(float(per_doc.mean()), 6),  # mean of the document means
            "doc_mean_sd": round(float(per_doc.std()), 6),
            "docs_all_one": round(float(np.mean(per_doc == 1)), 4),
            "docs_all_zero": round(float(np.mean(per_doc == 0)), 4),
            "size_corr_log": round(float(np.corrcoef(np.log(n), per_doc)[0, 1]), 4),
        }
    entry.update(extra)
    return entry


def build(name, spec):
    rng = rng_for(name)
    t0 = time.perf_counter()
    extra = {}
    if spec["kind"] == "retrieval":
        docs = spec["docs"](rng)
        h = hashlib.sha256()
        for dname, text in docs:
            h.update(dname.encode() + b"\0" + text.encode("utf-8", "replace") + b"\0")
        size = spec.get("chunk_words", CHUNK_WORDS)
        ids, chunk_doc, chunks = chunk_docs(docs, size)
        renamed = sum(a != b for a, b in zip(ids, distinct_ids(ids)))
        ids = distinct_ids(ids)
        t1 = time.perf_counter()
        ranks = rank_sources(chunks, spec["query"], rng)
        scores = {"hit5": (ranks <= 5).astype(np.int64),
                  "rr": np.where(ranks <= MAX_RANK, 1.0 / ranks, 0.0)}
        extra = {
            "chunking": f"consecutive windows of {size} whitespace words (a last window "
                        f"under {MIN_LAST} words joins the previous one); documents under "
                        f"{MIN_DOC_WORDS} words left out",
            "query": {"span_words": list(spec["query"]["span"]), "drop": spec["query"]["drop"],
                      "swap": spec["query"]["swap"]},
            "retrieval": f"BM25 (k1 {K1}, b {B}, idf log(1 + (N - df + 0.5)/(df + 0.5))) over all "
                         "chunks; lower-cased [a-z0-9]+ tokens, stop words and 1-character "
                         "tokens removed; ties broken by a seeded permutation",
            "text_sha256": h.hexdigest(),
            "queries_without_source_term": int(np.isinf(ranks).sum()),
            "ids_suffixed": renamed,
        }
        timing = f"text {t1 - t0:.1f} s, BM25 {time.perf_counter() - t1:.1f} s"
    else:
        ids, chunk_doc, scores = spec["make"](rng)
        timing = f"{time.perf_counter() - t0:.1f} s"
    path = HERE / f"{name}.csv.gz"
    write_csv_gz(path, ids, chunk_doc, scores)
    entry = describe(name, spec, ids, chunk_doc, scores, extra)
    entry["file_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    entry["file_bytes"] = path.stat().st_size
    means = ", ".join(f"{c} {v['micro_mean']:.4f}" for c, v in entry["scores"].items())
    print(f"{name}: {entry['documents']} docs, {entry['chunks']} chunks, cv {entry['size_cv']}, "
          f"top1% {entry['top1pct_share']}, {means}; {path.stat().st_size / 1e6:.2f} MB; "
          f"{timing}, total {time.perf_counter() - t0:.1f} s", flush=True)
    return entry


def main(argv):
    names = argv or list(CENSUSES)
    unknown = [n for n in names if n not in CENSUSES]
    if unknown:
        sys.exit(f"unknown census: {', '.join(unknown)} (known: {', '.join(CENSUSES)})")
    meta_path = HERE / "censuses.json"
    old = json.loads(meta_path.read_text())["censuses"] if meta_path.exists() else []
    entries = {e["name"]: e for e in old if e["name"] in CENSUSES}
    t0 = time.perf_counter()
    for name in names:
        entries[name] = build(name, CENSUSES[name])
        meta = {"seed": SEED, "built_by": "benchmarks/heldout/build.py",
                "censuses": [entries[n] for n in CENSUSES if n in entries]}
        meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    print(f"done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
