#!/usr/bin/env bash
# Everything for the VS Code extension, from a clean machine (what `make vscode-test` runs):
#   system packages (when missing; needs root) → npm ci → eslint + tsc → unit tests (node:test)
#   → esbuild bundle → vsce package (.vsix) and a check that it holds no e2e code → the e2e
#   test build (out/codeqa-e2e.vsix) → code-server 4.100.3 (cached under ~/.cache/codeqa-ci/)
#   → end-to-end test in real VS Code (code-server in headless Chromium)
#   → the README's install steps from a fresh clone (scripts/fresh_clone.sh;
#   CODEQA_SKIP_FRESH_CLONE=1 skips it).
# Prints one line per step/check and ends with "N passed, N failed"; exits non-zero on any failure.
# The language server is <repo>/.venv/bin/codeqa-lsp (the Makefile creates the venv first).

set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# The server: $CODEQA_LSP, else <repo>/.venv/bin/codeqa-lsp, else codeqa-lsp on PATH.
SERVER="${CODEQA_LSP:-$REPO/.venv/bin/codeqa-lsp}"
[ -z "${CODEQA_LSP:-}" ] && [ ! -x "$SERVER" ] && command -v codeqa-lsp >/dev/null && SERVER="$(command -v codeqa-lsp)"
CACHE="${CODEQA_CI_CACHE:-$HOME/.cache/codeqa-ci}"
CODE_SERVER_VERSION=4.100.3
CODE_SERVER_DIR="$CACHE/code-server-$CODE_SERVER_VERSION"
CODE_SERVER="$CODE_SERVER_DIR/node_modules/.bin/code-server"
CHROMIUM=/usr/lib/chromium/chromium-headless-shell
RIPGREP_CACHE=/tmp/vscode-ripgrep-cache-1.15.11
LOGS="$(mktemp -d "${TMPDIR:-/tmp}/codeqa-vscode-test.XXXXXX")"
trap 'rm -rf "$LOGS"' EXIT

passed=0
failed=0

pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }

# step NAME COMMAND...: runs the command quietly; on failure shows the end of its output.
step() {
  local name="$1"; shift
  local log="$LOGS/step-$((passed + failed)).log"
  local started=$SECONDS
  if "$@" >"$log" 2>&1; then
    pass "$name ($((SECONDS - started)) s)"
    return 0
  fi
  fail "$name ($((SECONDS - started)) s)"
  tail -n 40 "$log" | sed 's/^/    /'
  return 1
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}

# ---------------------------------------------------------------- system packages
install_system_packages() {
  local missing=()
  command -v rg >/dev/null || missing+=(ripgrep)
  [ -x "$CHROMIUM" ] || missing+=(chromium-headless-shell)
  dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
  { command -v make && command -v g++; } >/dev/null || missing+=(build-essential)
  command -v python3 >/dev/null || missing+=(python3)
  if [ ${#missing[@]} -eq 0 ]; then
    echo "all present"
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages ${missing[*]} and not root: install them with apt-get" >&2
    return 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}"
}

check_node() {
  local major
  major="$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null)" || { echo "node is not installed" >&2; return 1; }
  command -v npm >/dev/null || { echo "npm is not installed" >&2; return 1; }
  # code-server 4.100.3 runs on Node 20 (the last release that does); the extension needs >= 18.
  [ "$major" -ge 20 ] || { echo "Node $major found; Node 20 is required" >&2; return 1; }
  echo "node $(node --version), npm $(npm --version 2>/dev/null)"
}

# ---------------------------------------------------------------- code-server (cached)
code_server_works() {
  [ -x "$CODE_SERVER" ] || return 1
  XDG_CONFIG_HOME="$LOGS/xdg" XDG_DATA_HOME="$LOGS/xdg" timeout 60 "$CODE_SERVER" --version 2>/dev/null |
    grep -q "^$CODE_SERVER_VERSION "
}

install_code_server() {
  if code_server_works; then
    echo "cached in $CODE_SERVER_DIR"
    return 0
  fi
  # @vscode/ripgrep's install step downloads rg from GitHub (unreachable): seed its cache with
  # the system rg so it unpacks that instead.
  mkdir -p "$LOGS/rgseed" "$RIPGREP_CACHE" &&
    cp "$(command -v rg)" "$LOGS/rgseed/rg" &&
    tar czf "$RIPGREP_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$LOGS/rgseed" rg || return 1
  # Install into a staging directory and move it in place only when it works, so a broken
  # half-install is never cached.
  local staging="$CODE_SERVER_DIR.staging.$$"
  rm -rf "$staging" && mkdir -p "$staging" || return 1
  echo '{"name": "codeqa-ci-code-server", "private": true}' >"$staging/package.json"
  (
    cd "$staging" &&
      npm_config_yes=true npm_config_unsafe_perm=true \
        npm install --no-audit --no-fund "code-server@$CODE_SERVER_VERSION" --foreground-scripts
  ) || { rm -rf "$staging"; return 1; }
  rm -rf "$CODE_SERVER_DIR" && mv "$staging" "$CODE_SERVER_DIR" || return 1
  code_server_works || { echo "code-server was installed but does not run" >&2; return 1; }
}

run_e2e() {
  if [ ! -x "$SERVER" ]; then
    echo "FAIL e2e: the language server $SERVER does not exist (run 'make vscode-test' so the venv is created)"
    failed=$((failed + 1))
    return 1
  fi
  local log="$LOGS/e2e.log"
  # The screenshots (answer-panel.png, and chat-view.png beside it) go to out/ (ignored by
  # git); CODEQA_UPDATE_SCREENSHOT=1 refreshes the README's media/ copies instead.
  local screenshot="$HERE/out/answer-panel.png"
  [ "${CODEQA_UPDATE_SCREENSHOT:-0}" = 1 ] && screenshot="$HERE/media/answer-panel.png"
  (cd "$HERE" && timeout 500 node --experimental-websocket scripts/e2e.mjs \
    --code-server "$CODE_SERVER" --chromium "$CHROMIUM" --vsix "$HERE/out/codeqa-e2e.vsix" \
    --server "$SERVER" --screenshot "$screenshot") 2>&1 | tee "$log"
  local result
  result="$(grep -E '^E2E_RESULT ' "$log" | tail -n 1)"
  if [ -z "$result" ]; then
    fail "e2e harness produced no result"
    return 1
  fi
  local p f
  p="$(sed -E 's/.*passed=([0-9]+).*/\1/' <<<"$result")"
  f="$(sed -E 's/.*failed=([0-9]+).*/\1/' <<<"$result")"
  passed=$((passed + p))
  failed=$((failed + f))
}

run_unit_tests() {
  local log="$LOGS/unit.log"
  (cd "$HERE" && npm test) >"$log" 2>&1
  local status=$?
  local p f
  p="$(grep -E '^# pass [0-9]+' "$log" | awk '{print $3}' | tail -n 1)"
  f="$(grep -E '^# fail [0-9]+' "$log" | awk '{print $3}' | tail -n 1)"
  if [ -z "$p" ]; then
    fail "unit tests did not run"
    tail -n 40 "$log" | sed 's/^/    /'
    return 1
  fi
  passed=$((passed + p))
  failed=$((failed + f))
  echo "unit tests: $p passed, $f failed"
  if [ "$status" -ne 0 ] || [ "$f" -ne 0 ]; then
    grep -E -B2 -A25 '^\s*not ok' "$log" | head -n 120 | sed 's/^/    /'
    [ "$f" -eq 0 ] && fail "unit test runner exited with status $status"
    return 1
  fi
}

cd "$HERE" || exit 1
echo "== VS Code extension: $HERE"
step "system packages (ripgrep, chromium-headless-shell, libkrb5-dev, build tools)" install_system_packages || finish
step "node >= 20 and npm" check_node || finish
step "npm ci" npm ci --no-audit --no-fund || finish
step "eslint" npm run lint
step "typecheck (tsc)" npm run typecheck
run_unit_tests
step "build (esbuild)" npm run build || finish
step "package (vsce → out/codeqa.vsix)" bash -c 'npm run package && test -s out/codeqa.vsix' || finish
step "the packaged extension has no e2e code (scripts/check_vsix.mjs)" node scripts/check_vsix.mjs out/codeqa.vsix
step "package the e2e test build (→ out/codeqa-e2e.vsix, with the scenario)" bash -c 'npm run package:e2e && node scripts/check_vsix.mjs --expect-test-code out/codeqa-e2e.vsix' || finish
step "code-server $CODE_SERVER_VERSION (cache: $CODE_SERVER_DIR)" install_code_server || finish
run_e2e
if [ "${CODEQA_SKIP_FRESH_CLONE:-0}" != 1 ]; then
  if bash "$HERE/scripts/fresh_clone.sh" "$CODE_SERVER"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
fi
finish
