#!/usr/bin/env bash
# Prints the code block that follows `<!-- fresh-clone-test: NAME -->` in a README, so the
# fresh-clone tests run exactly what the README tells users to type.
#   bash editors/scripts/readme_block.sh README.md sh
set -euo pipefail
readme="$1"
name="$2"
block="$(awk -v marker="<!-- fresh-clone-test: $name -->" '
  $0 == marker { found = 1; next }
  found && /^```/ { if (inside) exit; inside = 1; next }
  inside { print }
' "$readme")"
[ -n "$block" ] || { echo "no '$name' block marked in $readme" >&2; exit 1; }
printf '%s\n' "$block"
