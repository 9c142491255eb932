#!/usr/bin/env python3
"""Site memory in a `pipeline --warc` run, online against two passes (README "Site memory").

Usage: scripts/site-memory-warc-eval.py [--bin target/release/pipeline] [--datasets target/datasets]

The dev pages of big9 (each site's pages in one WARC, site after site, under https://SITE.test/)
and of dragnet (dev and train pages, one WARC per host, under the page's own host; only the
dev pages of hosts with at least 5 pages are scored) are packed with `pipeline pack-warc` and
run through `pipeline --warc` four times: site memory off (`--site-memory-pages 0`), online
(the default: each page judged by the pages before it), `--site-memory-two-pass` (every page
counted first), and a first pass over one input in two (`--site-memory-first-pass-every 2`:
the other inputs' pages are counted as they are extracted). The records' text is scored with ../shared/peers/score.py's shingle F1.
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile
from urllib.parse import urlparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manifests import read_manifest  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "shared", "peers"))
import score  # noqa: E402  (the reference scorer)


def host_of(url):
    host = urlparse(url or "").hostname or ""
    return host[4:] if host.startswith("www.") else host


def pack(binary, work, name, base_url, files):
    out = os.path.join(work, f"{name}.warc.gz")
    subprocess.run([binary, "pack-warc", "--out", out, "--base-url", base_url, "--date", "2026-01-01T00:00:00Z", *files],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def run(binary, warcs, out, flags):
    subprocess.run([binary, "--warc", *warcs, "--out", out, "--threads", "2", "--no-progress", *flags],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    texts = {}
    for part in sorted(glob.glob(os.path.join(out, "part-*.jsonl.zst"))):
        raw = subprocess.run(["zstd", "-dc", part], check=True, capture_output=True).stdout
        for line in raw.decode().splitlines():
            r = json.loads(line)
            texts[r["metadata"]["url"]] = r["text"]
    return texts


def pooled(golds, texts):
    """score.py's shingle F1 of the records' texts (a page without a record counts as empty)."""
    pages = [score.aeb_page(score.aeb_tokens(score.gold_plain_text(g)), score.aeb_tokens(texts.get(url, "")))
             for url, g in golds.items()]
    return score.aeb_aggregate(pages)[2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/pipeline")
    ap.add_argument("--datasets", default="target/datasets")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    work = tempfile.mkdtemp(prefix="site-memory-warc-")
    modes = {
        "off": ["--site-memory-pages", "0"],
        "online": [],
        "two-pass": ["--site-memory-two-pass"],
        "two-pass, 1 input in 2": ["--site-memory-two-pass", "--site-memory-first-pass-every", "2"],
    }

    sets = []
    big9_dir = os.path.join(a.datasets, "big9")
    big9 = [r for r in read_manifest(os.path.join(big9_dir, "manifest.jsonl")) if r["split"] == "dev"]
    warcs, scored = [], {}
    for site in sorted({r["site"] for r in big9}):
        rows = [r for r in big9 if r["site"] == site]
        base = f"https://{site}.test/"
        warcs.append(pack(binary, work, f"big9-{site}", base, [os.path.join(big9_dir, r["html"]) for r in rows]))
        scored.update({base + os.path.basename(r["html"]): r["gold"]["text"] for r in rows})
    sets.append(("big9 dev", warcs, scored))

    dn_dir = os.path.join(a.datasets, "dragnet")
    dn = [r for r in read_manifest(os.path.join(dn_dir, "manifest.jsonl")) if host_of(r.get("url"))]
    hosts = collections.Counter(host_of(r["url"]) for r in dn)
    warcs, scored = [], {}
    for i, host in enumerate(sorted(hosts)):
        rows = [r for r in dn if host_of(r["url"]) == host]
        base = f"https://{host}/"
        warcs.append(pack(binary, work, f"dragnet-{i:04d}", base, [os.path.join(dn_dir, r["html"]) for r in rows]))
        if hosts[host] >= 5:
            scored.update({base + os.path.basename(r["html"]): r["gold"]["text"] for r in rows if r["split"] == "dev"})
    sets.append(("dragnet dev, hosts with >= 5 pages in dev + train", warcs, scored))

    print("| pages | " + " | ".join(modes) + " |\n|---|" + "---:|" * len(modes))
    for name, warcs, scored in sets:
        cells = []
        for mode, flags in modes.items():
            texts = run(binary, warcs, os.path.join(work, f"{len(cells)}-{name[:4]}"), flags)
            cells.append(pooled(scored, texts))
        print(f"| {name} ({len(scored)}) | " + " | ".join(f"{c:.4f}" for c in cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
