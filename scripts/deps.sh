#!/bin/sh
# Installs the Debian packages a make target needs, when they are missing. Usage:
#   scripts/deps.sh build|check|bench
# Nothing else is ever installed by hand: `make demo` and `make check` call this first.
set -e
need_build="gcc g++ make cmake libzstd-dev zlib1g-dev libsqlite3-dev"
need_check="$need_build libcmocka-dev pkg-config clang clang-format python3"
need_bench="$need_build openmpi-bin libopenmpi-dev mpich libmpich-dev python3"

case "${1:-build}" in
  build) want=$need_build ;;
  check) want=$need_check ;;
  bench) want=$need_bench ;;
  *) echo "usage: $0 build|check|bench" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

echo "Installing missing Debian packages:$missing"
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
    echo "error: not root; please run: apt-get install -y$missing" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have empty package lists.
if ! ${SUDO:-} apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1; then
  ${SUDO:-} apt-get update -q >/dev/null
  ${SUDO:-} apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
