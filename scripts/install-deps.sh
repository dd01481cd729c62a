#!/usr/bin/env bash
# Installs what apiary needs to build, test and run on Debian 12 (clang, its sanitizer and
# libFuzzer runtimes and llvm-symbolizer are for the fuzz targets; clang-format and
# clang-tidy for scripts/lint; chromium for the test of scripts/report-html's pages; perf for
# `apiary run --profile`; zstd for the block log test's check of its frames; ccache for the builds of other commits that scripts/multirun --base
# and scripts/bisect make; PostgreSQL for the test of scripts/history's server path), then
# builds the Python venv for scripts/, installs inferno's flame graph tools into it, and the
# Node packages of the conformance test. Safe to run again: it installs only what is missing
# and rebuilds the venv only when scripts/requirements.lock changes.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
  build-essential cmake ninja-build pkg-config git
  libboost1.81-dev libboost-json1.81-dev
  libbenchmark-dev libgtest-dev libspdlog-dev libcli11-dev libtomlplusplus-dev
  libsecp256k1-dev libssl-dev libxxhash-dev libzstd-dev zstd
  python3 python3-venv nodejs npm valgrind linux-perf
  clang libclang-rt-14-dev llvm clang-format clang-tidy
  chromium ccache postgresql
)

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  sudo_cmd=(sudo)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# node and npm may come from elsewhere than Debian; a working one is enough.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
  filtered=()
  for p in "${missing[@]}"; do
    case "$p" in nodejs|npm) ;; *) filtered+=("$p") ;; esac
  done
  missing=("${filtered[@]}")
fi
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: Debian packages present"
fi

# Python venv for scripts/, rebuilt only when the lock file changes. The lock pins every
# package, the ones the direct dependencies (scripts/requirements.in) pull in too, to an exact
# version and its hashes; pip refuses anything else.
venv="$root/.venv"
lock="$root/scripts/requirements.lock"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "install-deps: building the Python venv"
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --require-hashes --no-deps -r "$lock"
  echo "$want" >"$stamp"
else
  echo "install-deps: Python venv up to date"
fi

# inferno's flame graph tools for `apiary run --profile` (inferno-collapse-perf,
# inferno-flamegraph), from crates.io with cargo, into the venv's bin/: apiary looks for them
# on PATH, then there (docs/profile.md). One pinned version; 0.12.8 needs rustc 1.71 or later
# (rustup's, or Debian 12's cargo-web, which this installs when there is no cargo). With an
# older cargo (Debian's own cargo package is rustc 1.63) it takes 0.11.14, the last release
# its authors built with rustc 1.59. The pinned version found in the venv, or in cargo's
# own bin/ (linked from the venv), is not installed again.
inferno_version=0.12.8
inferno_fallback=0.11.14
cargo_home=${CARGO_HOME:-$HOME/.cargo}
has_inferno() {  # has_inferno ROOT VERSION: cargo installed VERSION's programs under ROOT
  grep -q "^\"inferno $2 " "$1/.crates.toml" 2>/dev/null &&
    [ -x "$1/bin/inferno-collapse-perf" ] && [ -x "$1/bin/inferno-flamegraph" ]
}
cargo=$(command -v cargo || true)
[ -z "$cargo" ] && [ -x "$cargo_home/bin/cargo" ] && cargo=$cargo_home/bin/cargo
want=$inferno_version
if [ -n "$cargo" ]; then
  rustc=$(dirname "$cargo")/rustc
  [ -x "$rustc" ] || rustc=rustc
  rust_minor=$("$rustc" --version | sed -n 's/^rustc 1\.\([0-9]*\).*/\1/p')
  if [ -n "$rust_minor" ] && [ "$rust_minor" -lt 71 ]; then want=$inferno_fallback; fi
fi
linked() {  # the venv's programs are links to cargo's own
  for p in inferno-collapse-perf inferno-flamegraph; do
    [ "$(readlink "$venv/bin/$p")" = "$cargo_home/bin/$p" ] || return 1
  done
}
if has_inferno "$venv" "$want"; then
  echo "install-deps: inferno $want present"
elif has_inferno "$cargo_home" "$want"; then
  if linked; then
    echo "install-deps: inferno $want present (linked from $cargo_home/bin)"
  else
    echo "install-deps: linking inferno $want from $cargo_home/bin into the venv"
    ln -sf "$cargo_home/bin/inferno-collapse-perf" "$cargo_home/bin/inferno-flamegraph" "$venv/bin/"
  fi
else
  if [ -z "$cargo" ]; then
    echo "install-deps: installing cargo-web (Debian's cargo of a recent rustc)"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends cargo-web
    cargo=$(command -v cargo)
  fi
  # Into cargo's own bin/ (as `cargo install` does by default), linked from the venv: a
  # checkout made later on this machine, or a venv built again, finds it there.
  echo "install-deps: building inferno $want's tools with $cargo (a few minutes)"
  "$cargo" install --quiet --locked inferno --version "$want" --root "$cargo_home"
  ln -sf "$cargo_home/bin/inferno-collapse-perf" "$cargo_home/bin/inferno-flamegraph" "$venv/bin/"
fi

# The Hive libraries the conformance tests check our wire format against: dhive, and wax
# (hived's protocol code compiled to WebAssembly), both pinned by the lock file.
conf="$root/tests/conformance"
if [ -f "$conf/package-lock.json" ]; then
  lock=$(sha256sum "$conf/package-lock.json" | cut -d' ' -f1)
  nstamp="$conf/node_modules/.lock.sha256"
  if [ "$(cat "$nstamp" 2>/dev/null)" != "$lock" ]; then
    echo "install-deps: installing the conformance test's Node packages"
    # --ignore-scripts: the optional native secp256k1 build would need node headers
    # from the network; the library falls back to its pure-JS implementation.
    (cd "$conf" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
    echo "$lock" >"$nstamp"
  else
    echo "install-deps: conformance Node packages up to date"
  fi
fi
