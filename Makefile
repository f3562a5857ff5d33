# Developer entry points. Everything runs inside a virtual environment in .venv.

PYTHON    ?= python3
VENV      := .venv
VENV_PY   := $(VENV)/bin/python
BUILD_DIR := build
JOBS      ?= 2
PIP_FLAGS := --disable-pip-version-check -q

.PHONY: all venv build test lint demo bench format clean typecheck wheel

all: build

venv: $(VENV)/.stamp

$(VENV)/.stamp: requirements-dev.txt
	test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install $(PIP_FLAGS) -r requirements-dev.txt
	touch $@

build: venv
	test -f $(BUILD_DIR)/build.ninja || cmake -S . -B $(BUILD_DIR) -G Ninja \
		-DPython_EXECUTABLE=$(CURDIR)/$(VENV_PY) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The CUDA tests run a second time on the CPU emulator, so that CI (no GPU) runs every CUDA
# runtime test.
test: build lint
	$(VENV_PY) -m mypy
	ctest --test-dir $(BUILD_DIR) --output-on-failure
	PYTHONPATH=python $(VENV_PY) -m pytest -q tests/python
	TESSERA_CUDA_EMULATOR=1 PYTHONPATH=python $(VENV_PY) -m pytest -q tests/python/cuda

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
	rm -rf $(BUILD_DIR)
	rm -f python/tessera/_core*.so
