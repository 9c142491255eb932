#!/usr/bin/env python3
"""Issue 28, session 24: does a learned page-kind choice mend listings and collections?

wcxb's pages below shingle F1 0.5 are mostly collections, listings, products and service
pages: the gold keeps a page's items, which lead with links, and the extractor keeps one run
of prose. A listing mode (`--bias 0.3 --keep-link-blocks --link-run-blocks 0` by default)
keeps them. This script measures, without changing the extractor:

1. the listing mode on every page, and on the pages wcxb's provenance calls collection or
   listing (an oracle of the page's kind);
2. a logistic regression over page features, fitted on the page kinds of wcxb's train split
   (the only labelled kinds; CC-BY-4.0), choosing the listing mode where its probability
   passes a threshold, the threshold chosen by leave-one-dataset-out over the five dev sets.

Usage: scripts/experiments/page-kind.py [--bin target/release/pipeline] [--datasets target/datasets]
       [--work /tmp/page-kind] [--listing-flags "..."]
"""
import argparse
import collections
import json
import math
import os
import re
import shutil
import subprocess

DEV = ["aeb", "big9", "cleaneval", "dragnet", "wcxb"]
POSITIVE = {"collection", "listing"}
THRESHOLDS = [0.3, 0.4, 0.5, 0.6, 0.7]
SCORE_PY = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "peers", "score.py")

TAG = re.compile(rb"<(/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>")
HIDDEN = re.compile(rb"<(script|style|noscript)\b.*?</\1\s*>", re.S | re.I)
JSONLD = re.compile(rb"<script[^>]*ld\+json[^>]*>(.*?)</script", re.S | re.I)
WORD = re.compile(r"\w+")


def features(html, extracted):
    """Page-level features a single pass could count: link share of words, tag densities,
    JSON-LD types, currency signs, and the share of the page's words the extractor kept."""
    body = HIDDEN.sub(b" ", html)
    jsonld = b" ".join(JSONLD.findall(html))
    words = link_words = in_link = 0
    tags = collections.Counter()
    pos = 0
    for m in TAG.finditer(body):
        n = len(WORD.findall(body[pos:m.start()].decode("utf8", "replace")))
        pos = m.end()
        words += n
        link_words += n if in_link else 0
        close, name = m.group(1), m.group(2).lower()
        if name == b"a":
            in_link = max(0, in_link + (-1 if close else 1))
        if not close:
            tags[name] += 1
    w = max(words, 1)
    return [
        link_words / w,
        math.log1p(words),
        math.log1p(tags[b"a"]) - math.log1p(words),
        math.log1p(tags[b"li"]) - math.log1p(words),
        math.log1p(tags[b"h2"] + tags[b"h3"]),
        math.log1p(tags[b"article"]),
        len(WORD.findall(extracted)) / w,
        float(bool(re.search(rb"ItemList|CollectionPage|SearchResultsPage|OfferCatalog", jsonld))),
        float(b'"Product"' in jsonld),
        float(bool(re.search(rb'NewsArticle|BlogPosting|"Article"', jsonld))),
        len(re.findall(rb"[$\xa3]|&pound;|\xe2\x82\xac", body)) / w,
    ]


def fit_logistic(x, y, rounds=3000, rate=0.5, l2=0.01):
    n = len(x[0])
    mu = [sum(r[k] for r in x) / len(x) for k in range(n)]
    sd = [max(1e-6, math.sqrt(sum((r[k] - mu[k]) ** 2 for r in x) / len(x))) for k in range(n)]
    z = [[(r[k] - mu[k]) / sd[k] for k in range(n)] for r in x]
    w, b = [0.0] * n, 0.0
    for _ in range(rounds):
        gw, gb = [0.0] * n, 0.0
        for r, t in zip(z, y):
            p = 1 / (1 + math.exp(-(sum(a * c for a, c in zip(w, r)) + b)))
            for k in range(n):
                gw[k] += (p - t) * r[k]
            gb += p - t
        w = [w[k] - rate * (gw[k] / len(z) + l2 * w[k]) for k in range(n)]
        b -= rate * gb / len(z)
    return lambda f: 1 / (1 + math.exp(-(sum(a * (f[k] - mu[k]) / sd[k] for k, a in enumerate(w)) + b)))


def score(args, pred_dir, per_page):
    cmd = ["python3", SCORE_PY, "--pred", pred_dir, "--split", "dev", "--json", "--per-page", per_page]
    for d in DEV:
        cmd += ["--manifest", f"{args.datasets}/{d}/manifest.jsonl"]
    report = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    below = collections.Counter()
    for line in open(per_page):
        p = json.loads(line)
        f1 = 2 * p["tp"] / (2 * p["tp"] + p["fp"] + p["fn"]) if p["tp"] else 0.0
        below[p["dataset"]] += f1 < 0.5
    return {d: report["datasets"][d]["shingle_f1"] for d in DEV}, below


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/pipeline")
    ap.add_argument("--datasets", default="target/datasets")
    ap.add_argument("--work", default="/tmp/page-kind")
    ap.add_argument("--listing-flags", default="--bias 0.3 --keep-link-blocks --link-run-blocks 0")
    args = ap.parse_args()
    manifests = sum([["--manifest", f"{args.datasets}/{d}/manifest.jsonl"] for d in DEV], [])
    runs = {"base": ("dev", []), "listing": ("dev", args.listing_flags.split()), "train": ("train", [])}
    for name, (split, flags) in runs.items():
        which = manifests if split == "dev" else ["--manifest", f"{args.datasets}/wcxb/manifest.jsonl"]
        cmd = [args.bin, "eval", *which, "--split", split, *flags, "--out-dir", f"{args.work}/{name}"]
        subprocess.run(cmd, check=True, capture_output=True)

    kinds = {}
    for line in open(f"{args.datasets}/wcxb/provenance.jsonl"):
        e = json.loads(line)
        kinds[e["id"]] = e.get("page_type")
    train_x, train_y, dev = [], [], []
    for d in DEV:
        for line in open(f"{args.datasets}/{d}/manifest.jsonl"):
            e = json.loads(line)
            out = "train" if e.get("split") == "train" else "base"
            if e.get("split") not in ("train", "dev") or (d != "wcxb" and e.get("split") != "dev"):
                continue
            html = open(f"{args.datasets}/{d}/{e['html']}", "rb").read()
            f = features(html, open(f"{args.work}/{out}/{e['id']}.txt").read())
            if e.get("split") == "train":
                train_x.append(f)
                train_y.append(1.0 if kinds.get(e["id"]) in POSITIVE else 0.0)
            else:
                dev.append((e["id"], f))
    prob = fit_logistic(train_x, train_y)

    def run(name, choose):
        out = f"{args.work}/mix-{name}"
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        for i, _ in dev:
            src = "listing" if choose(i) else "base"
            shutil.copyfile(f"{args.work}/{src}/{i}.txt", f"{out}/{i}.txt")
        f1, below = score(args, out, f"{out}.pages.jsonl")
        print(f"| {name} | " + " | ".join(f"{f1[d]:.4f} ({below[d]})" for d in DEV) + f" | {sum(below.values())} |")
        return f1

    print("| choice | " + " | ".join(DEV) + " | pages < 0.5 |\n|---|" + "---|" * (len(DEV) + 1))
    table = {"never": run("never", lambda i: False)}
    run("always", lambda i: True)
    run("oracle kind (wcxb collection, listing)", lambda i: kinds.get(i) in POSITIVE)
    p = dict((i, prob(f)) for i, f in dev)
    for t in THRESHOLDS:
        table[t] = run(f"learned, p > {t}", lambda i, t=t: p[i] > t)
    # Leave one dataset out: each set scored at the choice best on the mean of the other four.
    left_out = {}
    for d in DEV:
        others = [x for x in DEV if x != d]
        best = max(table, key=lambda k: sum(table[k][x] for x in others))
        left_out[d] = (best, table[best][d])
    print("\nleft out: " + ", ".join(f"{d} {c} -> {f:.4f}" for d, (c, f) in left_out.items()))
    mean = sum(f for _, f in left_out.values()) / len(DEV)
    print(f"mean of the left-out folds: {mean:.4f} (never: {sum(table['never'].values()) / len(DEV):.4f})")


if __name__ == "__main__":
    main()
