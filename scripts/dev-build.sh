#!/usr/bin/env bash
# Rebuild the native module in place for an editable install (pip install -e .).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p hetsched-py --quiet
cp target/release/lib_engine.so python/hetsched/_engine.abi3.so
