# TideSQL: the two commands are `make run` and `make test`. Everything else is a step of
# theirs. CMake does the building; this file installs what is missing and wires steps.
SHELL := /bin/bash
.DEFAULT_GOAL := build

ASAN ?= 0
JOBS ?= $(shell nproc)
DEPS_DIR := $(CURDIR)/.deps
HEADERS_DIR := $(DEPS_DIR)/mariadb-headers
ifeq ($(ASAN),1)
BUILD_DIR ?= $(CURDIR)/build-asan
CMAKE_FLAGS := -DASAN=ON -DWITH_PLUGIN=OFF -DWITH_ROCKSDB_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug
else
BUILD_DIR ?= $(CURDIR)/build
CMAKE_FLAGS := -DMARIADB_HEADERS_DIR=$(HEADERS_DIR)
endif

.PHONY: deps headers configure build test run stop clean format bench bench-kv bench-sql package \
  test-full test-rpl

deps:
	@scripts/install-deps.sh

headers: deps
	@scripts/mariadb-headers.sh $(HEADERS_DIR)

configure: headers
	@cmake -S . -B $(BUILD_DIR) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j$(JOBS)

# Unit tests (CTest) and the engine's mysql-test-run suite; one summary line at the end,
# also when the build fails.
test:
	@$(MAKE) --no-print-directory build || { echo "test: the build failed"; echo "0 passed, 1 failed"; exit 1; }
	@ASAN=$(ASAN) scripts/test.sh $(BUILD_DIR)

# The whole stock rpl suite with TidesDB as the default engine of every server (make test runs
# a subset of it): about 25 minutes on two cores. Logs in BUILD_DIR/test-logs/stock/tidesdb/.
test-rpl:
	@$(MAKE) --no-print-directory build || { echo "test-rpl: the build failed"; echo "0 passed, 1 failed"; exit 1; }
	@scripts/stock-suites.sh $(BUILD_DIR) --suites=rpl

# The Debian package mariadb-plugin-tidesdb, built against the installed server with Debian's
# compiler flags in its own tree (PACKAGE_BUILD_DIR), in PACKAGE_BUILD_DIR/package/
# (docs/PACKAGING.md).
PACKAGE_BUILD_DIR ?= $(CURDIR)/build-deb
package: headers
	@scripts/install-deps.sh --package >/dev/null
	@JOBS=$(JOBS) scripts/package.sh $(PACKAGE_BUILD_DIR) $(HEADERS_DIR)

# Tests that install into this machine, so not part of `make test`: the package into the
# system MariaDB (tests/package/), and the container scaffold (docker/, tests/docker/).
# Each leaves the system server and the Docker daemon as it found them.
test-full:
	@$(MAKE) --no-print-directory package || { echo "test-full: make package failed"; echo "0 passed, 1 failed"; exit 1; }
	@scripts/install-deps.sh --container >/dev/null
	@scripts/test-full.sh $(PACKAGE_BUILD_DIR)

# Starts a MariaDB server with ha_tidesdb.so loaded (data under var/), prints how to connect.
run: build
	@scripts/server.sh start $(BUILD_DIR)

stop:
	@scripts/server.sh stop

bench-kv: build
	@scripts/bench-kv.sh $(BUILD_DIR)

# sysbench side by side: TidesDB, InnoDB and MyRocks in one server, the whole matrix (about
# 2 h 20 min, bench/README.md; QUICK=1: a smoke run of a few minutes).
bench-sql: build
	@bench/sysbench-compare.sh $(BUILD_DIR)

# Every SQL benchmark (sysbench matrix, TPC-C-like, large values), the plots and RESULTS.md
# into BENCH_OUT (default bench/results/<date>, to commit); QUICK=1: a smoke run of a few
# minutes into bench/results/<date>-quick. bench/README.md says how long the full run takes.
BENCH_OUT ?=
bench:
	@scripts/install-deps.sh --bench
	@$(MAKE) --no-print-directory build
	@bench/run-all.sh $(BUILD_DIR) $(BENCH_OUT)

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

clean:
	rm -rf $(CURDIR)/build $(CURDIR)/build-asan $(CURDIR)/build-deb
