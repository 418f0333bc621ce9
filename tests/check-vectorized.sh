#!/bin/sh
# Checks that the compiler vectorises the main reduction kernels of src/op/op.c: compiles it
# as the build does (-O3 -fwrapv) with GCC's vectoriser dump and requires a vectorised loop
# in each listed kernel. Usage: check-vectorized.sh <cc> <source root>. Exit 77 (skipped)
# when the compiler is not GCC, whose dump format this reads.
cc=$1
src=$2
if ! "$cc" --version 2>/dev/null | grep -qi 'gcc\|free software foundation'; then
    echo "not GCC: skipped"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/cohort-vectorized-test.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$cc" -std=c11 -D_GNU_SOURCE -I"$src/include" -O3 -fwrapv -c "$src/src/op/op.c" -o "$dir/op.o" \
    -fopt-info-vec-optimized="$dir/info" -fdump-tree-vect-optimized="$dir/dump" || exit 1
echo "$(grep -c 'loop vectorized' "$dir/info") loops vectorised in op.c"
fail=0
for fn in k_SUM_int k_SUM_float k_SUM_double k_MAX_int k_MAX_float k_MAX_double \
          k_MIN_int k_PROD_double k_SUM_long k_BXOR_u8 k_BAND_int k_LAND_int; do
    if awk -v f="$fn" '
        /^;; Function / { infn = ($3 == f) }
        infn && /loop vectorized/ { found = 1 }
        END { exit found ? 0 : 1 }' "$dir/dump"; then
        echo "$fn: vectorised"
    else
        echo "$fn: NOT vectorised"
        fail=1
    fi
done
exit $fail
