#!/usr/bin/env python3
"""Issue 28, session 24: how much does the extractor lean on English words?

Writes a copy of dev sets in which every ASCII word of the pages' text and of the gold is
replaced by a pseudo-word of the same length and capitals (one consistent mapping, as a
language the model never saw), tags, attributes, scripts, styles, comments and entities
untouched. Scoring both copies with `pipeline eval` shows what the words themselves are
worth; `simple` (which never reads a word) is the control.

Usage: scripts/experiments/foreignize.py [--datasets target/datasets] [--out /tmp/foreign] aeb big9 dragnet wcxb
then:  pipeline eval --manifest /tmp/foreign/aeb/manifest.jsonl … --split dev --site-memory-pages 0
(CleanEval's gold markers would be rewritten too: leave cleaneval out.)
"""
import argparse
import hashlib
import json
import os
import re

CONSONANTS, VOWELS = "bcdfghjklmnprstvz", "aeiou"
WORD = re.compile(r"[A-Za-z]+")
# What is not page text: scripts, styles, comments, tags and character references.
MARKUP = re.compile(r"(<script\b.*?</script\s*>|<style\b.*?</style\s*>|<!--.*?-->|<[^>]*>|&#?\w+;)", re.S | re.I)
_cache = {}


def pseudo(word):
    key = word.lower()
    if key not in _cache:
        h = hashlib.blake2b(key.encode(), digest_size=16).digest()
        _cache[key] = "".join(
            CONSONANTS[h[i % 16] % len(CONSONANTS)] if i % 2 == 0 else VOWELS[h[i % 16] % len(VOWELS)]
            for i in range(len(key))
        )
    s = _cache[key]
    if word.isupper() and len(word) > 1:
        return s.upper()
    return s[0].upper() + s[1:] if word[0].isupper() else s


def text(t):
    return WORD.sub(lambda m: pseudo(m.group(0)), t)


def html(page):
    parts = MARKUP.split(page)
    return "".join(p if i % 2 else text(p) for i, p in enumerate(parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="target/datasets")
    ap.add_argument("--out", default="/tmp/foreign")
    ap.add_argument("sets", nargs="+")
    args = ap.parse_args()
    for ds in args.sets:
        os.makedirs(f"{args.out}/{ds}/html", exist_ok=True)
        with open(f"{args.out}/{ds}/manifest.jsonl", "w") as out:
            for line in open(f"{args.datasets}/{ds}/manifest.jsonl"):
                e = json.loads(line)
                if e.get("split") != "dev":
                    continue
                # Latin-1 round-trips every byte: only ASCII letters change, whatever the charset.
                page = open(f"{args.datasets}/{ds}/{e['html']}", "rb").read().decode("latin-1")
                with open(f"{args.out}/{ds}/{e['html']}", "wb") as f:
                    f.write(html(page).encode("latin-1"))
                for k in ("text", "title"):
                    if e["gold"].get(k):
                        e["gold"][k] = text(e["gold"][k])
                out.write(json.dumps(e) + "\n")


if __name__ == "__main__":
    main()
