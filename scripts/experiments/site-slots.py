#!/usr/bin/env python3
"""Issue 30, session 35: can the *place* of a site's furniture find what its repeats miss?

Site memory marks a block as furniture when its text repeats on a share of a host's pages.
Teaser rails whose titles change, captions and galleries do not repeat as text, but their
containers repeat as markup. This measures, without changing the extractor, how many words of
an output a rule of that kind could take out: for every page of a dataset's dev split, the
text blocks (words between block-level tags) with a signature (the two innermost enclosing
elements that carry an id or class, digits folded); per site, the share of each signature's
blocks whose text repeats on at least 3 pages and 30 % of the site's pages (site memory's
rule); then, for the blocks of the extractor's output that do not repeat, the words under
signatures whose share passes 0.3 / 0.5 / 0.7 (and that hold 5 blocks or more), split into
words the gold holds (a rule would lose them) and words it does not (a rule would gain them).
`--top N` lists instead the signatures holding most of the output's words outside the gold.

Usage: pipeline eval --manifest target/datasets/big9/manifest.jsonl --split dev --out-dir OUT
       scripts/experiments/site-slots.py --dataset target/datasets/big9 --out OUT [--top 30]
"""
import argparse
import collections
import json
import re
from html.parser import HTMLParser

BLOCK = {"p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "ul", "ol",
         "table", "tr", "br", "header", "footer", "nav", "aside", "main", "blockquote", "figure", "figcaption",
         "dd", "dt", "dl", "form", "pre", "hr"}
VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "param", "source", "track", "wbr"}
SKIP = {"script", "style", "noscript", "template"}


def fold(text):
    return re.sub(r"\d+", "0", " ".join(re.findall(r"\w+", text.lower())))


class Blocks(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.buf, self.blocks, self.skip = [], [], [], 0

    def signature(self):
        out = []
        for tag, names in reversed(self.stack):
            if names:
                out.append(tag + "." + names)
            if len(out) == 2:
                break
        return "|".join(out)

    def flush(self):
        text = " ".join("".join(self.buf).split())
        if re.search(r"\w", text):
            self.blocks.append((text, self.signature()))
        self.buf = []

    def handle_starttag(self, tag, attrs):
        if tag in SKIP:
            self.skip += 1
            return
        if tag in BLOCK:
            self.flush()
        if tag in VOID:
            return
        a = dict(attrs)
        names = re.sub(r"\d+", "0", ((a.get("id") or "") + " " + (a.get("class") or "")).strip())
        self.stack.append((tag, " ".join(sorted(names.split()))))

    def handle_endtag(self, tag):
        if tag in SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if tag in BLOCK:
            self.flush()
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if not self.skip:
            self.buf.append(data)


def read_sites(dataset, out_dir):
    """A dataset's dev pages by site: (id, blocks, output text, gold text) each."""
    sites = collections.defaultdict(list)
    for line in open(f"{dataset}/manifest.jsonl"):
        r = json.loads(line)
        if r["split"] != "dev":
            continue
        parser = Blocks()
        parser.feed(open(f"{dataset}/{r['html']}", "rb").read().decode("utf-8", "replace"))
        parser.close()
        parser.flush()
        try:
            out = open(f"{out_dir}/{r['id']}.txt").read()
        except OSError:
            out = ""
        sites[r.get("site") or r.get("url")].append(
            (r["id"], parser.blocks, " ".join(out.split()), " ".join(r["gold"]["text"].split())))
    return sites


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dataset", required=True, help="a dataset folder (manifest.jsonl, html/)")
    ap.add_argument("--out", required=True, help="`pipeline eval --out-dir` of its dev split")
    ap.add_argument("--top", type=int, default=0)
    args = ap.parse_args()
    sites = {site: [p[1:] for p in pages] for site, pages in read_sites(args.dataset, args.out).items()}
    words = collections.Counter()
    for site, pages in sites.items():
        n = len(pages)
        on_pages = collections.Counter()
        for blocks, _, _ in pages:
            on_pages.update({fold(t) for t, _ in blocks})

        def repeats(t):
            return on_pages[fold(t)] >= max(3, 0.3 * n)

        total, repeated = collections.Counter(), collections.Counter()
        for blocks, _, _ in pages:
            for t, s in blocks:
                total[s] += 1
                repeated[s] += repeats(t)
        for blocks, out, gold in pages:
            for t, s in blocks:
                if repeats(t) or not s or t not in out:
                    continue
                w = len(t.split())
                kind = "gold" if t in gold else "not gold"
                words[("output, not repeated", kind)] += w
                share = repeated[s] / total[s]
                if args.top and kind == "not gold":
                    words[(site, s[:80], round(share, 2), total[s])] += w
                for th in (0.3, 0.5, 0.7):
                    if share >= th and total[s] >= 5:
                        words[(f"signature share >= {th}", kind)] += w
    if args.top:
        for k, v in words.most_common(args.top + 2):
            print(v, k)
    else:
        for k, v in sorted(words.items()):
            print(k, v)


if __name__ == "__main__":
    main()
