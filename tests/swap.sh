#!/bin/bash
# A rank that dies during rank swaps (docs/migration.md): the job ends with the death reported,
# whichever phase of a swap it hits, and never hangs.
#   swap.sh MPIEXEC PROG
set -u
MPIEXEC=$1 PROG=$2
unset MPIEXEC_TIMEOUT
log=$(mktemp "${TMPDIR:-/tmp}/cohort-swap-test.XXXXXX")
trap 'rm -f "$log"' EXIT
fail() { echo "FAIL: $*"; cat "$log"; exit 1; }
"$MPIEXEC" -n 4 "$PROG" > "$log" 2>&1 || fail "swaps without a crash failed"
grep -q "swap_crash: 20 swaps" "$log" || fail "no word of the swaps"
moved=0
for i in $(seq 0 11); do
  us=$((i * 6000 + 200))
  start=$(date +%s)
  "$MPIEXEC" -n 4 --timeout 60 "$PROG" "$us" > "$log" 2>&1
  st=$?
  took=$(($(date +%s) - start))
  [ $st -ne 0 ] || fail "killed after $us us: status 0"
  # mpiexec reports the death, or a peer that was copying from the process does first
  grep -q "killed by signal 9\|process [0-9]* failed: that process has ended" "$log" ||
    fail "killed after $us us: status $st without the death reported"
  grep -q "timed out\|deadlock" "$log" && fail "killed after $us us: the job hung"
  grep -q "launched as rank 3" "$log" && moved=$((moved + 1))
  echo "killed after $us us: status $st in ${took}s: $(grep -m1 'signal\|has ended' "$log")"
done
# the dying process held another rank than its launch rank at some of those moments, and
# mpiexec said which
[ $moved -gt 0 ] || fail "no report names the rank the dying process held (launched as rank 3)"
