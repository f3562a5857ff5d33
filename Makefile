# Developer entry points. Everything runs inside a virtual environment in .venv.

PYTHON    ?= python3
VENV      := .venv
VENV_PY   := $(VENV)/bin/python
BUILD_DIR := build
ASAN_DIR  := build-asan
JOBS      ?= 2
PIP_FLAGS := --disable-pip-version-check -q
# Paths under the source tree hash relative, so that build-asan/ reuses build/'s objects.
export CCACHE_BASEDIR := $(CURDIR)

.PHONY: all sysdeps venv build build-asan test test-asan fuzz lint demo bench format clean typecheck wheel

all: build

venv: $(VENV)/.stamp

$(VENV)/.stamp: requirements-dev.txt
	test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install $(PIP_FLAGS) -r requirements-dev.txt
	touch $@

# System packages (compiler, CMake, Ninja, GoogleTest, OpenSSL, nlohmann/json): installed with
# apt-get when missing and we may, else named in an error (tools/system-deps.sh).
sysdeps:
	tools/system-deps.sh

build: sysdeps venv
	test -f $(BUILD_DIR)/build.ninja || cmake -S . -B $(BUILD_DIR) -G Ninja \
		-DPython_EXECUTABLE=$(CURDIR)/$(VENV_PY) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The CUDA tests run a second time on the CPU emulator, so that CI (no GPU) runs every CUDA
# runtime test; so do the operator-library tests, each operator built for "cuda" with no
# schedule (issue 16: every operator, automatically scheduled for CUDA, against numpy).
test: build lint
	tools/system-deps.sh --test
	$(VENV_PY) -m mypy
	ctest --test-dir $(BUILD_DIR) --output-on-failure
	PYTHONPATH=python $(VENV_PY) -m pytest -q tests/python
	TESSERA_CUDA_EMULATOR=1 PYTHONPATH=python $(VENV_PY) -m pytest -q tests/python/cuda
	TESSERA_CUDA_EMULATOR=1 TESSERA_TOPI_TARGET=cuda PYTHONPATH=python $(VENV_PY) -m pytest -q tests/python/topi

# The C++ core under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/), and the C++
# tests and the Python tests of the IR, transforms, schedules and DSL against it. Python is not
# instrumented: it preloads the sanitizer runtimes; kernels that tessera compiles are not
# instrumented either. Any report fails the run (halt_on_error, -fno-sanitize-recover). One
# pytest per folder: their conftest modules share a name.
ASAN_RT := $(shell $(CXX) -print-file-name=libasan.so) $(shell $(CXX) -print-file-name=libubsan.so)
ASAN_ENV := ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=0 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# CI runs the IR, transform and schedule folders under the sanitizers (its 25-minute budget on two
# cores), and of the DSL folder (about 16 minutes under the sanitizers) the files that reach its C
# runtime and code generation: checked mode (guard pages), executor argument conversion, pointer
# kernels and the DSL-to-TIR build, in one pytest. `make test-asan ASAN_PYTESTS="...
# tests/python/dsl" ASAN_DSL_PYTESTS=` runs the whole DSL folder by hand.
ASAN_PYTESTS ?= tests/python/ir tests/python/transform tests/python/schedule
ASAN_DSL_PYTESTS ?= tests/python/dsl/test_checked_mode.py tests/python/dsl/test_executor_arguments.py \
	tests/python/dsl/test_pointers.py tests/python/dsl/test_tir_build.py

build-asan: sysdeps venv
	test -f $(ASAN_DIR)/build.ninja || cmake -S . -B $(ASAN_DIR) -G Ninja \
		-DPython_EXECUTABLE=$(CURDIR)/$(VENV_PY) -DCMAKE_BUILD_TYPE=Release -DTESSERA_SANITIZE=ON
	cmake --build $(ASAN_DIR) -j$(JOBS)

test-asan: build-asan
	$(ASAN_ENV) ctest --test-dir $(ASAN_DIR) --output-on-failure
	@set -e; for d in $(ASAN_PYTESTS); do \
		echo "== $$d under ASan+UBSan"; \
		$(ASAN_ENV) LD_PRELOAD="$(ASAN_RT)" TESSERA_CORE_DIR=$(ASAN_DIR) PYTHONPATH=python \
			$(VENV_PY) -m pytest -q -p no:cacheprovider $$d; \
	done
	@if [ -n "$(strip $(ASAN_DSL_PYTESTS))" ]; then \
		echo "== $(ASAN_DSL_PYTESTS) under ASan+UBSan"; \
		$(ASAN_ENV) LD_PRELOAD="$(ASAN_RT)" TESSERA_CORE_DIR=$(ASAN_DIR) PYTHONPATH=python \
			$(VENV_PY) -m pytest -q -p no:cacheprovider $(ASAN_DSL_PYTESTS); \
	fi

# The differential fuzzer (tests/fuzz): a fixed seed and a fixed number of examples; FUZZ_ARGS
# adds pytest options, e.g. FUZZ_ARGS=--fuzz-long (or TESSERA_FUZZ_LONG=1) for a long run with
# random seeds, --fuzz-repro-dir=DIR for the reproducers of failures.
fuzz: build
	PYTHONPATH=python $(VENV_PY) -m pytest -q -p no:cacheprovider tests/fuzz $(FUZZ_ARGS)

# Static checks (seconds): the C++ layer order of ARCHITECTURE.md, no circles among the
# module-level imports of python/tessera, ruff (pyproject [tool.ruff]), clang-format over the
# files tests/check_format.py lists.
lint: venv
	$(VENV_PY) tests/check_layers.py
	$(VENV_PY) tests/check_imports.py
	$(VENV_PY) -m ruff check python tests bench examples
	$(VENV_PY) tests/check_format.py

# The typed public API (pyproject.toml [tool.mypy]); also the first step of `make test`.
typecheck: venv
	$(VENV_PY) -m mypy

# A manylinux wheel, built in the manylinux container by cibuildwheel (needs docker or podman).
wheel:
	$(VENV_PY) -m pip install $(PIP_FLAGS) cibuildwheel
	$(VENV_PY) -m cibuildwheel --platform linux --output-dir dist

demo: build
	PYTHONPATH=python $(VENV_PY) examples/quickstart.py

bench: build
	$(VENV_PY) -m pip install $(PIP_FLAGS) -r bench/requirements.txt
	@set -e; for f in bench/bench_*.py; do \
		[ -e "$$f" ] || continue; \
		echo "== $$f"; \
		PYTHONPATH=python $(VENV_PY) "$$f"; \
	done

format:
	find include src tests/cpp -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null \
		| xargs -r clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
	rm -f python/tessera/_core*.so
