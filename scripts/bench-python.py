"""Per-core extraction speed from Python on dataset pages, against the CLI and against the
peers called from the same process (trafilatura, resiliparse, when installed).

    bash scripts/install-deps.sh
    .venv/bin/maturin develop --release -m python/Cargo.toml
    .venv/bin/pip install trafilatura resiliparse          # optional: the peers
    ../shared/datasets/unpack.sh target/datasets
    .venv/bin/python scripts/bench-python.py target/datasets/aeb/manifest.jsonl target/datasets/wcxb/manifest.jsonl

Reports MB/s of HTML: one thread calling Extractor.extract in a loop, a 2-thread pool sharing
one Extractor, and each peer's usual call on the same pages (decoded as they need).
"""

import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import article_pipeline as ap


def pages(manifests, split="dev"):
    out = []
    for m in manifests:
        m = Path(m)
        for line in m.read_text(encoding="utf-8").split("\n"):
            if not line.strip():
                continue
            d = json.loads(line)
            if d.get("split") == split:
                p = Path(d["html"])
                out.append((m.parent / p if not p.is_absolute() else p).read_bytes())
    return out


def rate(label, nbytes, seconds):
    print(f"{label:<40} {nbytes / seconds / 1e6:8.1f} MB/s  ({seconds:.2f} s)")


def main():
    manifests = sys.argv[1:]
    docs = pages(manifests)
    total = sum(len(d) for d in docs)
    print(f"{len(docs)} pages, {total / 1e6:.1f} MB of HTML")
    ex = ap.Extractor()
    for d in docs[:20]:
        ex.extract(d)  # warm up
    best = None
    for _ in range(3):
        t = time.perf_counter()
        for d in docs:
            try:
                ex.extract(d)
            except ap.ExtractionError:
                pass
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    rate("article_pipeline Extractor, 1 thread", total, best)

    def one(d):
        try:
            return len(ex.extract(d).text)
        except ap.ExtractionError:
            return 0

    with ThreadPoolExecutor(max_workers=2) as pool:
        t = time.perf_counter()
        list(pool.map(one, docs, chunksize=8))
        rate("article_pipeline Extractor, 2 threads", total, time.perf_counter() - t)

    strs = [d.decode("utf-8", "replace") for d in docs]
    try:
        import trafilatura

        t = time.perf_counter()
        for s in strs:
            trafilatura.extract(s, include_comments=False)
        rate("trafilatura.extract (no comments)", total, time.perf_counter() - t)
    except ImportError:
        print("trafilatura: not installed")
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        t = time.perf_counter()
        for s in strs:
            extract_plain_text(HTMLTree.parse(s), main_content=True)
        rate("resiliparse extract_plain_text(main)", total, time.perf_counter() - t)
    except ImportError:
        print("resiliparse: not installed")


if __name__ == "__main__":
    main()
