#!/usr/bin/env bash
# Rebuild the native module with profile-guided optimisation, in place, for an editable
# install (pip install -e .), as pydantic-core's `make build-pgo` does: build the engine
# instrumented, run scripts/pgo_train.py with it, merge the counts with LLVM's
# llvm-profdata (rustup's llvm-tools component), and build again with them. Results are
# byte-identical to the plain build's (optimisation does not change the arithmetic; CI
# checks the golden set against this build); hackbench runs about 18 % sooner and the
# reference minute about 16 % (docs/speed.md, "A profile-guided build").
#
#   scripts/build-pgo.sh                  # the editable install's module, in place
#   scripts/build-pgo.sh --profile FILE   # only write the merged profile, for a wheel:
#       RUSTFLAGS="-Cprofile-use=/abs/path/FILE" pip install .
#
# The flags go through RUSTFLAGS, added to the caller's; Cargo then ignores a config's
# build.rustflags, and a CARGO_ENCODED_RUSTFLAGS in the environment would override them
# both, so that one is refused. About two minutes on two cores (two release builds and
# 20 s of training). Exit status 3: no llvm-profdata for this toolchain (.ci/run then
# skips its check); 2: bad usage.
set -euo pipefail

profile_out=""
if [ $# -gt 0 ]; then
  if [ "$1" = "--profile" ] && [ $# -eq 2 ]; then
    case "$2" in /*) profile_out="$2" ;; *) profile_out="$PWD/$2" ;; esac
  else
    echo "usage: scripts/build-pgo.sh [--profile FILE]" >&2
    exit 2
  fi
fi
if [ -n "${CARGO_ENCODED_RUSTFLAGS:-}" ]; then
  echo "build-pgo: CARGO_ENCODED_RUSTFLAGS is set and would replace the profile flags; unset it" >&2
  exit 2
fi
cd "$(dirname "$0")/.."

host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
  rustup component add llvm-tools >/dev/null 2>&1 || true
fi
if [ ! -x "$profdata" ]; then
  echo "build-pgo: $profdata: not found; it comes with 'rustup component add llvm-tools'" >&2
  exit 3
fi

so=python/hetsched/_engine.abi3.so
work=$(mktemp -d)
# a module replaced under a running process is renamed over, never rewritten in place
install_module() { cp "$1" "$so.new" && mv -f "$so.new" "$so"; }
# whatever stops the script, the module the install had is put back, unless the
# profile-guided one is in place
[ -f "$so" ] && cp "$so" "$work/before.so"
done_ok=0
restore() {
  if [ "$done_ok" -ne 1 ] && [ -f "$work/before.so" ]; then install_module "$work/before.so"; fi
  rm -rf "$work"
}
trap restore EXIT

flags="${RUSTFLAGS:-}"
RUSTFLAGS="$flags -Cprofile-generate=$work/raw" \
  cargo build --release -p hetsched-py --quiet --target-dir target/pgo-generate
install_module target/pgo-generate/release/lib_engine.so
# the source tree first on the path, so that a wheel installed beside it is not the one trained
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 scripts/pgo_train.py
"$profdata" merge -o "$work/merged.profdata" "$work/raw"

if [ -n "$profile_out" ]; then
  cp "$work/merged.profdata" "$profile_out"
  echo "build-pgo: wrote $profile_out"
  exit 0  # the trap puts the install's module back
fi
RUSTFLAGS="$flags -Cprofile-use=$work/merged.profdata" \
  cargo build --release -p hetsched-py --quiet --target-dir target/pgo-use
install_module target/pgo-use/release/lib_engine.so
# the module says how it was built (crates/hetsched-py/build.rs); `hetsched reproduce` reads it
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 -c \
  'import sys; from hetsched import sim; sys.exit(0 if sim.PROFILE_GUIDED else "build-pgo: the module does not report PROFILE_GUIDED")'
done_ok=1
echo "build-pgo: $so is the profile-guided build"
