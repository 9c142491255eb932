#!/usr/bin/env bash
# Everything article-pipeline needs beyond the Rust toolchain: the Rust crates build with cargo
# alone (rusqlite bundles SQLite, lol_html and zstd are built by cargo). The Python package
# and its tests need a virtualenv (.venv) with maturin, pytest, datatrove with its WARC
# reader's dependencies, moto's S3 server (read_warc("s3://…") against 127.0.0.1), and DuckDB,
# pyarrow and Hugging Face datasets (they read the Parquet parts); libmagic comes from Debian. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "install Rust first: https://rustup.rs" >&2; exit 2; }

python=${PYTHON:-python3}
command -v "$python" >/dev/null || { echo "install-deps: $python not found (the Python package needs Python >= 3.10)" >&2; exit 2; }

# python-magic (datatrove's WarcReader) loads libmagic at run time.
if ! ldconfig -p 2>/dev/null | grep -q 'libmagic\.so\.1'; then
  if command -v apt-get >/dev/null; then
    (apt-get install -y -q libmagic1 >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q libmagic1 >/dev/null; })
  else
    echo "install-deps: install libmagic (libmagic1) for datatrove's WarcReader" >&2
  fi
fi

packages=(
  "maturin>=1.7,<2" "pytest>=7" "datatrove==0.10.1" "warcio>=1.7" "faust-cchardet" "python-magic"
  "orjson" "zstandard" "moto[server]>=5" "duckdb" "pyarrow" "datasets"
)
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
if ! .venv/bin/python -c "import maturin, pytest, datatrove, warcio, cchardet, magic, orjson, zstandard, moto.server, boto3, duckdb, pyarrow, datasets" 2>/dev/null; then
  .venv/bin/python -m pip install -q --disable-pip-version-check "${packages[@]}"
fi
echo "install-deps: .venv ready ($(.venv/bin/python --version); maturin $(.venv/bin/maturin --version | cut -d' ' -f2))"
