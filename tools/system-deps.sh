#!/usr/bin/env bash
# The system packages the build needs (Debian names). `make build` runs this first, so that the
# quick start (`make demo`, `make test`) works on a fresh machine: whatever is missing is
# installed with apt-get when we are root (or have password-less sudo); otherwise the script
# names the missing packages and fails, before CMake would fail with a less direct message.
#   tools/system-deps.sh            the build's packages
#   tools/system-deps.sh --test     also those the tests use (a headless browser, ccache)
set -euo pipefail

missing=()
need() {  # need PACKAGE TEST...: PACKAGE is missing unless one of the tests holds
  local pkg=$1; shift
  for t in "$@"; do
    case $t in
      /*) [ -e "$t" ] && return 0 ;;
      *) command -v "$t" >/dev/null 2>&1 && return 0 ;;
    esac
  done
  missing+=("$pkg")
}

need g++ g++ c++
need cmake cmake
need ninja-build ninja
need libgtest-dev /usr/include/gtest/gtest.h /usr/local/include/gtest/gtest.h
need libssl-dev /usr/include/openssl/sha.h
need nlohmann-json3-dev /usr/include/nlohmann/json.hpp /usr/local/include/nlohmann/json.hpp
if ! python3 -c "import venv, ensurepip" >/dev/null 2>&1; then missing+=(python3-venv); fi
if [ "${1:-}" = "--test" ]; then
  need chromium-headless-shell chromium-headless-shell chromium chromium-browser google-chrome
  need ccache ccache
fi

[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  fi
fi
if ! command -v apt-get >/dev/null 2>&1 || { [ "$(id -u)" != 0 ] && [ ${#sudo[@]} -eq 0 ]; }; then
  echo "error: missing system packages: ${missing[*]}" >&2
  echo "  install them (Debian/Ubuntu: apt-get install ${missing[*]}) and run make again" >&2
  exit 1
fi
echo "installing system packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
