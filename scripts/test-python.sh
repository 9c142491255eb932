#!/usr/bin/env bash
# The Python suite: builds the extension (debug profile) and runs pytest on python/tests against
# the package in python/. Needs `bash scripts/install-deps.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/maturin ] || { echo "test-python: run bash scripts/install-deps.sh first" >&2; exit 2; }
export VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH"
# The extension and the CLI the tests compare with, built by cargo in the feature resolution of
# `cargo test` (`--tests`: dev-dependencies turn features of shared crates on, syn's and
# serde's among them), so after `cargo test` only the Python crate compiles. `maturin develop`
# resolves the Python crate alone and rebuilt 82 dependencies and the library (326 s of a
# CI run); `pip install ./python` or `maturin build --release` is how a user installs it.
cargo build --quiet --workspace --lib --bins --tests
target=$(cargo metadata --format-version 1 --no-deps | python -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
# What `maturin develop` does for a mixed project: the module beside the Python sources
# (git-ignored), which `python -m pytest` from python/ imports.
lib="$target/debug/lib_native.so"
[ -f "$lib" ] || lib="$target/debug/lib_native.dylib"   # macOS
cp "$lib" python/article_pipeline/_native.abi3.so
set +e
(cd python && python -m pytest -q tests "$@")
rc=$?
set -e
# pytest exits 5 when a selection holds no test: nothing failed, but nothing ran either.
if [ "$rc" -eq 5 ]; then echo "test-python: no test selected"; exit 0; fi
exit "$rc"
