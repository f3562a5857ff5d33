#!/usr/bin/env bash
# Run ON the device machine (an NVIDIA GPU, the workplace's 'cuda' image: python3 with torch,
# nanobind, cmake, ninja, nvcc; no network), after bench/gpu/prepare.sh here. About 4-6 minutes:
#  1. builds tessera's Python module with the image's python3 (no C++ tests);
#  2. bench_auto_cuda at 2048 and 4096, the default fp16 schedule beside cuBLAS (torch), twice in
#     alternating order with the variants still to decide (fused fp16 cast, copy addresses);
#  3. the CUDA tests on the GPU with the slow set (TESSERA_SLOW_CUDA_TESTS=1), among them the
#     operator library unscheduled for "cuda" against numpy (test_cuda_autoschedule_topi.py).
# Everything it prints is also in $OUT/log.txt; tables in $OUT/*.json.
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
D=$PWD/.gpu/deps
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv
OSSL=()
if [ ! -e /usr/include/openssl/sha.h ]; then
  mkdir -p "$D/lib"
  lib=$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so.3 /usr/lib64/libcrypto.so.3 2>/dev/null | head -1)
  ln -sf "$lib" "$D/lib/libcrypto.so"
  OSSL=(-DOPENSSL_ROOT_DIR="$D" -DOPENSSL_INCLUDE_DIR="$D/include" -DOPENSSL_CRYPTO_LIBRARY="$D/lib/libcrypto.so")
fi
start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DPython_EXECUTABLE="$(command -v python3)" -DCMAKE_BUILD_TYPE=Release \
  -DTESSERA_BUILD_TESTS=OFF -Dnlohmann_json_DIR="$D/share/cmake/nlohmann_json" "${OSSL[@]}" >/dev/null \
  && cmake --build build-gpu -j16 >"$OUT/build.txt" 2>&1 || { tail -40 "$OUT/build.txt"; exit 1; }
echo "== build: $((SECONDS - start)) s"
export PYTHONPATH=$PWD/python
# Native frames on a crash (no gdb in the image), and what the module exports of libstdc++ (the
# image's toolchain may link it statically; the link keeps those symbols private, see CMakeLists).
gcc -shared -fPIC -O1 -o "$D/segv_backtrace.so" bench/gpu/segv_backtrace.c && export LD_PRELOAD="$D/segv_backtrace.so"
echo "libstdc++ symbols exported by _core: $(nm -D --defined-only build-gpu/_core*.so | grep -c 'codecvt\|locale')"
# Smoke test, torch imported first as the benchmark does: one fp16 matmul through NVRTC.
timeout 60 python3 -c "import sys; sys.path.insert(0, 'bench'); import torch, tessera as ts; from bench_auto_cuda import matmul; ts.build(matmul(256, 'float16', 'float32', 'float32'), target='cuda'); print('smoke build: ok')" \
  || { echo "smoke build failed: rc=$?"; exit 1; }
start=$SECONDS
for order in a b; do
  if [ $order = a ]; then only=("fp16 in, fp32 acc/out" "fp16 var: fp16 out fused cast" "fp16 in, fp32 acc, fp16 out" "fp16 var: copy addresses as one sum")
  else only=("fp16 var: copy addresses as one sum" "fp16 in, fp32 acc, fp16 out" "fp16 var: fp16 out fused cast" "fp16 in, fp32 acc/out"); fi
  timeout 150 python3 bench/bench_auto_cuda.py --sizes 2048 4096 --variant-sizes 2048 4096 \
    --only "${only[@]}" --out "$OUT/auto_$order" || echo "bench_auto_cuda ($order) failed: rc=$?"
done
echo "== bench_auto_cuda: $((SECONDS - start)) s"
start=$SECONDS
TESSERA_SLOW_CUDA_TESTS=1 timeout 200 python3 -m pytest -q tests/python/cuda -p no:cacheprovider 2>&1 | tail -15
echo "== CUDA tests: $((SECONDS - start)) s"
