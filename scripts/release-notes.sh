#!/usr/bin/env bash
# Prints the section of CHANGELOG.md for one version (without its heading): the release notes of
# that version's GitHub release. A section starts at the heading "## VERSION (date or Unreleased)"
# and ends at the next "## " heading. Fails when CHANGELOG.md has no such section or it is empty.
#
#   scripts/release-notes.sh 0.1.0 > notes.md
set -euo pipefail

version=${1:?usage: release-notes.sh VERSION (without the v)}
changelog="$(dirname "${BASH_SOURCE[0]}")/../CHANGELOG.md"

notes=$(awk -v v="$version" '
  /^## / { if (found) exit; if (index($0, "## " v " (") == 1) { found = 1; next } }
  found { print }
' "$changelog")

if [ -z "$(printf '%s' "$notes" | tr -d '[:space:]')" ]; then
  echo "release-notes: CHANGELOG.md has no section, or an empty one, for version $version" >&2
  exit 1
fi
printf '%s\n' "$notes"
