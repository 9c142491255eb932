#!/usr/bin/env python3
"""Which enclosing elements hold the words our output has and the gold has not?

Usage: scripts/experiments/false-words-by-class.py --split train --pred DIR MANIFEST...
       [--names sr-only,signature,...] [--missed]

DIR holds `pipeline eval --out-dir DIR`'s outputs (`<id>.txt`) for the manifests' pages of the
split. Each page's HTML is parsed (Python's html.parser, an approximation of the extractor's
lexer); every text node of three words or more that our output holds is counted as false (the
gold does not hold it) or true, once for each id/class word and tag name open around it.
Printed: the id/class words and tags with most false words and at least four times as many
false as true words, or, with --names, the false and true words under values that contain each
name (the extractor's furniture names match anywhere in an id/class value). Session 36 chose
`sr-only`, `visually-hidden`, `signature` and `<footer>` from this count on the train splits of
wcxb and dragnet, and checked them on the dev sets (models/README.md, "Span chooser").

With --missed the other way round: text nodes the gold holds, counted as missed (our output does
not hold them) or found, per id/class word and tag: where the extractor loses article text (a
furniture name that also names content, a container the span stops short of).
"""
import argparse
import collections
import html.parser
import json
import os
import re

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}


def norm(text):
    return " ".join(re.findall(r"\w+", text.lower()))


class Nodes(html.parser.HTMLParser):
    """Text nodes with the id/class words and tag names open around them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.nodes, self.skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        marks = {"<" + tag}
        for k, v in attrs:
            if k in ("class", "id") and v:
                marks.update(w.lower() for w in v.split())
        self.stack.append((tag, frozenset(marks)))
        self.skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, max(-1, len(self.stack) - 40), -1):
            if self.stack[i][0] == tag:
                if tag in ("script", "style"):
                    self.skip = max(0, self.skip - 1)
                del self.stack[i:]
                break

    def handle_data(self, data):
        n = norm(data)
        if not self.skip and len(n.split()) >= 3:
            self.nodes.append((n, frozenset().union(*(m for _, m in self.stack))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--split", required=True)
    ap.add_argument("--pred", required=True)
    ap.add_argument("--names", default="")
    ap.add_argument("--missed", action="store_true")
    ap.add_argument("manifests", nargs="+")
    a = ap.parse_args()
    false, true, pages = collections.Counter(), collections.Counter(), collections.defaultdict(set)
    for manifest in a.manifests:
        base = os.path.dirname(manifest)
        for line in open(manifest, encoding="utf-8"):
            r = json.loads(line)
            pred = os.path.join(a.pred, r["id"] + ".txt")
            if r["split"] != a.split or not os.path.exists(pred):
                continue
            out = " " + norm(open(pred, encoding="utf-8").read()) + " "
            gold = " " + norm(r["gold"]["text"]) + " "
            p = Nodes()
            p.feed(open(os.path.join(base, r["html"]), "rb").read().decode("utf-8", "replace"))
            for n, marks in p.nodes:
                # Counted: nodes of our output (false: not in the gold), or with --missed nodes
                # of the gold (false: not in our output).
                have, want = (gold, out) if a.missed else (out, gold)
                if f" {n} " not in have:
                    continue
                words, kept = len(n.split()), f" {n} " in want
                for m in marks:
                    if kept:
                        true[m] += words
                    else:
                        false[m] += words
                        pages[m].add(r["id"])
    if a.names:
        print("name false true pages")
        for name in a.names.split(","):
            f = sum(v for k, v in false.items() if name in k)
            t = sum(v for k, v in true.items() if name in k)
            print(name, f, t, len(set().union(*(v for k, v in pages.items() if name in k))))
        return
    print("mark false true pages")
    rows = [(m, f, true[m], len(pages[m])) for m, f in false.items() if f >= 4 * true[m] and len(pages[m]) >= 4]
    for row in sorted(rows, key=lambda r: -r[1])[:60]:
        print(*row)


if __name__ == "__main__":
    main()
