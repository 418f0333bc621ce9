#!/bin/bash
# Self-tuning broadcasts under link emulation (docs/tuning.md).
#   search:   8 ranks where rank 0 reaches rank 1 in 50 us and ranks 2-7 in 10 ms: the search
#             ends with a tree in which the root sends to rank 1 alone; the next run uses the
#             remembered tree without timing a call; another topology is another entry.
#   damaged:  a store that is not a database, or cannot be written, leaves broadcasts right
#             (a warning), and `cohort tune` reports it.
#   topology: a topology file that is missing or malformed stops the job with a clear error.
#   tune.sh MPIEXEC PROG COHORT SCENARIO
set -u
MPIEXEC=$1 PROG=$2 COHORT=$3 SCENARIO=$4
unset MPIEXEC_TIMEOUT
out=$(mktemp -d "${TMPDIR:-/tmp}/cohort-tune-test.XXXXXX")
trap 'rm -rf "$out"' EXIT
export COHORT_TUNE_DB=$out/tune.db
fail() { echo "FAIL [$SCENARIO]: $*"; for f in "$out"/log*; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }
printf '# rank 0 reaches rank 1 quickly, the others slowly\ndefault 50\nlink 0 2-7 10000\n' > "$out/topo"

# the entry of root 0, 8 ranks, class 10 (512-1023 bytes): "found|still TRIALS RUNS PARENTS"
entry() {
  "$COHORT" tune > "$out/log.tune" 2>&1 || fail "cohort tune failed"
  awk -v want="$1" '
    /^locations / { loc = $0; next }
    /^  root 0, messages of 512-1023 bytes, 8 ranks:/ && index(loc, want) {
      state = ($0 ~ /: found after/) ? "found" : "still"
      match($0, /after [0-9]+ timed/); trials = substr($0, RSTART + 6, RLENGTH - 12)
      match($0, /\([0-9]+ run/); runs = substr($0, RSTART + 1, RLENGTH - 5)
      getline; sub(/.*parents: /, ""); print state, trials, runs, $0; exit }' "$out/log.tune"
}
run() { # run LOG [ENV...]
  local log=$1; shift
  env "$@" "$MPIEXEC" -n 8 "$PROG" 600 1000 0 > "$out/$log" 2>&1 || fail "the job failed ($log)"
  grep -q "600 calls of 1000 bytes from 0 checked" "$out/$log" || fail "no result ($log)"
}

case "$SCENARIO" in
search)
  run log.run1 COHORT_EMU_TOPOLOGY="$out/topo"
  read -r state trials runs parents <<< "$(entry "ranks:0,1,2,3,4,5,6,7")"
  [ "${state:-}" = found ] || fail "the search did not end: '$state $trials $runs $parents'"
  [ "$runs" = 1 ] || fail "runs $runs after one run"
  # parents[k] for k = 0..7: only rank 1 may hang below the root
  set -- $parents
  [ $# = 8 ] && [ "$1" = -1 ] || fail "not a tree of 8 ranks rooted at 0: $parents"
  [ "$2" = 0 ] || fail "rank 1 (the fast link) is not the root's child: $parents"
  shift 2
  for p in "$@"; do [ "$p" != 0 ] || fail "a slow link from the root is in the tree: $parents"; done
  # the next run starts from the remembered tree and times nothing
  run log.run2 COHORT_EMU_TOPOLOGY="$out/topo"
  read -r state2 trials2 runs2 parents2 <<< "$(entry "ranks:0,1,2,3,4,5,6,7")"
  [ "$state2 $trials2 $runs2 $parents2" = "found $trials 2 $parents" ] ||
    fail "run 2 changed the entry: '$state $trials $runs $parents' -> '$state2 $trials2 $runs2 $parents2'"
  # COHORT_TUNE_AGAIN searches again from it
  run log.run3 COHORT_EMU_TOPOLOGY="$out/topo" COHORT_TUNE_AGAIN=1
  read -r state3 trials3 runs3 parents3 <<< "$(entry "ranks:0,1,2,3,4,5,6,7")"
  [ "$runs3" = 3 ] && [ "$trials3" -gt "$trials" ] || fail "COHORT_TUNE_AGAIN did not search: '$state3 $trials3 $runs3'"
  # another topology is other locations: an entry of its own
  printf 'default 50\nlink 0 * 400\n' > "$out/topo2"
  run log.run4 COHORT_EMU_TOPOLOGY="$out/topo2"
  [ "$(grep -c '^locations .*ranks:0,1,2,3,4,5,6,7$' "$out/log.tune")" -ge 1 ] || fail "no entries"
  "$COHORT" tune > "$out/log.tune" 2>&1
  [ "$(grep -c '^  root 0, messages of 512-1023 bytes, 8 ranks' "$out/log.tune")" = 2 ] ||
    fail "the second topology did not get an entry of its own"
  "$COHORT" tune --forget > "$out/log.forget" 2>&1 || fail "cohort tune --forget failed"
  "$COHORT" tune | grep -q "^0 entries" || fail "entries left after --forget"
  ;;
damaged)
  head -c 3000 /dev/urandom > "$COHORT_TUNE_DB"
  run log.garbage COHORT_EMU_TOPOLOGY="$out/topo"
  grep -q "tuning store $COHORT_TUNE_DB" "$out/log.garbage" || fail "no warning about the store"
  "$COHORT" tune > "$out/log.tune" 2>&1 && fail "cohort tune read a damaged store"
  grep -q "cohort: tuning store" "$out/log.tune" || fail "cohort tune gave no reason"
  run log.nodir COHORT_EMU_TOPOLOGY="$out/topo" COHORT_TUNE_DB=/proc/cohort-none/tune.db
  grep -q "tuning store /proc/cohort-none/tune.db" "$out/log.nodir" || fail "no warning about the store"
  run log.none COHORT_EMU_TOPOLOGY="$out/topo" COHORT_TUNE_DB=none
  ;;
topology)
  expect() { # expect WHAT FILE
    "$MPIEXEC" -n 8 "$PROG" 5 1000 0 > "$out/log.bad" 2>&1 && fail "$1: the job ran"
    grep -q "cohort: cannot start: COHORT_EMU_TOPOLOGY=$2" "$out/log.bad" || fail "$1: no clear error"
  }
  COHORT_EMU_TOPOLOGY=$out/missing expect "a missing file" "$out/missing: No such file"
  for bad in "link 0 8 10" "link 0 1" "default -5" "default 10 x" "wire 0 1 10" "link 3-1 0 10" \
             "link 0 1 10 20 30"; do
    printf 'default 5\n%s\n' "$bad" > "$out/bad"
    COHORT_EMU_TOPOLOGY=$out/bad expect "'$bad'" "$out/bad: line 2"
  done
  ;;
*) echo "unknown scenario $SCENARIO"; exit 2 ;;
esac
echo "tune.$SCENARIO: passed"
