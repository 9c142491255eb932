#!/usr/bin/env python3
"""Publication-date accuracy per fold of a k-fold split of a dates manifest by site.

The date rules have no fitted parameters, so a held-out fold's figure is the fold's own
accuracy; what the split shows is how much the figure moves from one group of sites to the
next. Pages of one host (less `www.`) stay in one fold (CRC32 of the host, modulo k).

    target/release/pipeline eval --manifest target/metadata/dates/manifest.jsonl \
        --per-page /tmp/dates.jsonl
    python3 scripts/dates-folds.py target/metadata/dates/manifest.jsonl /tmp/dates.jsonl
"""
import argparse
import json
import urllib.parse
import zlib


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest")
    ap.add_argument("per_page", help="the --per-page output of `pipeline eval` on the manifest")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    hosts = {}
    with open(args.manifest, encoding="utf-8") as f:
        for line in f:
            e = json.loads(line)
            host = urllib.parse.urlsplit(e.get("url") or "").hostname or ""
            hosts[e["id"]] = host.removeprefix("www.")
    right = [0] * args.folds
    pages = [0] * args.folds
    with open(args.per_page, encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            date = (p.get("meta") or {}).get("date")
            if date is None:
                continue
            k = zlib.crc32(hosts.get(p["id"], "").encode()) % args.folds
            gold, predicted = date[0], date[1]
            right[k] += gold == predicted
            pages[k] += 1
    accuracy = [r / n if n else 0.0 for r, n in zip(right, pages)]
    for k, (a, n) in enumerate(zip(accuracy, pages)):
        print(f"fold {k}: accuracy {a:.3f} ({n} pages)")
    print(f"mean of the folds: {sum(accuracy) / args.folds:.3f}; pooled {sum(right) / max(1, sum(pages)):.3f}")


if __name__ == "__main__":
    main()
