#!/usr/bin/env python3
"""How much can site memory still gain? The false text that repeats across a site's outputs.

Usage: scripts/experiments/site-repeated-errors.py --pred DIR [--min-pages 3] MANIFEST...

DIR holds `pipeline eval --out-dir DIR`'s outputs (`<id>.txt`) for the manifests' pages. Pages
are grouped by site (the manifest's `site`, else the URL's host). A line of an output that
appears in the outputs of at least --min-pages pages of its site is "repeated": what a perfect
site memory could still remove. Printed per site and pooled: the shingle F1 of the outputs as
they are, and with every repeated line removed where that raises the page's F1 (an oracle that
removes only the repeated lines the gold lacks), and the false shingles on repeated lines
against all false shingles. The scoring is score.py's (../shared/peers), so the figures are
eval's.

Session 42 ran it on big9's dev pages (`pipeline eval --manifest …big9… --split dev --out-dir
DIR`). Without site memory (`--site-memory-pages 0`): F1 0.9684, the oracle 0.9707 (+0.0023);
561 of 5,139 false shingles sit on lines repeated on three pages or more of the site. With site
memory (the defaults): 0.9686, the oracle 0.9695 (+0.0010, +0.0014 counting lines on two
pages). Removing repeated furniture cannot give big9 the +0.005 of issue 30 even perfectly: its
remaining errors are each page's own lines (captions, bylines, datelines, the story's edges)
and missed text.
"""
import argparse
import collections
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "shared", "peers"))
import score  # noqa: E402

# A page's site as site memory's evaluation keys it (the manifest's `site`, else the URL's host).
_spec = importlib.util.spec_from_file_location("site_memory_eval", os.path.join(HERE, "..", "site-memory-eval.py"))
_sme = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sme)
site_of = _sme.site_of


def f1(gold_tokens, text):
    tp, fp, fn = score.aeb_page(gold_tokens, score.aeb_tokens(text))
    return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pred", required=True)
    ap.add_argument("--min-pages", type=int, default=3)
    ap.add_argument("--split", default="dev")
    ap.add_argument("manifests", nargs="+")
    a = ap.parse_args()
    pages = []
    for m in a.manifests:
        for line in open(m, encoding="utf-8"):
            rec = json.loads(line)
            if rec.get("split", a.split) != a.split:
                continue
            path = os.path.join(a.pred, rec["id"] + ".txt")
            text = open(path, encoding="utf-8", errors="replace").read() if os.path.exists(path) else ""
            gold = score.gold_plain_text((rec.get("gold") or {}).get("text"))
            pages.append((site_of(rec) or "?", rec["id"], score.aeb_tokens(gold), text))
    lines = collections.defaultdict(collections.Counter)
    for site, _, _, text in pages:
        for line in {x.strip() for x in text.split("\n") if x.strip()}:
            lines[site][line] += 1
    rows = collections.defaultdict(lambda: [0, 0.0, 0.0, 0, 0])
    for site, _, gold, text in pages:
        repeated = lambda x: lines[site][x.strip()] >= a.min_pages  # noqa: E731
        kept = "\n".join(x for x in text.split("\n") if not (x.strip() and repeated(x)))
        now, without = f1(gold, text), f1(gold, kept)
        g = score.shingles(gold)
        false_rep = false_all = 0
        for x in text.split("\n"):
            sh = score.shingles(score.aeb_tokens(x))
            false = sum((sh - g).values())
            false_all += false
            false_rep += false if x.strip() and repeated(x) else 0
        r = rows[site]
        r[0] += 1
        r[1] += now
        r[2] += max(now, without)
        r[3] += false_rep
        r[4] += false_all
    total = [0, 0.0, 0.0, 0, 0]
    print(f"{'site':<28} {'pages':>5} {'F1':>7} {'oracle':>7} {'gain':>7} {'false on repeated lines':>24}")
    for site, r in sorted(rows.items()):
        total = [t + x for t, x in zip(total, r)]
        n = r[0]
        print(f"{site:<28} {n:>5} {r[1] / n:7.4f} {r[2] / n:7.4f} {(r[2] - r[1]) / n:+7.4f} {r[3]:>10} of {r[4]:>10}")
    n = max(total[0], 1)
    print(
        f"{'pooled':<28} {total[0]:>5} {total[1] / n:7.4f} {total[2] / n:7.4f} "
        f"{(total[2] - total[1]) / n:+7.4f} {total[3]:>10} of {total[4]:>10}"
    )


if __name__ == "__main__":
    main()
