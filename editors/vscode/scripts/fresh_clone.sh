#!/usr/bin/env bash
# The VS Code README's install steps, verbatim, from a fresh clone of this repository:
#   bash editors/vscode/scripts/fresh_clone.sh [code-server]
# HOME is a temp dir; the README's `git clone <github url>` clones this checkout's committed
# HEAD instead (no network here) and `code` is code-server (same CLI: --install-extension);
# everything else runs as written. Checks the .vsix holds the bundles and that code-server
# lists the installed extension. Prints "PASS|FAIL fresh clone: ..."; non-zero on failure.
set -uo pipefail

code_server="${1:-}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
repo="$(cd "$here/../.." && pwd)"
readme="$here/README.md"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/codeqa-vscode-clone.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log="$tmp/log"

fail() {
  echo "FAIL fresh clone (VS Code README): $1"
  tail -n 30 "$log" 2>/dev/null | sed 's/^/    /'
  exit 1
}

steps="$(bash "$repo/editors/scripts/readme_block.sh" "$readme" sh)" || fail "no install block in the README"
url="$(grep -oE 'git clone [^ ]+' <<<"$steps" | head -1 | cut -d' ' -f3)"
[ -n "$url" ] || fail "the install block does not clone the repository"
steps="${steps//$url/file://$repo}"
mkdir -p "$tmp/bin" "$tmp/home"
# `code` → code-server with its own user-data and extensions dirs (or a recorder without it).
if [ -n "$code_server" ] && [ -x "$code_server" ]; then
  printf '#!/bin/sh\nexec "%s" --user-data-dir "%s/ud" --extensions-dir "%s/exts" "$@"\n' "$code_server" "$tmp" "$tmp" >"$tmp/bin/code"
else
  printf '#!/bin/sh\necho "$@" > "%s/code-args"\n' "$tmp" >"$tmp/bin/code"
fi
chmod +x "$tmp/bin/code"

export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_DATA_HOME="$tmp/home/.local/share" \
  XDG_CACHE_HOME="$tmp/home/.cache" PATH="$tmp/bin:$PATH"
started=$SECONDS
(cd "$HOME" && bash -euo pipefail -c "$steps") >"$log" 2>&1 || fail "the README's install steps failed"

clone="$HOME/.local/share/codeqa-lsp"
vsix="$clone/editors/vscode/out/codeqa.vsix"
[ -s "$vsix" ] || fail "no $vsix"
listing="$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$vsix")"
for member in extension/dist/extension.js extension/dist/webview.js extension/package.json; do
  grep -qx "$member" <<<"$listing" || fail "the .vsix lacks $member"
done
node "$clone/editors/vscode/scripts/check_vsix.mjs" "$vsix" >>"$log" 2>&1 || fail "the .vsix contains e2e test code"
"$clone/.venv/bin/codeqa-lsp" --help >>"$log" 2>&1 || fail "the installed server does not run"
if [ -n "$code_server" ] && [ -x "$code_server" ]; then
  "$tmp/bin/code" --list-extensions 2>>"$log" | grep -qx "codeqa.codeqa" || fail "code-server does not list codeqa.codeqa"
fi
echo "PASS fresh clone (VS Code README): server venv, npm ci/build/package, install ($((SECONDS - started)) s)"
