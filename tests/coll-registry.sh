#!/bin/sh
# The collective registry as `cohort info` lists it: every algorithm of every collective is
# forced by one of the test variants in tests/coll.cmake (so each is tested), and an unknown
# algorithm name stops MPI_Init with a message naming the setting.
# Usage: coll-registry.sh <build dir> <source dir>
build=$1
src=$2
out=$("$build/bin/cohort" info) || { echo "cohort info failed"; exit 1; }
echo "$out" | grep -q '^Collective algorithms' || { echo "no collective listing"; exit 1; }
fail=0
n=0
# lines "  <coll>   COHORT_<X>_ALGORITHM = ..." then "      <alg>   <doc>"
echo "$out" | sed -n '/^Collective algorithms/,$p' | tail -n +2 | {
    while IFS= read -r line; do
        case "$line" in
        "      "*)
            alg=$(echo "$line" | awk '{print $1}')
            n=$((n + 1))
            if ! grep -q "COHORT_${setting}=${alg}\b" "$src/tests/coll.cmake"; then
                echo "not forced by any test variant: COHORT_${setting}=${alg}"
                fail=1
            fi
            ;;
        "  "*)
            setting=$(echo "$line" | awk '{print $2}' | sed 's/^COHORT_//')
            ;;
        esac
    done
    echo "$n algorithms listed"
    [ "$n" -ge 40 ] || fail=1
    exit $fail
} || exit 1
msg=$(COHORT_ALLREDUCE_ALGORITHM=no_such "$build/bin/mpiexec" -n 1 "$build/tests/t_coll_ops" 2>&1)
if [ $? -eq 0 ]; then
    echo "an unknown algorithm name did not stop MPI_Init"
    exit 1
fi
echo "$msg" | grep -q 'COHORT_ALLREDUCE_ALGORITHM=no_such: unknown allreduce algorithm' || {
    echo "unclear message for an unknown algorithm: $msg"
    exit 1
}
# Init's failure ends the rank there (errors are fatal by default), not at the next call
if echo "$msg" | grep -q 'called before MPI_Init'; then
    echo "the program went on after MPI_Init failed: $msg"
    exit 1
fi
echo "$msg" | grep -q 'MPI_Init(rank 0): initialisation failed (MPI_ERR_ARG)' || {
    echo "no fatal MPI_Init error: $msg"
    exit 1
}
echo "ok"
