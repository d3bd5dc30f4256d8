#!/usr/bin/env bash
# Installs everything Tandem needs on a fresh Debian/Ubuntu machine (or macOS with
# Homebrew's cmake), then the npm packages, which builds the native engine and the
# TypeScript. Safe to run again. Uses sudo for apt when not root.
set -euo pipefail
cd "$(dirname "$0")/.."

if command -v apt-get >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends build-essential cmake libopenblas-dev redis-server >/dev/null
elif [ "$(uname)" = "Darwin" ]; then
  command -v cmake >/dev/null 2>&1 || { echo "install cmake first (brew install cmake)" >&2; exit 1; }
else
  echo "unsupported system: install a C++17 compiler, cmake and OpenBLAS, then run npm install" >&2
  exit 1
fi

# npm install (not npm ci): the lock file records only this platform's optional binaries.
npm install --no-audit --no-fund
