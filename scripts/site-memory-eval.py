#!/usr/bin/env python3
"""Site memory's quality rows of README "Site memory" and issue 30, from `pipeline eval`.

Usage: scripts/site-memory-eval.py [--bin target/release/pipeline] [--datasets target/datasets]
       [-- EXTRA EVAL FLAGS...]

Rows (shingle F1 as `pipeline eval` pools it: the harmonic mean of the mean page precision and
the mean page recall), each without site memory (`--site-memory-pages 0`) and with the
defaults (or the extra flags):
- big9 dev, pool = the scored pages: pooled, and per site;
- big9 dev, each year scored with the other three years as the pool: pooled, per site-year;
- dragnet dev, the pages of sites with at least 5 pages in dev + train (the pool): pooled.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from urllib.parse import urlparse


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from manifests import read_manifest, write_manifest  # noqa: E402


def pooled(pages):
    ps = [p["sh_p"] for p in pages if p.get("sh_p") is not None]
    rs = [p["sh_r"] for p in pages if p.get("sh_r") is not None]
    if not ps or not rs:
        return float("nan")
    p, r = sum(ps) / len(ps), sum(rs) / len(rs)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def run_eval(binary, manifest, extra, pool=None, split="dev"):
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as t:
        per_page = t.name
    cmd = [binary, "eval", "--manifest", manifest, "--split", split, "--threads", "2", "--per-page", per_page]
    if pool:
        cmd += ["--site-memory-pool", pool]
    subprocess.run(cmd + extra, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(per_page) as f:
        rows = {r["id"]: r for r in map(json.loads, f)}
    os.unlink(per_page)
    return rows


def site_of(entry):
    if entry.get("site"):
        return entry["site"]
    host = urlparse(entry.get("url") or "").hostname or ""
    return host[4:] if host.startswith("www.") else host or None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/pipeline")
    ap.add_argument("--datasets", default="target/datasets")
    ap.add_argument("extra", nargs="*", help="flags for the 'with' runs (after --)")
    a = ap.parse_args()
    off = ["--site-memory-pages", "0"]
    on = a.extra
    work = tempfile.mkdtemp(prefix="site-memory-eval-")

    big9_dir = os.path.join(a.datasets, "big9")
    big9 = [r for r in read_manifest(os.path.join(big9_dir, "manifest.jsonl")) if r["split"] == "dev"]
    whole = os.path.join(big9_dir, "manifest.jsonl")

    print("## big9 dev, pool = the scored pages")
    res = {k: run_eval(a.bin, whole, flags) for k, flags in (("off", off), ("on", on))}
    big9_res = res
    sites = sorted({r["site"] for r in big9})
    print("| site | without | with |\n|---|---:|---:|")
    for s in sites:
        ids = [r["id"] for r in big9 if r["site"] == s]
        f = [pooled([res[k][i] for i in ids if i in res[k]]) for k in ("off", "on")]
        print(f"| {s} | {f[0]:.4f} | {f[1]:.4f} |")
    print(f"| **pooled** | {pooled(res['off'].values()):.4f} | {pooled(res['on'].values()):.4f} |\n")

    print("## big9 dev, each year scored, pool = the other three years")
    years = sorted({r["year"] for r in big9})
    held = {"off": {}, "on": {}}
    for y in years:
        scored = os.path.join(work, f"big9-{y}.jsonl")
        pool = os.path.join(work, f"big9-not-{y}.jsonl")
        write_manifest([r for r in big9 if r["year"] == y], big9_dir, scored)
        write_manifest([r for r in big9 if r["year"] != y], big9_dir, pool)
        for k, flags in (("off", off), ("on", on)):
            held[k].update(run_eval(a.bin, scored, flags, pool=pool))
    print("| site-year | without | with | change |\n|---|---:|---:|---:|")
    worst = (0.0, "")
    for s in sites:
        for y in years:
            ids = [r["id"] for r in big9 if r["site"] == s and r["year"] == y]
            f = [pooled([held[k][i] for i in ids if i in held[k]]) for k in ("off", "on")]
            worst = min(worst, (f[1] - f[0], f"{s} {y}"))
            print(f"| {s} {y} | {f[0]:.4f} | {f[1]:.4f} | {f[1] - f[0]:+.4f} |")
    print(f"| **pooled** | {pooled(held['off'].values()):.4f} | {pooled(held['on'].values()):.4f} | |")
    print(f"worst site-year: {worst[1]} {worst[0]:+.4f}\n")

    print("## dragnet dev, sites with at least 5 pages in dev + train (the pool)")
    dn_dir = os.path.join(a.datasets, "dragnet")
    dn = read_manifest(os.path.join(dn_dir, "manifest.jsonl"))
    counts = collections.Counter(site_of(r) for r in dn)
    dev = [r["id"] for r in dn if r["split"] == "dev" and site_of(r) and counts[site_of(r)] >= 5]
    res = {k: run_eval(a.bin, os.path.join(dn_dir, "manifest.jsonl"), flags) for k, flags in (("off", off), ("on", on))}
    f = [pooled([res[k][i] for i in dev if i in res[k]]) for k in ("off", "on")]
    by_site = collections.defaultdict(list)
    for r in dn:
        if r["id"] in set(dev):
            by_site[site_of(r)].append(r["id"])
    up = down = 0
    worst = (0.0, "")
    for s, ids in by_site.items():
        d = pooled([res["on"][i] for i in ids]) - pooled([res["off"][i] for i in ids])
        up += d > 0.0005
        down += d < -0.0005
        worst = min(worst, (d, s))
    print(f"{len(dev)} pages of {len(by_site)} sites: {f[0]:.4f} -> {f[1]:.4f} "
          f"({up} sites up, {down} down, worst {worst[1]} {worst[0]:+.4f})")
    print(f"dragnet dev, all pages: {pooled(res['off'].values()):.4f} -> {pooled(res['on'].values()):.4f}")
    both = [pooled(list(big9_res[k].values()) + [res[k][i] for i in dev if i in res[k]]) for k in ("off", "on")]
    print(f"big9 dev (pool = scored) and those dragnet pages together: {both[0]:.4f} -> {both[1]:.4f}")


if __name__ == "__main__":
    sys.exit(main())
