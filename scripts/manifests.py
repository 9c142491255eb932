"""Manifest helpers the evaluation scripts share: read a dataset manifest, and write a subset
of its rows as a manifest of its own (page paths made absolute, so it can live anywhere)."""
import json
import os


def read_manifest(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def write_manifest(rows, base, path):
    with open(path, "w") as f:
        for r in rows:
            r = dict(r)
            r["html"] = os.path.abspath(os.path.join(base, r["html"]))
            f.write(json.dumps(r) + "\n")
