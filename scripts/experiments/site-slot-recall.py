#!/usr/bin/env python3
"""Issue 30, session 57: can the *place* of a site's article text bring back what a span misses?

site-slots.py asked whether a site's furniture slots could take text out. This asks the other
way round, for recall: a slot (the two innermost enclosing elements with an id or class, digits
folded, as site-slots.py) whose blocks the extractor takes on most of a site's pages is the
site's story slot, so a block in it that the output left out might be story text. Label-free as
a rule (it reads the outputs, not the gold); the gold only says what it would gain. For every
site with 3 or more dev pages, over blocks of 8 or more words whose text does not repeat
(site memory's rule) in slots of 5 or more such blocks on 3 or more pages: the words of the
blocks left out under slots taken at a share of 0.5 / 0.7 / 0.8 / 0.9 or more, split into words
the gold holds (a rule would gain them) and words it does not (a rule would lose them), then
the slots holding most of them at 0.7.

Usage: pipeline eval --manifest target/datasets/big9/manifest.jsonl --split dev --out-dir OUT
       scripts/experiments/site-slot-recall.py --dataset target/datasets/big9 --out OUT
"""
import argparse
import collections
import importlib.util
import pathlib

spec = importlib.util.spec_from_file_location("site_slots", pathlib.Path(__file__).with_name("site-slots.py"))
site_slots = importlib.util.module_from_spec(spec)
spec.loader.exec_module(site_slots)

SHARES = (0.5, 0.7, 0.8, 0.9)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True, help="a dataset folder (manifest.jsonl, html/)")
    ap.add_argument("--out", required=True, help="`pipeline eval --out-dir` of its dev split")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    sites = site_slots.read_sites(args.dataset, args.out)
    words, top = collections.Counter(), collections.Counter()
    for site, pages in sites.items():
        n = len(pages)
        if n < 3:
            continue
        on_pages = collections.Counter()
        for _, blocks, _, _ in pages:
            on_pages.update({site_slots.fold(t) for t, _ in blocks})

        def story(t, s):
            return s and len(t.split()) >= 8 and on_pages[site_slots.fold(t)] < max(3, 0.3 * n)

        total, taken, seen_on = collections.Counter(), collections.Counter(), collections.defaultdict(set)
        for pid, blocks, out, _ in pages:
            for t, s in blocks:
                if story(t, s):
                    total[s] += 1
                    taken[s] += t in out
                    seen_on[s].add(pid)
        for pid, blocks, out, gold in pages:
            for t, s in blocks:
                if not story(t, s) or t in out or total[s] < 5 or len(seen_on[s]) < 3:
                    continue
                share, w = taken[s] / total[s], len(t.split())
                kind = "gold" if t in gold else "not gold"
                for th in SHARES:
                    if share >= th:
                        words[(th, kind)] += w
                if share >= 0.7:
                    top[(site, s[:70], round(share, 2), kind)] += w
    for k in sorted(words):
        print(f"share >= {k[0]}: {k[1]} {words[k]}")
    for k, v in top.most_common(args.top):
        print(v, k)


if __name__ == "__main__":
    main()
