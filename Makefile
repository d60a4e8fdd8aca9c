# kiln — the README's two commands: `make demo` and `make test`. Both install the Debian
# packages they need when they are missing (as root; otherwise they print the apt-get line).
BUILD ?= build
JOBS ?= $(shell nproc)
BUILD_PACKAGES := build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev libonnx-dev
TEST_PACKAGES := $(BUILD_PACKAGES) libonnx-testdata clang libclang-rt-14-dev \
                 python3-numpy python3-torch python3-torchvision

BENCH_PACKAGES := $(BUILD_PACKAGES) libopenblas-dev libdnnl-dev python3-numpy python3-onnx python3-torch python3-torchvision

# bench must be PHONY: bench/ is also a directory.
.PHONY: all build demo test bench deps-build deps-test deps-bench install clean

all: build

deps-build:
	@scripts/ensure-packages.sh $(BUILD_PACKAGES)

deps-test:
	@scripts/ensure-packages.sh $(TEST_PACKAGES)

build: deps-build
	cmake -S . -B $(BUILD) -DKILN_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

test: deps-test
	@scripts/test.sh

deps-bench:
	@scripts/ensure-packages.sh $(BENCH_PACKAGES)

# Benchmarks (issue 5): GEMM against OpenBLAS, models against PyTorch, peaks of this machine;
# writes bench/RESULTS.md.
bench: deps-bench
	cmake -S . -B $(BUILD) -DKILN_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j$(JOBS)
	KILN_BENCH_COMMAND="make bench" bench/run_all.sh $(BUILD)

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-fuzz
