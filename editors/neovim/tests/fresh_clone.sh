#!/usr/bin/env bash
# The Neovim README's install steps, verbatim, from a fresh clone of this repository:
#   bash editors/neovim/tests/fresh_clone.sh [nvim]
# HOME is a temp dir; the README's `git clone <github url>` clones this checkout's committed
# HEAD instead (the only substitution: no network here), the rest of the `sh` block runs as
# written (a fresh venv, `pip install -e .`), the `init.lua` block becomes the user's config,
# and a headless Neovim started with that config (not -u NONE) must answer :CodeQAAsk in a
# small project with a citation. Prints "PASS|FAIL fresh clone: ..."; exits non-zero on failure.
set -uo pipefail

nvim="${1:-nvim}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
readme="$repo/editors/neovim/README.md"
block="$repo/editors/scripts/readme_block.sh"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/codeqa-nvim-clone.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
log="$tmp/log"

fail() {
  echo "FAIL fresh clone (Neovim README): $1"
  tail -n 30 "$log" 2>/dev/null | sed 's/^/    /'
  exit 1
}

install_steps="$(bash "$block" "$readme" sh)" || fail "no install block in the README"
init_lua="$(bash "$block" "$readme" init.lua)" || fail "no init.lua block in the README"
url="$(grep -oE 'git clone [^ ]+' <<<"$install_steps" | head -1 | cut -d' ' -f3)"
[ -n "$url" ] || fail "the install block does not clone the repository"

export HOME="$tmp/home"
export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share" \
  XDG_CACHE_HOME="$HOME/.cache" XDG_STATE_HOME="$HOME/.local/state" NVIM_LOG_FILE="$tmp/nvim.log"
mkdir -p "$HOME" "$XDG_CONFIG_HOME/nvim"
started=$SECONDS
(cd "$HOME" && bash -euo pipefail -c "${install_steps//$url/file://$repo}") >"$log" 2>&1 ||
  fail "the README's install steps failed"
printf '%s\n' "$init_lua" >"$XDG_CONFIG_HOME/nvim/init.lua"

project="$tmp/project"
mkdir -p "$project/shop"
echo '[project]' >"$project/pyproject.toml"
cat >"$project/shop/cart.py" <<'PY'
def cart_total(prices, discount):
    """Sum the prices and apply the discount rate."""
    return sum(prices) * (1 - discount)
PY

cd "$project" || fail "no project dir"
CODEQA_CHECK_RESULT="$tmp/result" timeout -k 5 180 "$nvim" --headless -i NONE -n \
  -c "luafile $here/fresh_clone_check.lua" shop/cart.py </dev/null >>"$log" 2>&1
result="$(cat "$tmp/result" 2>/dev/null)"
[ "$result" = ok ] || fail "Neovim with the README's init.lua: ${result:-no result}"
echo "PASS fresh clone (Neovim README): install + init.lua + :CodeQAAsk ($((SECONDS - started)) s)"
