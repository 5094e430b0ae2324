#!/usr/bin/env bash
# Rebuild the native module with profile-guided optimisation, in place, for an editable
# install (pip install -e .), as pydantic-core's `make build-pgo` does: build the engine
# instrumented, run scripts/pgo_train.py with it, merge the counts with LLVM's
# llvm-profdata (rustup's llvm-tools component), and build again with them. Results are
# byte-identical to the plain build's (optimisation does not change the arithmetic; CI
# checks the golden set against this build); the engine is about 20 % faster on hackbench
# and 15 % on the reference run (docs/speed.md, "A profile-guided build").
#
#   scripts/build-pgo.sh                  # the editable install's module, in place
#   scripts/build-pgo.sh --profile FILE   # only write the merged profile, for a wheel:
#       RUSTFLAGS="-Cprofile-use=$PWD/FILE" pip install .
#
# Takes about three minutes on two cores (two release builds and a minute of training).
set -euo pipefail
cd "$(dirname "$0")/.."

profile_out=""
if [ $# -gt 0 ]; then
  if [ "$1" = "--profile" ] && [ $# -eq 2 ]; then
    profile_out="$2"
  else
    echo "usage: scripts/build-pgo.sh [--profile FILE]" >&2
    exit 2
  fi
fi

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
  rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  echo "build-pgo: $profdata: not found; it comes with 'rustup component add llvm-tools'" >&2
  exit 2
fi

so=python/hetsched/_engine.abi3.so
work=$(mktemp -d)
# the in-place module is the plain build again if anything below fails
cp_plain() { cargo build --release -p hetsched-py --quiet && cp target/release/lib_engine.so "$so"; }
trap 'status=$?; rm -rf "$work"; if [ $status -ne 0 ]; then cp_plain; fi' EXIT

flags="${RUSTFLAGS:-}"
RUSTFLAGS="$flags -Cprofile-generate=$work/raw" \
  cargo build --release -p hetsched-py --quiet --target-dir target/pgo-generate
cp target/pgo-generate/release/lib_engine.so "$so"
# the source tree first on the path, so that a wheel installed beside it is not the one trained
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 scripts/pgo_train.py
"$profdata" merge -o "$work/merged.profdata" "$work/raw"

if [ -n "$profile_out" ]; then
  cp "$work/merged.profdata" "$profile_out"
  cp_plain
  echo "build-pgo: wrote $profile_out"
  exit 0
fi
RUSTFLAGS="$flags -Cprofile-use=$work/merged.profdata" \
  cargo build --release -p hetsched-py --quiet --target-dir target/pgo-use
cp target/pgo-use/release/lib_engine.so "$so"
# the module says how it was built (crates/hetsched-py/build.rs); `hetsched reproduce` reads it
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 -c \
  'import sys; from hetsched import _engine; sys.exit(0 if _engine.PROFILE_GUIDED else "build-pgo: the module does not report PROFILE_GUIDED")'
echo "build-pgo: $so is the profile-guided build"
