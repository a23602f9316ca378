#!/usr/bin/env bash
# Runs every headless Neovim spec of the codeqa plugin against the real server.
#
#   bash editors/neovim/tests/run.sh [spec-name ...]     (e.g. unit integration)
#
# Installs Debian's neovim when it is missing (as root), runs each tests/*_spec.lua in its own
# `nvim --headless -u NONE` with XDG dirs in a temp dir, and ends with "N passed, N failed".
# Exit status: 0 only when every test passed.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
plugin="$(dirname "$here")"
repo="$(cd "$plugin/../.." && pwd)"

if ! command -v nvim >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "neovim not found: installing Debian's package"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null \
      || { echo "could not install neovim"; echo "0 passed, 1 failed"; exit 1; }
  else
    echo "neovim (nvim) is not installed; install it (apt-get install neovim) or run as root"
    echo "0 passed, 1 failed"
    exit 1
  fi
fi

server="${CODEQA_SERVER:-$repo/.venv/bin/codeqa-lsp}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/codeqa-nvim.XXXXXX")"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

echo "$(nvim --version | head -1); server: $server"

if [ "$#" -gt 0 ]; then
  specs=()
  for name in "$@"; do specs+=("$here/${name%_spec.lua}_spec.lua"); done
else
  specs=("$here"/*_spec.lua)
fi

total_passed=0
total_failed=0
for spec in "${specs[@]}"; do
  name="$(basename "$spec" .lua)"
  work="$tmp/$name"
  mkdir -p "$work/config" "$work/data" "$work/cache" "$work/state" "$work/files"
  results="$work/results"
  start=$(date +%s)
  # `timeout` is the last line of defence: the specs have their own watchdog.
  XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" \
  XDG_STATE_HOME="$work/state" NVIM_LOG_FILE="$work/nvim.log" \
  CODEQA_PLUGIN_DIR="$plugin" CODEQA_TEST_TMP="$work/files" CODEQA_SERVER="$server" \
  CODEQA_SPEC="$name" CODEQA_RESULTS="$results" \
    timeout -k 5 110 nvim --headless -u NONE -i NONE -n -c "luafile $spec" </dev/null 2>"$work/messages"
  rc=$?
  if [ -s "$results" ]; then
    read -r passed failed < "$results"
  else
    passed=0
    failed=1
    echo "not ok - $name did not report results (exit status $rc)"
  fi
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    failed=1
    echo "not ok - $name exited with status $rc"
  fi
  if [ "$failed" -ne 0 ]; then
    for log in "$work/messages" "$work"/cache/nvim/lsp.log "$work"/state/nvim/lsp.log "$work/nvim.log"; do
      if [ -s "$log" ]; then
        echo "---- last lines of $log"
        tail -n 40 "$log"
      fi
    done
  fi
  echo "($name: $(( $(date +%s) - start )) s)"
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
done

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
