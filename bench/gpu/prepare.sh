#!/usr/bin/env bash
# Run HERE (the development machine), once per session, before a device run: copies into .gpu/
# (ignored by git) what the device machine's image lacks to build tessera's Python module:
# nlohmann/json's headers and CMake files, and OpenSSL's headers (the image has libcrypto.so.3
# but maybe no -dev package). Then call the device tool with
#   run(command="bash bench/gpu/run_device_checks.sh", carry=[".gpu"], timeout_s=420)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
D=.gpu/deps
rm -rf "$D" && mkdir -p "$D/include" "$D/share/cmake"
cp -r /usr/include/nlohmann "$D/include/"
cp -r /usr/share/cmake/nlohmann_json "$D/share/cmake/"
cp -r /usr/include/openssl "$D/include/"
cp -r /usr/include/x86_64-linux-gnu/openssl/. "$D/include/openssl/" 2>/dev/null || true
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
du -sh .gpu
