# kiln — the README's two commands: `make demo` and `make test`. Both install the Debian
# packages they need when they are missing (as root; otherwise they print the apt-get line).
# Steps print one line each (scripts/quiet.sh); a failing step shows its whole output.
BUILD ?= build
JOBS ?= $(shell nproc)
BUILD_PACKAGES := build-essential cmake pkg-config protobuf-c-compiler libprotobuf-c-dev libonnx-dev
TEST_PACKAGES := $(BUILD_PACKAGES) libonnx-testdata clang libclang-rt-14-dev python3-onnx \
                 python3-numpy python3-torch python3-torchvision gcc-aarch64-linux-gnu \
                 libc6-dev-arm64-cross

BENCH_PACKAGES := $(BUILD_PACKAGES) libopenblas-dev libdnnl-dev python3-numpy python3-onnx python3-torch python3-torchvision \
                  nodejs

# bench must be PHONY: bench/ is also a directory.
.PHONY: all build demo test bench deps-build deps-test deps-bench install ops-doc clean

all: build

deps-build:
	@scripts/quiet.sh "Debian packages (scripts/ensure-packages.sh)" scripts/ensure-packages.sh $(BUILD_PACKAGES)

deps-test:
	@scripts/quiet.sh "Debian packages (scripts/ensure-packages.sh)" scripts/ensure-packages.sh $(TEST_PACKAGES)

build: deps-build
	@scripts/quiet.sh "configure (cmake -S . -B $(BUILD))" cmake -S . -B $(BUILD) -DKILN_WERROR=ON
	@scripts/quiet.sh "build (cmake --build $(BUILD) -j$(JOBS))" cmake --build $(BUILD) -j$(JOBS)

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

# docs/ops.md is generated from the op tables (docs/gen/gen_ops_doc.c); the test ops_doc_current
# fails until it is regenerated after an op, opset or cpu kernel changes.
ops-doc: build
	@scripts/quiet.sh "docs/ops.md (docs/gen/gen_ops_doc.c)" cmake --build $(BUILD) --target ops_doc

install: build
	cmake --install $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-fuzz
