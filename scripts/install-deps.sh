#!/usr/bin/env bash
# Everything article-pipeline needs beyond the Rust toolchain. Today: nothing; the crates
# build with cargo alone (rusqlite bundles SQLite, lol_html and zstd are pure Rust/C built
# by cargo). Kept so the README can name one script, and so new system needs land here.
set -euo pipefail
command -v cargo >/dev/null || { echo "install Rust first: https://rustup.rs" >&2; exit 2; }
echo "install-deps: nothing to install"
