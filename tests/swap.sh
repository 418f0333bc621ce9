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
# The pairs are the same every run: after its second swap the last launched process (launch
# rank 3) holds world rank 0, and no later swap of the nine that a dying run makes gives it
# rank 3 back (the tenth would: a run that went on swapping until its timer fired named the
# process "rank 3" when the swaps were quick).
for i in $(seq 0 11); do
  after=$((i / 4 * 2)) us=$((i % 4 * 3000 + 200))
  start=$(date +%s)
  "$MPIEXEC" -n 4 --timeout 60 "$PROG" "$us" "$after" > "$log" 2>&1
  st=$?
  took=$(($(date +%s) - start))
  what="killed $us us after swap $after"
  [ $st -ne 0 ] || fail "$what: status 0"
  # mpiexec reports the death, or a peer that was copying from the process does first, or a
  # peer that learnt it from that one
  grep -q "killed by signal 9\|process [0-9]* failed: that process has ended\|process [0-9]* has ended" "$log" ||
    fail "$what: status $st without the death reported"
  grep -q "timed out\|deadlock" "$log" && fail "$what: the job hung"
  # mpiexec names the world rank the process held then
  if [ "$after" -ge 2 ] && grep -q "killed by signal 9" "$log"; then
    grep -q "(launched as rank 3) (pid [0-9]*) killed by signal 9" "$log" ||
      fail "$what: the report does not name the rank the process held"
  fi
  echo "$what: status $st in ${took}s: $(grep -m1 'signal\|has ended' "$log")"
done
