# Two commands for a fresh Debian 12 machine:
#   make run   installs what is missing, builds, and starts Rota on its embedded default
#   make test  installs what is missing, builds, and runs every test (also under ASan/UBSan)
SHELL := /bin/bash
BUILD ?= build
BUILD_SAN ?= build-asan
JOBS ?= $(shell nproc)
# The normal build's tests run twice as many at a time as there are cores: they wait most of their
# time (rotad's ticks, Slurm's scheduling cycles, timeouts). On two cores they kept the CPUs 38 %
# busy at -j2 (561 s) and 68 % at -j4 (313 s). The sanitized tests compute (78 % at -j2; at -j4
# 99 %, and tests that time what they see failed): one per core. docs/design.md, "Build and test
# time are a budget".
TEST_JOBS ?= $(shell echo $$(( $(JOBS) * 2 )))
SAN_TEST_JOBS ?= $(JOBS)
CMAKE_FLAGS ?=

.PHONY: all deps build build-san test test-unit test-san fuzz run replay bench clean deb

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The sanitized build is clang's (the normal one g++'s): its fuzz targets (fuzz/) are libFuzzer's,
# and the sanitized tests and the fuzzers share its libraries (CMakeLists.txt, ROTA_FUZZ).
SAN_CC ?= clang
SAN_CXX ?= clang++
$(BUILD_SAN)/CMakeCache.txt:
	CC=$(SAN_CC) CXX=$(SAN_CXX) cmake -S . -B $(BUILD_SAN) -DCMAKE_BUILD_TYPE=Debug -DROTA_SANITIZE=ON \
	  -DROTA_FUZZ=ON -DROTA_BUILD_BENCH=OFF $(CMAKE_FLAGS)

build-san: deps $(BUILD_SAN)/CMakeCache.txt
	@grep -q '^ROTA_FUZZ:BOOL=ON' $(BUILD_SAN)/CMakeCache.txt || { echo "$(BUILD_SAN) predates the \
	clang sanitized build with fuzz targets: remove it (rm -rf $(BUILD_SAN))"; exit 1; }
	cmake --build $(BUILD_SAN) -j $(JOBS) --target rota_tests rota rotad rota-shepherd fuzz_targets

# On a failure, ctest-digest.py repeats why each failed test failed at the end of the output, where
# a CI log that keeps only its head and tail still shows it.
test-unit: build
	cd $(BUILD) && { ctest --output-on-failure -j $(TEST_JOBS) || { python3 $(CURDIR)/scripts/ctest-digest.py .; exit 1; }; }

test-san: build-san
	cd $(BUILD_SAN) && { ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(SAN_TEST_JOBS) || { python3 $(CURDIR)/scripts/ctest-digest.py .; exit 1; }; }

test: test-unit test-san
	@scripts/check-no-clock.sh
	@scripts/check-json-reads.sh
	@scripts/check-tested-by.py

# The Debian package of this build: $(BUILD)/deb/rota_<version>_amd64.deb (dpkg-buildpackage,
# debhelper, lintian; packaging/debian). Install it with `sudo apt install ./$(BUILD)/deb/rota_*.deb`.
deb: build
	scripts/make-deb.sh $(BUILD) $(BUILD)/deb

# Each fuzz target for FUZZ_SECONDS (default 120), JOBS at a time, growing its corpus under
# $(BUILD_FUZZ)/fuzz-work from run to run (fuzz/README.md); `make test` fuzzes each for seconds.
# Its own build: libFuzzer's comparison hooks in every library (ROTA_FUZZ_CMP, CMakeLists.txt),
# which would double the sanitized tests' time.
FUZZ_SECONDS ?= 120
BUILD_FUZZ ?= build-fuzz
$(BUILD_FUZZ)/CMakeCache.txt:
	CC=$(SAN_CC) CXX=$(SAN_CXX) cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Debug -DROTA_SANITIZE=ON \
	  -DROTA_FUZZ=ON -DROTA_FUZZ_CMP=ON -DROTA_BUILD_BENCH=OFF $(CMAKE_FLAGS)

fuzz: deps $(BUILD_FUZZ)/CMakeCache.txt
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_targets
	find $(BUILD_FUZZ) -maxdepth 1 -name 'fuzz_*' -type f -executable | sort | xargs -P $(JOBS) -I{} env ROTA_FUZZ_KEEP=1 python3 fuzz/run.py {} \
	  --libfuzzer=ON --seconds $(FUZZ_SECONDS) --work $(CURDIR)/$(BUILD_FUZZ)/fuzz-work

# Starts rotad in the foreground: the real GPUs through NVML, or simulated ones where there are none.
run: build
	BUILD=$(BUILD) scripts/run.sh

# Replays the bundled Philly slice through the three policies (the simulator).
replay: build
	$(BUILD)/rota simulate --trace data/traces/philly-ed69ec.csv --format philly --gpus 8 \
	  --policy fifo,backfill,rota

bench: build
	$(BUILD)/rota_bench

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_FUZZ)
