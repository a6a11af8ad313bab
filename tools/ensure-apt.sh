#!/usr/bin/env bash
# Install Debian packages that are missing. Usage: tools/ensure-apt.sh COMMAND:PACKAGE ...
# A package is installed only when its COMMAND is not on PATH; a COMMAND that is an absolute path
# (/usr/include/python3.11/Python.h) is a file that must exist.
set -euo pipefail
missing=()
for pair in "$@"; do
  cmd=${pair%%:*}; pkg=${pair#*:}
  if [[ $cmd == /* ]]; then
    [ -e "$cmd" ] || missing+=("$pkg")
  else
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "ensure-apt: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
