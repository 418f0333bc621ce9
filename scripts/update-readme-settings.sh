#!/bin/sh
# Regenerates the settings table in README.md from the library's settings table.
set -e
cd "$(dirname "$0")/.."
table=$(build/bin/cohort settings-markdown)
awk -v table="$table" '
  /<!-- settings:begin -->/ { print; print table; skip = 1; next }
  /<!-- settings:end -->/ { skip = 0 }
  !skip { print }' README.md > README.md.new
mv README.md.new README.md
