#!/bin/bash
# Checkpoints and crashes (docs/checkpoint.md): a rank that dies while the job checkpoints
# leaves the last complete checkpoint restorable, whichever moment it dies at; `cohort
# checkpoint` describes a whole file and refuses a damaged one.
#   ckpt.sh MPIEXEC PROG COHORT SCENARIO
set -u
MPIEXEC=$1 PROG=$2 COHORT=$3 SCENARIO=$4
unset MPIEXEC_TIMEOUT
out=$(mktemp -d "${TMPDIR:-/tmp}/cohort-ckpt-test.XXXXXX")
trap 'rm -rf "$out"' EXIT
ck=$out/job.ck
fail() { echo "FAIL [$SCENARIO]: $*"; for f in "$out"/log*; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

case "$SCENARIO" in
crash)
  # step 1 written whole, then steps 2.. each with the last rank killed at another moment
  "$MPIEXEC" -n 4 "$PROG" write 1 "$ck" > "$out/log" 2>&1 || fail "the first checkpoint failed"
  last=1
  for i in $(seq 2 13); do
    us=$(( (i - 2) * 4500 + 100 ))
    "$MPIEXEC" -n 4 "$PROG" write "$i" "$ck" "$us" > "$out/log.write" 2>&1
    st=$?
    if [ $st -eq 0 ]; then
      grep -q "checkpointed $i" "$out/log.write" || fail "step $i: status 0 without the checkpoint"
    else
      grep -q "signal" "$out/log.write" || fail "step $i: status $st, not the rank's death"
    fi
    "$COHORT" checkpoint "$ck" > "$out/log.inspect" 2>&1 || fail "step $i: the checkpoint is not whole"
    "$MPIEXEC" -n 4 "$PROG" restart "$ck" > "$out/log.restart" 2>&1 || fail "step $i: the restart failed"
    got=$(sed -n 's/^restored \([0-9]*\)$/\1/p' "$out/log.restart")
    if [ $st -eq 0 ]; then want=$i; else want="$last or $i"; fi
    case "$got" in
      "$last") [ $st -ne 0 ] || fail "step $i: finished, but step $got restored" ;;
      "$i") last=$i ;;
      *) fail "step $i (killed after $us us, status $st): restored '$got', expected $want" ;;
    esac
    left=""
    [ -e "$ck.tmp" ] && left=", a partial $ck.tmp left"
    echo "step $i: killed after $us us, status $st, restored $got$left"
  done
  ;;
inspect)
  "$MPIEXEC" -n 3 "$PROG" write 7 "$ck" > "$out/log" 2>&1 || fail "the checkpoint failed"
  "$COHORT" checkpoint "$ck" > "$out/log.inspect" 2>&1 || fail "a whole checkpoint refused"
  grep -Eq "^  ranks +3$" "$out/log.inspect" || fail "no rank count"
  grep -Eq "every part checked: whole" "$out/log.inspect" || fail "not said whole"
  size=$(stat -c %s "$ck")
  head -c $((size / 2)) "$ck" > "$out/cut.ck"
  "$COHORT" checkpoint "$out/cut.ck" > "$out/log.cut" 2>&1 && fail "a cut file accepted"
  grep -q "cut short" "$out/log.cut" || fail "the cut is not named"
  cp "$ck" "$out/bad.ck"
  printf '\xff' | dd of="$out/bad.ck" bs=1 seek=$((size - 100)) conv=notrunc 2> /dev/null
  "$COHORT" checkpoint "$out/bad.ck" > "$out/log.bad" 2>&1 && fail "a damaged file accepted"
  grep -q "damaged" "$out/log.bad" || fail "the damage is not named"
  "$COHORT" checkpoint "$out/none.ck" > "$out/log.none" 2>&1 && fail "a missing file accepted"
  echo "inspect: whole, cut and damaged files told apart"
  ;;
*) echo "unknown scenario $SCENARIO"; exit 2 ;;
esac
