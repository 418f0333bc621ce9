#!/bin/bash
# The user-facing tools: compiler wrappers (flags, -show, C and C++), the build tree used in
# place (every declared function exported), `make install` into a prefix, configuring without
# cmocka (as `make demo` does on a fresh machine), the library built with clang and in the
# optimising build types, `cohort info`, the README's settings list being the one generated
# from the code, source formatting, the benchmark runner and the collectives' soak script.
#   tools.sh SOURCE_DIR BUILD_DIR SCENARIO
set -u
SRC=$1 BUILD=$2 SCENARIO=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/cohort-tools-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL [$SCENARIO]: $*"; exit 1; }

cat > "$work/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, s;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    int sum = 0;
    MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d sum %d\n", r, s, sum);
    MPI_Finalize();
    return 0;
}
C
cat > "$work/hello.cc" <<'C'
#include <mpi.h>
#include <cstdio>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Datatype t = MPI_DOUBLE;
    switch (t) { case MPI_DOUBLE: std::printf("c++ rank %d\n", r); break; default: break; }
    MPI_Finalize();
    return 0;
}
C

# compile with a wrapper and run 3 ranks with no library path set
check_wrappers() { # bindir
  local bin=$1
  env -u LD_LIBRARY_PATH "$bin/mpicc" -std=c11 -Wall -Wextra -Werror -pedantic -o "$work/hello" "$work/hello.c" \
    || fail "mpicc could not build a C program"
  out=$(env -u LD_LIBRARY_PATH "$bin/mpiexec" -n 3 "$work/hello" | sort)
  [ "$out" = "$(printf 'rank 0 of 3 sum 3\nrank 1 of 3 sum 3\nrank 2 of 3 sum 3')" ] || fail "hello output: $out"
  env -u LD_LIBRARY_PATH "$bin/mpicxx" -Wall -Wextra -Werror -o "$work/hellocc" "$work/hello.cc" \
    || fail "mpicxx could not build a C++ program"
  out=$(env -u LD_LIBRARY_PATH "$bin/mpiexec" -n 2 "$work/hellocc" | sort | tr '\n' ' ')
  [ "$out" = "c++ rank 0 c++ rank 1 " ] || fail "C++ output: $out"
  # separate compile and link steps
  "$bin/mpicc" -c -o "$work/hello.o" "$work/hello.c" || fail "mpicc -c"
  "$bin/mpicc" -o "$work/hello2" "$work/hello.o" || fail "mpicc link of an object"
  "$bin/mpiexec" -n 1 "$work/hello2" | grep -q "rank 0 of 1" || fail "separately linked program"
  # mpirun is mpiexec under the name many scripts use
  out=$("$bin/mpirun" -np 2 "$work/hello2" | sort | tr '\n' ' ')
  [ "$out" = "rank 0 of 2 sum 1 rank 1 of 2 sum 1 " ] || fail "mpirun output: $out"
}

# A CMake project that finds MPI the way real projects do; $1 selects how.
cmake_project() { # dir mode(findmpi|package) prefix
  local dir=$1 mode=$2 prefix=$3
  mkdir -p "$dir"
  cp "$work/hello.c" "$dir/"
  if [ "$mode" = findmpi ]; then
    cat > "$dir/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(hello C)
find_package(MPI REQUIRED COMPONENTS C)
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE MPI::MPI_C)
file(WRITE ${CMAKE_BINARY_DIR}/found.txt "${MPI_C_VERSION};${MPIEXEC_EXECUTABLE}")
CM
    # pointed at the wrapper alone, FindMPI takes Cohort's compiler and version ...
    cmake -S "$dir" -B "$dir/c" -DMPI_C_COMPILER="$prefix/bin/mpicc" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "FindMPI did not accept Cohort's mpicc"; }
    grep -q "^3.1;" "$dir/c/found.txt" || fail "FindMPI found: $(cat "$dir/c/found.txt")"
    # ... and with MPI_HOME (which FindMPI also uses to look for mpiexec) everything is Cohort's
    cmake -S "$dir" -B "$dir/b" -DMPI_C_COMPILER="$prefix/bin/mpicc" -DMPI_HOME="$prefix" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "FindMPI with MPI_HOME"; }
    grep -q "^3.1;$prefix/bin/mpiexec$" "$dir/b/found.txt" || fail "FindMPI found: $(cat "$dir/b/found.txt")"
  else
    cat > "$dir/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(hello C)
find_package(Cohort 0.1 REQUIRED)
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE Cohort::MPI)
file(WRITE ${CMAKE_BINARY_DIR}/found.txt "${Cohort_MPIEXEC}")
CM
    cmake -S "$dir" -B "$dir/b" -DCMAKE_PREFIX_PATH="$prefix" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "find_package(Cohort) failed"; }
  fi
  cmake --build "$dir/b" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "the $mode project did not build"; }
  env -u LD_LIBRARY_PATH "$prefix/bin/mpiexec" -n 2 "$dir/b/hello" | grep -q "rank 1 of 2 sum 1" || fail "the $mode program did not run"
}

pkgconfig_build() { # prefix
  local pc cflags libs
  cflags=$(PKG_CONFIG_PATH="$1/lib/pkgconfig" pkg-config --cflags cohort) || fail "pkg-config --cflags cohort"
  libs=$(PKG_CONFIG_PATH="$1/lib/pkgconfig" pkg-config --libs cohort) || fail "pkg-config --libs cohort"
  cc $cflags -o "$work/hello_pc" "$work/hello.c" $libs || fail "build with pkg-config flags"
  env -u LD_LIBRARY_PATH "$1/bin/mpiexec" -n 2 "$work/hello_pc" | grep -q "rank 0 of 2" || fail "pkg-config-built program"
  [ "$(PKG_CONFIG_PATH="$1/lib/pkgconfig" pkg-config --modversion cohort)" = "$("$1/bin/cohort" version | awk '{print $2}')" ] || fail "pkg-config version"
}

# Every function mpi.h and mpix.h declare is in the library: MPI_x weak (so that a profiling
# library can replace it), PMPI_x strong.
check_exports() { # build or install tree
  local declared syms fn pre
  # mpi.h's functions are MPI_x, mpix.h's MPIX_x
  declared=$( (sed -n 's/^COHORT_FN([^,]*, *\([A-Za-z0-9_]*\),.*/MPI_\1/p' "$1/include/mpi.h"
               sed -n 's/^COHORT_XFN([^,]*, *\([A-Za-z0-9_]*\),.*/MPIX_\1/p' "$1/include/mpix.h") |
             sort -u)
  [ "$(echo "$declared" | wc -l)" -gt 150 ] || fail "could not read the declarations"
  echo "$declared" | grep -q "^MPIX_Restart$" || fail "could not read mpix.h's declarations"
  syms=$(nm -D --defined-only "$1/lib/libcohort.so")
  for fn in $declared; do
    echo "$syms" | grep -q " W $fn\$" || fail "libcohort.so lacks weak $fn"
    echo "$syms" | grep -q " T P$fn\$" || fail "libcohort.so lacks P$fn"
  done
}

# The installation layout: every file a user relies on is there. $2 names the tree in messages.
check_layout() { # tree what
  for f in bin/mpicc bin/mpicxx bin/mpiexec bin/mpirun bin/cohort include/mpi.h include/mpix.h \
           lib/libcohort.so lib/libcohort.a lib/pkgconfig/cohort.pc lib/cmake/Cohort/CohortConfig.cmake; do
    [ -e "$1/$f" ] || fail "$2 lacks $f"
  done
}

# The three ways a project finds the library: pkg-config, FindMPI through mpicc, find_package.
check_consumers() { # tree
  pkgconfig_build "$1"
  cmake_project "$work/findmpi" findmpi "$1"
  cmake_project "$work/package" package "$1"
}

case "$SCENARIO" in
packaging)
  check_consumers "$BUILD"
  ;;
wrappers)
  check_wrappers "$BUILD/bin"
  show=$("$BUILD/bin/mpicc" -show -O2 x.c)
  case "$show" in
    *"-I$BUILD/include"*"-O2 x.c"*"-L$BUILD/lib"*"-Wl,-rpath,$BUILD/lib"*"-lcohort"*) ;;
    *) fail "mpicc -show: $show" ;;
  esac
  [ "$("$BUILD/bin/mpicc" --showme:compile)" = "-I$BUILD/include" ] || fail "--showme:compile"
  "$BUILD/bin/mpicc" --showme:link | grep -q -- "-lcohort" || fail "--showme:link"
  "$BUILD/bin/mpicc" -show -c x.c | grep -q -- "-lcohort" && fail "-c must not add link flags"
  COHORT_CC=clang "$BUILD/bin/mpicc" -show x.c | grep -q "^clang " || fail "COHORT_CC not honoured"
  ;;
layout)
  check_layout "$BUILD" "build tree"
  check_exports "$BUILD"
  ;;
install)
  make -C "$SRC" --no-print-directory install BUILD="$BUILD" PREFIX="$work/prefix" > "$work/install.log" 2>&1 \
    || { cat "$work/install.log"; fail "make install"; }
  check_layout "$work/prefix" "installation"
  check_wrappers "$work/prefix/bin"
  "$work/prefix/bin/mpicc" -show x.c | grep -q -- "-I$work/prefix/include" || fail "installed mpicc points elsewhere"
  check_consumers "$work/prefix"
  ;;
info)
  out=$("$BUILD/bin/cohort" info) || fail "cohort info failed"
  echo "$out" | grep -q "^Cohort [0-9]" || fail "no version line"
  echo "$out" | grep -q "COHORT_EAGER_LIMIT" || fail "settings missing"
  out=$(COHORT_EAGER_LIMIT=4K "$BUILD/bin/cohort" info)
  echo "$out" | grep -Eq "COHORT_EAGER_LIMIT +=  *4096 " || fail "current value not shown"
  COHORT_EAGER_LIMIT=nonsense "$BUILD/bin/cohort" info > /dev/null 2>&1 && fail "bad value accepted"
  "$BUILD/bin/cohort" frobnicate > /dev/null 2>&1 && fail "unknown command accepted"
  ;;
readme-settings)
  # The README's settings table is generated by `cohort settings-markdown`; it must match.
  want=$("$BUILD/bin/cohort" settings-markdown)
  have=$(sed -n '/<!-- settings:begin -->/,/<!-- settings:end -->/p' "$SRC/README.md" | sed '1d;$d')
  [ "$want" = "$have" ] || { diff <(echo "$want") <(echo "$have"); fail "README settings table is stale: run scripts/update-readme-settings.sh"; }
  ;;
configure)
  # `make demo` on a fresh machine configures before cmocka is installed: that must work and
  # leave only the unit tests out, while `make check`'s configure must refuse to go on without it
  lib=$(find /usr/lib /usr/local/lib -name 'libcmocka.so*' 2>/dev/null | head -n 1)
  [ -n "$lib" ] || fail "cmocka is not installed"
  dir=$(dirname "$lib")
  hide="-DCMAKE_IGNORE_PATH=$dir;${dir#/usr}" # /lib is /usr/lib on Debian 12
  cmake -S "$SRC" -B "$work/nocmocka" "$hide" > "$work/nocmocka.log" 2>&1 \
    || { cat "$work/nocmocka.log"; fail "configure without cmocka"; }
  grep -q "cmocka not found: the unit tests are left out" "$work/nocmocka.log" \
    || fail "no word that the unit tests are left out"
  listed=$(cd "$work/nocmocka" && ctest -N)
  echo "$listed" | grep -q " unit\." && fail "unit tests listed without cmocka"
  echo "$listed" | grep -q " mpi\.coll_" || fail "MPI tests missing without cmocka"
  cmake -S "$SRC" -B "$work/required" "$hide" -DCOHORT_REQUIRE_CMOCKA=ON > "$work/required.log" 2>&1 \
    && fail "configure with COHORT_REQUIRE_CMOCKA=ON went on without cmocka"
  grep -q "CMOCKA_LIB" "$work/required.log" || { cat "$work/required.log"; fail "no word of cmocka"; }
  listed=$(cd "$BUILD" && ctest -N)
  echo "$listed" | grep -q " unit\.test_core" || fail "this build has no unit tests"
  ;;
clang)
  # the library built with clang instead of gcc (Release, -O3), warnings as errors: it must
  # export the same interface and run programs
  command -v clang > /dev/null || fail "clang is not installed"
  cmake -S "$SRC" -B "$work/clang" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Release > "$work/clang.log" 2>&1 \
    || { cat "$work/clang.log"; fail "configure with clang"; }
  cmake --build "$work/clang" -j "$(nproc)" --target cohort cohort_static mpiexec \
    >> "$work/clang.log" 2>&1 || { cat "$work/clang.log"; fail "build with clang"; }
  check_exports "$work/clang"
  check_wrappers "$work/clang/bin"
  ;;
build-types)
  # the library's sources compiled by gcc in the other build types that optimise (Release,
  # -O3; MinSizeRel, -Os), warnings as errors: the optimiser's flow analysis differs with the
  # level, and -Wmaybe-uninitialized can stop a build that the default (-O2) lets through
  for type in Release MinSizeRel; do
    cmake -S "$SRC" -B "$work/$type" -DCMAKE_BUILD_TYPE=$type > "$work/$type.log" 2>&1 \
      || { cat "$work/$type.log"; fail "configure as $type"; }
    cmake --build "$work/$type" -j "$(nproc)" --target cohort_objs >> "$work/$type.log" 2>&1 \
      || { cat "$work/$type.log"; fail "build as $type"; }
  done
  ;;
format)
  command -v clang-format > /dev/null || fail "clang-format is not installed"
  cd "$SRC" || exit 1
  files=$(find src include tools tests bench examples -name '*.[ch]' 2>/dev/null)
  [ -n "$files" ] || fail "no C sources found under $SRC"
  bad=$(echo "$files" | while read -r f; do
          clang-format --dry-run -Werror "$f" > /dev/null 2>&1 || echo "$f"; done)
  [ -z "$bad" ] || fail "not clang-formatted: $bad"
  ;;
bench-runner)
  # bench/run end to end with Cohort alone (tiny sizes and times), and its record of the
  # machine's state: a cache-line probe before and after every run, runs counted as far
  out="$work/bench-out"
  "$SRC/bench/run" --suites coll --mpi cohort --np-coll 2 --coll barrier,bcast \
    --args 'coll=-S 4 -t 2' -r 2 --build-dir "$work/bench" --cohort-bin "$BUILD/bin" -o "$out" \
    > "$work/bench.log" 2>&1 || { cat "$work/bench.log"; fail "bench/run failed"; }
  grep -q "^coll,2,Bcast,4,us," "$out/summary.csv" || fail "no Bcast row in summary.csv"
  if [ "$(nproc)" -ge 2 ]; then
    [ "$(tr -d '\r' < "$out/machine.csv" | grep -Ec '^[12],cohort,2,coll,[0-9.]+,[0-9.]+$')" = 2 ] \
      || { cat "$out/machine.csv"; fail "machine.csv lacks a probe before and after each run"; }
    grep -q "^| Cohort | 2 | 2 | [0-2] | [0-9]* |$" "$out/results.md" \
      || fail "results.md lacks the machine table"
  fi
  # the far count: a run is far when either figure exceeds twice the least seen
  python3 - "$SRC/bench/run" <<'PY' || fail "machine table: far runs miscounted"
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("benchrun", sys.argv[1])
spec = importlib.util.spec_from_loader("benchrun", loader)
run = importlib.util.module_from_spec(spec)
loader.exec_module(run)
def m(mpi, before, after):
    return dict(rep=1, mpi=mpi, np=4, bench="coll", before_ns=before, after_ns=after)
lines = run.machine_lines(*run.machine_rows(
    [m("cohort", 100, 110), m("cohort", 90, 250), m("cohort", None, 180), m("openmpi", 400, 95)],
    ["cohort", "openmpi"]))
assert "| Cohort | 4 | 3 | 1 | 180 |" in lines, lines
assert "| Open MPI | 4 | 1 | 1 | 400 |" in lines, lines
assert run.machine_lines(*run.machine_rows([m("cohort", None, None)], ["cohort"])) == []
PY
  # bench/phase-sweep: rounds of forced algorithms between two probes, counted by phase
  "$SRC/bench/phase-sweep" --np 2 --coll bcast --variants auto,shm,nosuchalg --sizes 4 \
    --rounds 2 --args '-t 2' --build-dir "$work/bench" --cohort-bin "$BUILD/bin" \
    > "$work/sweep.log" 2> "$work/sweep.err" || { cat "$work/sweep.log" "$work/sweep.err"; fail "bench/phase-sweep failed"; }
  python3 - "$work/sweep.log" <<'PY' || { cat "$work/sweep.log"; fail "bench/phase-sweep: bad report"; }
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r"^rounds: near (\d+), far (\d+), mixed (\d+)", text, re.M)
assert m and sum(map(int, m.groups())) == 2, text
rows = re.findall(r"^Bcast +4 +([0-9.]+) +([0-9.]+) +(\S+)$", text, re.M)
assert len(rows) == (int(m.group(1)) > 0) + (int(m.group(2)) > 0), rows
assert all(float(a) > 0 and float(b) > 0 and c == "-" for a, b, c in rows), rows
PY
  grep -q "nosuchalg: failed" "$work/sweep.err" || fail "bench/phase-sweep: a bad algorithm went unreported"
  ;;
soak)
  # scripts/soak: jobs of the random collective and point-to-point tests pass on a sound build;
  # jobs that fail (an algorithm that does not exist, an eager limit that is not a size: either
  # stops MPI_Init) are counted and printed with the command that repeats them
  soak() { "$SRC/scripts/soak" --jobs 2 --np 2-3 --ops "$1" --seed 5 --build "$BUILD" "${@:2}"; }
  for t in coll p2p; do
    n=30; [ $t = p2p ] && n=5
    soak $n --test $t > "$work/soak.log" 2>&1 || { cat "$work/soak.log"; fail "soak --test $t failed on a sound build"; }
    grep -q "^soak: ${t}_random, seeds from 5, 2-3 ranks" "$work/soak.log" && grep -q "^soak: 2 jobs, 0 failed$" "$work/soak.log" \
      || { cat "$work/soak.log"; fail "soak --test $t: no summary"; }
  done
  soak 30 --env COHORT_ALLTOALLV_ALGORITHM=no_such > "$work/soak.log" 2>&1 \
    && { cat "$work/soak.log"; fail "soak passed jobs that cannot run"; }
  grep -q "^soak: 2 jobs, 2 failed$" "$work/soak.log" || { cat "$work/soak.log"; fail "soak: failures miscounted"; }
  grep -q "COHORT_ALLTOALLV_ALGORITHM=no_such COLL_RANDOM_SEED=5 .*t_coll_random$" "$work/soak.log" \
    || { cat "$work/soak.log"; fail "soak: no command that repeats the failed job"; }
  soak 5 --test p2p --env COHORT_EAGER_LIMIT=lots > "$work/soak.log" 2>&1 \
    && { cat "$work/soak.log"; fail "soak --test p2p passed jobs that cannot run"; }
  grep -q "^soak: 2 jobs, 2 failed$" "$work/soak.log" || { cat "$work/soak.log"; fail "soak --test p2p: failures miscounted"; }
  grep -q "COHORT_EAGER_LIMIT=lots P2P_RANDOM_SEED=5 P2P_RANDOM_EPOCHS=5 .*t_p2p_random$" "$work/soak.log" \
    || { cat "$work/soak.log"; fail "soak --test p2p: no command that repeats the failed job"; }
  ;;
*) echo "unknown scenario"; exit 2 ;;
esac
echo "ok [$SCENARIO]"
