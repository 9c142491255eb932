#!/usr/bin/env python3
"""How much of the gap is the headline? Prepends the page's headline to each prediction that
does not already hold it, and writes the result for `../shared/peers/score.py`.

Usage: scripts/experiments/headline-oracle.py --pred DIR --out DIR [--mode title|any] MANIFEST...

DIR holds `pipeline eval --out-dir DIR`'s outputs (`<id>.txt`) for pages of the manifests; each
page's HTML is the manifest row's `html`. The headline is the first `<h1>` of two words or more
(Python's html.parser, an approximation of the extractor's lexer); with `--mode title` (the
default) only one of whose words at least half are in the `<title>`. It is prepended, as its
own paragraph, when its words do not already appear in a row in the prediction.

Session 55 measured it over the five dev sets (models/README.md, "Adapted models"): the dev
sets' golds disagree on whether the headline is article text, so this is a measure of the
datasets' conventions, not a rule for the extractor.
"""
import argparse
import html.parser
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from manifests import read_manifest  # noqa: E402

WORD = re.compile(r"\w+")


class Headlines(html.parser.HTMLParser):
    """The page's `<h1>` texts and its `<title>`, outside scripts and styles."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.h1, self.cur, self.title, self.in_title, self.skip = [], None, "", False, 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag == "h1":
            self.cur = []
        elif tag == "title":
            self.in_title = True

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1
        elif tag == "h1" and self.cur is not None:
            self.h1.append(" ".join("".join(self.cur).split()))
            self.cur = None
        elif tag == "title":
            self.in_title = False

    def handle_data(self, data):
        if self.skip:
            return
        if self.cur is not None:
            self.cur.append(data)
        if self.in_title:
            self.title += data


def words(text):
    return WORD.findall(text.lower())


def headline(raw, mode):
    p = Headlines()
    try:
        p.feed(raw)
    except Exception:  # html.parser gives up on some malformed markup; no headline then
        return None
    title = set(words(p.title))
    for h in p.h1:
        hw = words(h)
        if len(hw) < 2:
            continue
        if mode == "title" and (not title or sum(w in title for w in hw) / len(hw) < 0.5):
            continue
        return h
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pred", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", choices=("title", "any"), default="title")
    ap.add_argument("manifests", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    added = 0
    for manifest in a.manifests:
        base = os.path.dirname(manifest)
        for r in read_manifest(manifest):
            pred = os.path.join(a.pred, r["id"] + ".txt")
            if not os.path.exists(pred):
                continue
            text = open(pred, encoding="utf-8").read()
            raw = open(os.path.join(base, r["html"]), "rb").read().decode("utf-8", "replace")
            head = headline(raw, a.mode)
            if head and " ".join(words(head)) not in " ".join(words(text)):
                text = head + "\n\n" + text
                added += 1
            open(os.path.join(a.out, r["id"] + ".txt"), "w", encoding="utf-8").write(text)
    print(f"headline prepended to {added} predictions", file=sys.stderr)


if __name__ == "__main__":
    main()
