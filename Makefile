# Cohort: the two commands of the quick start are `make demo` and `make check`. Both install
# the Debian packages they need (scripts/deps.sh) and build into build/ first.
BUILD ?= build
PREFIX ?= /usr/local
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
NP ?= 4

.PHONY: all build deps configure demo check check-sanitize bench install format clean

all: build

deps:
	@scripts/deps.sh build

$(BUILD)/CMakeCache.txt:
	@scripts/deps.sh build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) > /dev/null

configure: $(BUILD)/CMakeCache.txt

build: $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The demonstration jobs on $(NP) ranks: a 2-D heat-diffusion solver; the same solver
# checkpointing every 1000 steps, stopped after step 2500 as if it had failed, the checkpoint
# it left, and a job that resumes from it and ends with the same figures; the solver again with
# ranks 0 and $(NP)-1 swapping processes and strips halfway, same figures again; a short table of
# collective latencies; then broadcasts under emulated links where the root reaches rank 1
# quickly and the others slowly: a run whose root searches for a better tree, the tree it
# remembered, a second run that starts from it, and the binomial tree for comparison.
DEMO_TUNE = COHORT_EMU_TOPOLOGY=$(BUILD)/demo.topo COHORT_TUNE_DB=$(BUILD)/demo-tune.db
demo: build
	$(BUILD)/bin/mpiexec -n $(NP) $(BUILD)/examples/heat2d 256 4000
	@echo
	@rm -f $(BUILD)/demo.ck
	$(BUILD)/bin/mpiexec -n $(NP) $(BUILD)/examples/heat2d -c $(BUILD)/demo.ck -s 2500 256 4000
	$(BUILD)/bin/cohort checkpoint $(BUILD)/demo.ck
	$(BUILD)/bin/mpiexec -n $(NP) $(BUILD)/examples/heat2d -c $(BUILD)/demo.ck 256 4000
	@echo
	$(BUILD)/bin/mpiexec -n $(NP) $(BUILD)/examples/heat2d -w 2000 256 4000
	@echo
	$(BUILD)/bin/mpiexec -n $(NP) $(BUILD)/examples/colltime 65536
	@echo
	@printf '# rank 0 reaches rank 1 in 50 us, the others in 3 ms\ndefault 50\nlink 0 2-%d 3000\n' \
	  $$(($(NP) - 1)) > $(BUILD)/demo.topo
	@rm -f $(BUILD)/demo-tune.db
	@echo "Self-tuning MPI_Bcast of 1 KiB, $(NP) ranks, emulated links ($(BUILD)/demo.topo), us per call:"
	@for run in "search" "next run" "binomial"; do \
	  alg=auto; [ "$$run" = binomial ] && alg=binomial; \
	  $(DEMO_TUNE) COHORT_BCAST_ALGORITHM=$$alg $(BUILD)/bin/mpiexec -n $(NP) \
	    $(BUILD)/examples/bcast_tree -s 1024 -n 300 | \
	    awk -v r="$$run" '$$3 == "first" { f = $$5 } $$3 == "last" { l = $$5 } \
	      END { printf "  %-9s first 3 calls %9.1f   last 50 calls %9.1f\n", r, f, l }' || exit 1; \
	  [ "$$run" = search ] && $(DEMO_TUNE) $(BUILD)/bin/cohort tune | \
	    grep -A1 'messages of 1024-' | sed 's/^  /    /'; \
	done; true

# Every test; the output ends with ctest's summary.
check:
	@scripts/deps.sh check
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCOHORT_REQUIRE_CMOCKA=ON > /dev/null
	@$(MAKE) --no-print-directory build
	cd $(BUILD) && ctest --output-on-failure --timeout 600 -j 1

# The tests again on a build with AddressSanitizer and UndefinedBehaviorSanitizer (in
# build-sanitize/; slower, not part of `make check`). Left out: tools.* (they compile
# programs without the sanitizer). The crash scenarios of tests/launcher.sh turn off the
# sanitizer's own segfault handler, so that a crash ends a rank as in a normal build.
SANITIZE_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
check-sanitize:
	@scripts/deps.sh check
	cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCOHORT_REQUIRE_CMOCKA=ON -DCOHORT_TEST_TIME_LIMIT=600 \
	  -DCMAKE_C_FLAGS="$(SANITIZE_FLAGS)" \
	  -DCMAKE_EXE_LINKER_FLAGS="$(SANITIZE_FLAGS)" -DCMAKE_SHARED_LINKER_FLAGS="$(SANITIZE_FLAGS)" > /dev/null
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 900 \
	  -j $(JOBS) -E '^tools\..*$$'

bench:
	@scripts/deps.sh bench
	@$(MAKE) --no-print-directory build
	bench/run $(BENCH_ARGS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) build-sanitize
