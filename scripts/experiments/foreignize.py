#!/usr/bin/env python3
"""Issue 28, session 24: how much does the extractor lean on English words?

Writes a copy of dev sets in which every ASCII word of the pages' text and of the gold is
replaced by a pseudo-word of the same length and capitals (one consistent mapping, as a
language the model never saw), tags, attributes, scripts, styles, comments and entities
untouched. Scoring both copies with `pipeline eval` shows what the words themselves are
worth; `simple` (which never reads a word) is the control.

`--rot13` rotates every ASCII letter instead (session 37, models/README.md): the same
question with a mapping anyone can undo to read the output.

Usage: scripts/experiments/foreignize.py [--rot13] [--datasets target/datasets] [--out /tmp/foreign] aeb big9 cleaneval dragnet wcxb
then:  pipeline eval --manifest /tmp/foreign/aeb/manifest.jsonl … --split dev
CleanEval's gold keeps its format as it is (the `URL:` line and the `<p>` / `<h>` / `<l>`
markers, which the scorer drops): session 37's first rot13 copies rotated them too, and every
cleaneval page lost words it had right (session 38).
"""
import argparse
import hashlib
import json
import os
import codecs
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


# CleanEval's format in a gold text: its first line and the segment markers.
CLEANEVAL_FORMAT = re.compile(r"(\A\s*URL:[^\n]*|<[phlPHL]>)")


def rot13(word):
    return codecs.encode(word, "rot13")


def text(t, word):
    return WORD.sub(lambda m: word(m.group(0)), t)


def outside(pattern, t, word):
    """`t` with the words outside `pattern`'s matches rewritten by `word`."""
    parts = pattern.split(t)
    return "".join(p if i % 2 else text(p, word) for i, p in enumerate(parts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="target/datasets")
    ap.add_argument("--out", default="/tmp/foreign")
    ap.add_argument("--rot13", action="store_true", help="rotate letters instead of pseudo-words")
    ap.add_argument("sets", nargs="+")
    args = ap.parse_args()
    word = rot13 if args.rot13 else pseudo
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
                    f.write(outside(MARKUP, page, word).encode("latin-1"))
                for k in ("text", "title"):
                    if e["gold"].get(k):
                        e["gold"][k] = outside(CLEANEVAL_FORMAT, e["gold"][k], word)
                out.write(json.dumps(e) + "\n")


if __name__ == "__main__":
    main()
