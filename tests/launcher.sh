#!/bin/bash
# Launcher behaviour: how mpiexec ends a job when a rank fails, its exit status and message,
# output forwarding, stdin, environment, several programs in one job (MPMD), binding and
# placement options, and timeouts; and that no job, however it ends, leaves anything in /dev/shm or /tmp or any
# process behind.
#   launcher.sh MPIEXEC PROG SCENARIO
set -u
MPIEXEC=$1 PROG=$2 SCENARIO=$3
unset MPIEXEC_TIMEOUT # a limit from the caller's environment would change the scenarios
out=$(mktemp -d "${TMPDIR:-/tmp}/cohort-launcher-test.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL [$SCENARIO]: $*"; echo "--- stdout"; cat "$out/stdout"; echo "--- stderr"; cat "$out/stderr"; exit 1; }

# The test harness's own temporary folders (cohort-<name>-test.*, also made by tests running
# alongside) and the compiler's are not the library's doing.
snapshot() { ls -A /dev/shm; ls -A /tmp | grep -v -e '^cc......\.' -e '^cohort-[a-z]*-test\.' -e '^ctest'; }
snapshot | sort > "$out/before"

# run NP [mpiexec options --] args...: runs the job, records its status and output
run() {
  local np=$1; shift
  local opts=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
  shift
  "$MPIEXEC" -n "$np" "${opts[@]}" "$PROG" "$@" > "$out/stdout" 2> "$out/stderr" < "${STDIN:-/dev/null}"
  status=$?
}

expect_status() { [ "$status" -eq "$1" ] || fail "exit status $status, expected $1"; }
expect_err() { grep -Eq -- "$1" "$out/stderr" || fail "stderr lacks /$1/"; }
expect_out() { grep -Eq -- "$1" "$out/stdout" || fail "stdout lacks /$1/"; }
# every pid the job printed must be gone
expect_no_survivors() {
  for p in $(sed -n 's/^\(\[[0-9]*\] \)\{0,1\}pid \([0-9]*\).*/\2/p' "$out/stdout"); do
    for i in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && fail "process $p survived the job"
  done
  return 0
}

# Under AddressSanitizer (make check-sanitize) a segfault is caught and reported as exit
# status 1; the crash scenarios want it to kill the rank as it would in a normal build.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"

case "$SCENARIO" in
ok)
  run 4 -- ok
  expect_status 0
  [ "$(grep -c '^hello from' "$out/stdout")" -eq 4 ] || fail "expected 4 hello lines"
  ;;
segv)
  run 4 -- segv 2
  expect_status 139
  expect_err "^mpiexec: rank 2 \(pid [0-9]+\) killed by signal 11 \(Segmentation fault\)$"
  expect_no_survivors
  ;;
collsegv)
  # rank 2 dies while the others are inside collectives (shared-segment waits and
  # single-copy reads of its memory): the job ends with its signal, nobody hangs
  run 4 -- collsegv 2 5
  expect_status 139
  expect_err "^mpiexec: rank 2 \(pid [0-9]+\) killed by signal 11 \(Segmentation fault\)$"
  expect_no_survivors
  ;;
exit)
  run 4 -- exit 1 3
  expect_status 3
  expect_err "^mpiexec: rank 1 \(pid [0-9]+\) exited with status 3$"
  expect_no_survivors
  ;;
abort)
  run 4 -- abort 3 7
  expect_status 7
  expect_err "^mpiexec: rank 3 \(pid [0-9]+\) called MPI_Abort with error code 7$"
  expect_no_survivors
  ;;
nofinalize)
  run 3 -- nofinalize 1
  expect_status 1
  expect_err "^mpiexec: rank 1 \(pid [0-9]+\) exited without calling MPI_Finalize$"
  expect_no_survivors
  ;;
fataltag)
  run 2 -- fataltag 1
  expect_status 4
  expect_err "^MPI_Send\(rank 1\): invalid tag -5 \(MPI_ERR_TAG\)$"
  expect_err "^mpiexec: rank 1 \(pid [0-9]+\) stopped by a fatal MPI error \(MPI_ERR_TAG\)$"
  expect_no_survivors
  ;;
timeout)
  run 3 --timeout 1 -- hang
  expect_status 124
  expect_err "^mpiexec: job timed out after 1 seconds"
  expect_no_survivors
  # MPIEXEC_TIMEOUT, as Open MPI's and MPICH's launchers read it; --timeout wins over it
  MPIEXEC_TIMEOUT=1 run 2 -- hang
  expect_status 124
  expect_err "^mpiexec: job timed out after 1 seconds"
  expect_no_survivors
  MPIEXEC_TIMEOUT=600 run 2 --timeout 1 -- hang
  expect_status 124
  expect_err "^mpiexec: job timed out after 1 seconds"
  expect_no_survivors
  MPIEXEC_TIMEOUT=soon run 1 -- ok
  expect_status 2
  expect_err "^mpiexec: MPIEXEC_TIMEOUT='soon' is not a number of seconds from 0 \(no limit\) to 1000000000$"
  # 0 or empty: no limit, as in Open MPI and MPICH; absurd sizes are refused, not wrapped
  for v in 0 ""; do
    MPIEXEC_TIMEOUT=$v run 2 -- ok
    expect_status 0
  done
  MPIEXEC_TIMEOUT=1e300 run 1 -- ok
  expect_status 2
  run 1 --timeout inf -- ok
  expect_status 2
  expect_err "^mpiexec: --timeout needs a positive number of seconds \(at most 1000000000\)$"
  ;;
deadlock)
  # every rank sends a large message to the next and none receives: mpiexec lists where
  # each waits, and the sends end the job (a blocked send cannot be taken back)
  run 3 --timeout 60 -- deadlock
  expect_status 16
  expect_err "^mpiexec: deadlock: every rank has waited [0-9]+ ms in MPI calls"
  for r in 0 1 2; do
    expect_err "^mpiexec:   rank $r: MPI_Send: send to rank $(( (r + 1) % 3 )) \(tag 0\) on MPI_COMM_WORLD, which no receive there has matched$"
  done
  expect_err "deadlock: every rank of the job waits in an MPI call and none can go on"
  expect_err "^mpiexec: rank [0-2] \(pid [0-9]+\) stopped by a fatal MPI error \(MPI_ERR_OTHER\)$"
  expect_no_survivors
  ;;
nbcdiffer)
  # ranks that start different nonblocking collectives never take each other's messages
  # (the collective is in the tags): blocks of 32768 ints go point to point, and the
  # deadlock report names each call
  run 3 --timeout 60 -- nbcdiffer 32768
  expect_status 16
  expect_err "^mpiexec: deadlock: every rank has waited [0-9]+ ms in MPI calls"
  for r in 0 2; do
    expect_err "^mpiexec:   rank $r: MPI_Wait: nonblocking collective call 1 on MPI_COMM_WORLD: allreduce$"
  done
  expect_err "^mpiexec:   rank 1: MPI_Wait: nonblocking collective call 1 on MPI_COMM_WORLD: allgather$"
  expect_err "^mpiexec: rank [0-2] \(pid [0-9]+\) stopped by a fatal MPI error \(MPI_ERR_OTHER\)$"
  expect_no_survivors
  # 4 ints may go through the shared buffers, where a rank that finds the other collective's
  # tag says the calls disagree; or point to point, as above
  run 3 --timeout 60 -- nbcdiffer 4
  expect_status 16
  if grep -q "^mpiexec: deadlock:" "$out/stderr"; then
    expect_err "^mpiexec: deadlock: every rank has waited [0-9]+ ms in MPI calls"
    for r in 0 2; do
      expect_err "^mpiexec:   rank $r: MPI_Wait: nonblocking collective call 1 on MPI_COMM_WORLD: allreduce$"
    done
    expect_err "^mpiexec:   rank 1: MPI_Wait: nonblocking collective call 1 on MPI_COMM_WORLD: allgather$"
  else
    expect_err "^MPI_Wait\(rank [0-2]\): nonblocking collective failed: the ranks' calls disagree"
  fi
  expect_err "^mpiexec: rank [0-2] \(pid [0-9]+\) stopped by a fatal MPI error \(MPI_ERR_OTHER\)$"
  expect_no_survivors
  ;;
nowatch)
  # with the watch off, the same deadlock runs into the timeout
  COHORT_DEADLOCK_MS=0 run 2 --timeout 3 -- deadlock
  expect_status 124
  grep -q "deadlock" "$out/stderr" && fail "the watch is off but reported a deadlock"
  expect_no_survivors
  ;;
killed)
  # mpiexec itself dies without a chance to clean up: its ranks must die with it
  "$MPIEXEC" -n 3 "$PROG" sleep > "$out/stdout" 2> "$out/stderr" &
  mp=$!
  for i in $(seq 600); do [ "$(grep -c '^pid' "$out/stdout")" -eq 3 ] && break; sleep 0.05; done
  [ "$(grep -c '^pid' "$out/stdout")" -eq 3 ] || fail "ranks did not start"
  kill -KILL $mp
  wait $mp 2>/dev/null
  expect_no_survivors
  ;;
interrupted)
  "$MPIEXEC" -n 2 "$PROG" hang > "$out/stdout" 2> "$out/stderr" &
  mp=$!
  for i in $(seq 600); do [ "$(grep -c '^pid' "$out/stdout")" -eq 2 ] && break; sleep 0.05; done
  [ "$(grep -c '^pid' "$out/stdout")" -eq 2 ] || fail "ranks did not start"
  kill -TERM $mp
  wait $mp
  status=$?
  expect_status 143
  expect_err "received signal 15"
  expect_no_survivors
  ;;
badprog)
  "$MPIEXEC" -n 2 /nonexistent/program > "$out/stdout" 2> "$out/stderr"
  status=$?
  expect_status 127
  expect_err "cannot run '/nonexistent/program': No such file or directory"
  ;;
badargs)
  "$MPIEXEC" -n 0 "$PROG" ok > "$out/stdout" 2> "$out/stderr"; status=$?
  expect_status 2
  expect_err "positive number of ranks"
  "$MPIEXEC" --bogus "$PROG" > "$out/stdout" 2> "$out/stderr"; status=$?
  expect_status 2
  expect_err "unknown option '--bogus'"
  ;;
rootdiffer)
  # a broadcast whose ranks name different roots returns success everywhere (no rank
  # waits); MPI_Finalize finds the ranks' signatures apart and ends the job
  run 3 --timeout 60 -- rootdiffer
  expect_status 16
  expect_err "^MPI_Finalize\(rank [0-2]\): rank [0-2] (and this rank disagree on an earlier collective call|abandoned collective call [0-9]+) on MPI_COMM_WORLD"
  expect_err "^mpiexec: rank [0-2] \(pid [0-9]+\) stopped by a fatal MPI error \(MPI_ERR_OTHER\)$"
  expect_no_survivors
  ;;
stdin)
  seq 1 100000 > "$out/input"
  STDIN="$out/input" run 3 -- stdin
  expect_status 0
  expect_out "^rank 0 stdin lines=100000 bytes=$(stat -c %s "$out/input")$"
  expect_out "^rank 1 stdin lines=0 bytes=0$"
  expect_out "^rank 2 stdin lines=0 bytes=0$"
  ;;
env)
  run 2 -x LAUNCH_TEST_SET=42 -- env 0 LAUNCH_TEST_SET
  expect_status 0
  [ "$(grep -c '^rank [01] LAUNCH_TEST_SET=42$' "$out/stdout")" -eq 2 ] || fail "-x not applied"
  run 2 -genv LAUNCH_TEST_SET 'four two' -- env 0 LAUNCH_TEST_SET
  expect_status 0
  [ "$(grep -c '^rank [01] LAUNCH_TEST_SET=four two$' "$out/stdout")" -eq 2 ] || fail "-genv not applied"
  "$MPIEXEC" -n 1 -env LAUNCH_TEST_SET > "$out/stdout" 2> "$out/stderr" < /dev/null
  status=$?
  expect_status 2
  expect_err "^mpiexec: -env needs a NAME and a VALUE$"
  "$MPIEXEC" -n 1 -genv A=B C "$PROG" ok > "$out/stdout" 2> "$out/stderr" < /dev/null
  status=$?
  expect_status 2
  expect_err "^mpiexec: -genv needs a NAME and a VALUE$"
  COHORT_LOG_LEVEL=1 run 1 -- ok
  expect_status 0
  # mpiexec measures what a single-copy read costs and gives every rank the same figure,
  # unless the user has set it
  run 2 -- env 0 COHORT_CMA_COST
  expect_status 0
  cost=$(sed -n 's/^rank 0 COHORT_CMA_COST=\([1-9][0-9]*\)$/\1/p' "$out/stdout")
  [ -n "$cost" ] || fail "no measured COHORT_CMA_COST"
  expect_out "^rank 1 COHORT_CMA_COST=$cost$"
  COHORT_CMA_COST=777 run 2 -- env 0 COHORT_CMA_COST
  [ "$(grep -c '^rank [01] COHORT_CMA_COST=777$' "$out/stdout")" -eq 2 ] || fail "user's COHORT_CMA_COST replaced"
  # a job run under valgrind has single copy off, unless the user chose; a stand-in named
  # valgrind (it drops its options and runs the program) stands for the real one
  mkdir "$out/vg"
  printf '#!/bin/sh\nwhile [ "${1#-}" != "$1" ]; do shift; done\nexec "$@"\n' > "$out/vg/valgrind"
  chmod +x "$out/vg/valgrind"
  vg() { "$MPIEXEC" -n 2 "$@" "$out/vg/valgrind" -q "$PROG" env 0 COHORT_CMA > "$out/stdout" 2> "$out/stderr" < /dev/null; status=$?; }
  vg
  expect_status 0
  [ "$(grep -c '^rank [01] COHORT_CMA=0$' "$out/stdout")" -eq 2 ] || fail "single copy on under valgrind"
  COHORT_CMA=1 vg
  [ "$(grep -c '^rank [01] COHORT_CMA=1$' "$out/stdout")" -eq 2 ] || fail "user's COHORT_CMA replaced"
  vg -x COHORT_CMA=1
  [ "$(grep -c '^rank [01] COHORT_CMA=1$' "$out/stdout")" -eq 2 ] || fail "-x COHORT_CMA replaced"
  run 2 -- env 0 COHORT_CMA
  [ "$(grep -c '^rank [01] COHORT_CMA=(unset)$' "$out/stdout")" -eq 2 ] || fail "COHORT_CMA set without valgrind"
  ;;
mpmd)
  # several programs as one job: consecutive ranks, one MPI_COMM_WORLD, MPI_APPNUM; -n, -x,
  # -env and -wdir for their own part, -genv and the rest for the whole job
  mpmd() { "$MPIEXEC" "$@" > "$out/stdout" 2> "$out/stderr" < /dev/null; status=$?; }
  mkdir "$out/wd"
  mpmd -n 2 -x LAUNCH_A=1 "$PROG" appnum 0 x : -n 3 -wdir "$out/wd" -env LAUNCH_A 2 \
    -genv LAUNCH_B b "$PROG" appnum 0 y : --tag-output "$PROG" appnum 0 z
  expect_status 0
  # (MPI_INFO_ENV's maxprocs is the part's -n, its wdir where the rank started)
  for r in 0 1; do expect_out "^\[$r\] rank $r of 6 app 0 arg x dir $PWD appsum 5 part size 2 ranksum 1 maxprocs 2 wdir $PWD$"; done
  for r in 2 3 4; do expect_out "^\[$r\] rank $r of 6 app 1 arg y dir $out/wd appsum 5 part size 3 ranksum 9 maxprocs 3 wdir $out/wd$"; done
  expect_out "^\[5\] rank 5 of 6 app 2 arg z dir $PWD appsum 5 part size 1 ranksum 5 maxprocs 1 wdir $PWD$"
  mpmd -n 2 -x LAUNCH_A=1 "$PROG" env 0 LAUNCH_A : -env LAUNCH_A 2 "$PROG" env 0 LAUNCH_A : \
    "$PROG" env 0 LAUNCH_A
  expect_status 0
  expect_out "^rank [01] LAUNCH_A=1$"
  expect_out "^rank 2 LAUNCH_A=2$"
  expect_out "^rank 3 LAUNCH_A=\(unset\)$"
  mpmd -n 2 "$PROG" env 0 LAUNCH_B : -genv LAUNCH_B 7 "$PROG" env 0 LAUNCH_B
  expect_status 0
  [ "$(grep -c '^rank [012] LAUNCH_B=7$' "$out/stdout")" -eq 3 ] || fail "-genv not for every part"
  # one job: a rank of the second program that fails ends the first program's ranks too
  mpmd -n 2 "$PROG" exit 2 3 : -n 2 "$PROG" exit 2 3
  expect_status 3
  expect_err "^mpiexec: rank 2 \(pid [0-9]+\) exited with status 3$"
  # a single program sees MPI_APPNUM 0
  run 2 -- appnum 0 w
  expect_status 0
  expect_out "^rank 1 of 2 app 0 arg w dir $PWD appsum 0 part size 2 ranksum 1 maxprocs 2 wdir $PWD$"
  # mistakes are said before anything starts
  mpmd -n 1 "$PROG" ok :
  expect_status 2
  expect_err "^mpiexec: no program given in part 2 of 2 \(parts are separated by ':'\)$"
  mpmd -n 1 "$PROG" ok : : "$PROG" ok
  expect_status 2
  expect_err "no program given in part 2 of 3"
  mpmd -n 1 "$PROG" ok : -n 0 "$PROG" ok
  expect_status 2
  expect_err "positive number of ranks"
  mpmd -n 1 "$PROG" ok : -x COHORT_LOG_LEVEL=2 "$PROG" ok
  expect_status 2
  expect_err "^mpiexec: -x COHORT_LOG_LEVEL: with several programs, Cohort's settings must be the same for every rank; give it with -genv or in the environment$"
  mpmd -env COHORT_LOG_LEVEL 2 "$PROG" ok : "$PROG" ok
  expect_status 2
  expect_err "^mpiexec: -env COHORT_LOG_LEVEL: with several"
  mpmd -n 2 -wdir "$out/none" "$PROG" ok
  expect_status 2
  expect_err "^mpiexec: -wdir needs a directory \('$out/none' is not one\)$"
  mpmd -genv COHORT_LOG_LEVEL 1 "$PROG" ok : "$PROG" ok
  expect_status 0
  mpmd -n 1 "$PROG" ok : /nonexistent/program
  expect_status 127
  expect_err "cannot run '/nonexistent/program'"
  ;;
hosts)
  # host lists and files are accepted when they name only this machine (slot counts ignored)
  me=$(hostname)
  run 2 -host localhost -- ok
  expect_status 0
  expect_out "^hello from 1 of 2$"
  run 3 --host "$me:2,localhost:1,127.0.0.1" -- ok
  expect_status 0
  run 1 -H "${me%%.*}" -- ok
  expect_status 0
  printf '# this machine twice\nlocalhost slots=4\n\n  %s:2   # and by name\n' "$me" > "$out/hosts"
  run 2 -hostfile "$out/hosts" -- ok
  expect_status 0
  run 2 -machinefile "$out/hosts" -- ok
  expect_status 0
  # anything else is said before a rank starts
  run 2 -host "localhost,node-elsewhere:4" -- ok
  expect_status 2
  expect_err "^mpiexec: -host: host 'node-elsewhere' is not this machine; Cohort runs a job on one machine$"
  grep -q "hello" "$out/stdout" && fail "ranks started"
  printf 'localhost\nnode-elsewhere slots=2\n' > "$out/hosts2"
  run 2 --hostfile "$out/hosts2" -- ok
  expect_status 2
  expect_err "^mpiexec: --hostfile \($out/hosts2, line 2\): host 'node-elsewhere' is not this machine"
  run 2 -f "$out/missing" -- ok
  expect_status 2
  expect_err "^mpiexec: -f needs a readable host file \('$out/missing': No such file or directory\)$"
  run 2 -hosts "" -- ok
  expect_status 2
  expect_err "^mpiexec: -hosts needs a host name$"
  ;;
tagoutput)
  run 3 --tag-output -- ok
  expect_status 0
  for r in 0 1 2; do expect_out "^\[$r\] hello from $r of 3$"; done
  ;;
lines)
  # 4 ranks print long lines at once: every line must arrive whole
  run 4 -- spam 2000
  expect_status 0
  # a whole line: rank=R line=I followed by 200 copies of R's letter
  n=$(awk '/^rank=[0-3] line=[0-9]+ [a-d]+$/ {
             split($1, kv, "="); letter = substr("abcd", kv[2] + 1, 1)
             if (length($3) == 200 && $3 !~ "[^" letter "]") good++ }
           END { print good + 0 }' "$out/stdout")
  bad=$(grep -vE '^(rank=[0-3] line=[0-9]+ [a-d]{200}|pid [0-9]+ rank [0-3])$' "$out/stdout" | head -3)
  [ -z "$bad" ] || fail "mangled lines: $bad"
  [ "$n" -eq 8000 ] || fail "expected 8000 whole lines, got $n"
  ;;
binding)
  ncpu=$(nproc)
  run 1 --bind-to core -- affinity
  expect_status 0
  expect_out "^rank 0 cpus=1$"
  run 2 --bind-to none -- affinity
  expect_status 0
  expect_out "^rank 1 cpus=$ncpu$"
  if [ "$ncpu" -gt 1 ]; then
    # more ranks than cores, not evenly: not bound (asked for: said so)
    run $((ncpu + 1)) -- affinity
    expect_status 0
    expect_out "^rank 0 cpus=$ncpu$"
    run $((ncpu + 1)) --bind-to core -- affinity
    expect_status 0
    expect_out "^rank $ncpu cpus=$ncpu$"
    expect_err "cannot bind $((ncpu + 1)) ranks evenly to $ncpu cores; not binding"
  fi
  # twice as many ranks as cores: bound, consecutive ranks sharing a core
  run $((2 * ncpu)) -- affinity
  expect_status 0
  for r in 0 1 $((2 * ncpu - 1)); do expect_out "^rank $r cpus=1$"; done
  f0=$(sed -n 's/^rank 0 first=//p' "$out/stdout")
  f1=$(sed -n 's/^rank 1 first=//p' "$out/stdout")
  [ -n "$f0" ] && [ "$f0" = "$f1" ] || fail "ranks 0 and 1 on cpus '$f0' and '$f1', not one"
  if [ "$ncpu" -gt 1 ]; then
    f2=$(sed -n 's/^rank 2 first=//p' "$out/stdout")
    [ -n "$f2" ] && [ "$f2" != "$f0" ] || fail "ranks 0 and 2 both on cpu '$f0'"
  fi
  run $((2 * ncpu)) --bind-to none -- affinity
  expect_status 0
  expect_out "^rank 1 cpus=$ncpu$"
  ;;
placement)
  # --map-by, --bind-to levels, cores per rank, --report-bindings, -ppn (docs/runtime.md,
  # "Placement"); what each rank finds itself bound to must be what mpiexec reported
  ncpu=$(nproc)
  all=$(sed -n 's/^rank 0 list=//p' <("$MPIEXEC" -n 1 --bind-to none "$PROG" affinity))
  [ -n "$all" ] || fail "no CPU list from an unbound rank"
  # reported NP: every rank's set is the one mpiexec reported, and each says bound or not
  reported() {
    for r in $(seq 0 $(($1 - 1))); do
      rep=$(sed -n "s/^mpiexec: rank $r \(bound to\|not bound:\) CPUs\{0,1\} //p" "$out/stderr")
      got=$(sed -n "s/^rank $r list=//p" "$out/stdout")
      [ -n "$rep" ] && [ "$rep" = "$got" ] || fail "rank $r reported on '$rep', runs on '$got'"
    done
  }
  run "$ncpu" --bind-to hwthread --report-bindings -- affinity
  expect_status 0
  reported "$ncpu"
  for r in $(seq 0 $((ncpu - 1))); do expect_out "^rank $r cpus=1$"; done
  [ "$(sed -n 's/^rank [0-9]* first=//p' "$out/stdout" | sort -u | wc -l)" -eq "$ncpu" ] ||
    fail "ranks bound to hardware threads share one"
  run 2 --bind-to socket --report-bindings -- affinity
  expect_status 0
  reported 2
  expect_err "^mpiexec: rank 1 bound to CPUs? "
  run "$((2 * ncpu))" --map-by socket --bind-to socket --report-bindings -- affinity
  expect_status 0
  reported "$((2 * ncpu))"
  # one rank with every CPU: from OMP_NUM_THREADS, from PE= and from --cpus-per-rank
  for opt in "-x OMP_NUM_THREADS=$ncpu" "--map-by slot:PE=$ncpu" "--cpus-per-rank $ncpu" \
      "--bind-to hwthread:$ncpu"; do
    run 1 $opt --report-bindings -- affinity
    expect_status 0
    reported 1
    expect_err "^mpiexec: rank 0 bound to CPUs? $all$"
    expect_out "^rank 0 cpus=$ncpu$"
  done
  if [ "$ncpu" -gt 1 ]; then
    # two ranks that want every CPU each: not bound, and said when PE= asked for it
    OMP_NUM_THREADS=$ncpu run 2 --report-bindings -- affinity
    expect_status 0
    reported 2
    expect_err "^mpiexec: rank 1 not bound: CPUs? $all$"
    ! grep -q "cannot give" "$out/stderr" || fail "said so without being asked to bind"
    run 2 --map-by core:PE=$ncpu -- affinity
    expect_status 0
    expect_err "^mpiexec: cannot give 2 ranks $ncpu cores each: there are [0-9]+; not binding$"
  fi
  # -ppn alone gives the number of ranks; with more ranks than that, refused
  "$MPIEXEC" -ppn 3 "$PROG" affinity > "$out/stdout" 2> "$out/stderr"
  status=$?
  expect_status 0
  [ "$(grep -c '^rank [0-9]* cpus=' "$out/stdout")" -eq 3 ] || fail "-ppn 3 did not start 3 ranks"
  run 5 -ppn 2 -- affinity
  expect_status 2
  expect_err "^mpiexec: -ppn 2: 5 ranks would need 3 machines; Cohort runs a job on one machine$"
  # ppr:1:hwthread alone: one rank per hardware thread
  "$MPIEXEC" --map-by ppr:1:hwthread "$PROG" affinity > "$out/stdout" 2> "$out/stderr"
  status=$?
  expect_status 0
  [ "$(grep -c '^rank [0-9]* cpus=1$' "$out/stdout")" -eq "$ncpu" ] ||
    fail "ppr:1:hwthread did not start one rank per CPU"
  run "$((ncpu + 1))" --map-by ppr:1:hwthread -- affinity
  expect_status 2
  expect_err "^mpiexec: --map-by ppr:1: the job has $ncpu hardware threads? here, so at most $ncpu ranks, not $((ncpu + 1))$"
  run "$((ncpu + 1))" --map-by hwthread:NOOVERSUBSCRIBE -- affinity
  expect_status 2
  expect_err "^mpiexec: NOOVERSUBSCRIBE: the ranks need more hardware threads than the $ncpu"
  # what is refused before anything starts
  for bad in "--map-by bogus" "--map-by core:PE=0" "--bind-to socket:3" "--bind-to user:0+1" \
      "--rank-by bogus" "--cpus-per-rank 0" "-ppn x" "--map-by"; do
    run 1 $bad -- affinity
    expect_status 2
    [ ! -s "$out/stdout" ] || fail "$bad: a rank ran"
    expect_err "^mpiexec: "
  done
  # accepted for scripts of other MPIs
  run 2 --rank-by core --map-by socket:OVERSUBSCRIBE:SPAN --bind-to core:overload-allowed -- affinity
  expect_status 0
  ;;
*)
  echo "unknown scenario $SCENARIO"; exit 2 ;;
esac

snapshot | sort > "$out/after"
left=$(comm -13 "$out/before" "$out/after")
[ -z "$left" ] || fail "left behind in /dev/shm or /tmp: $left"
echo "ok [$SCENARIO]"
