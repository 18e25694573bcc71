#!/usr/bin/env bash
# The pinned Python environment, reached as .venv.
#
# Installing torch, tensorflow, TVM and IREE into a new venv takes minutes, and
# every fresh clone (CI's, a second worktree) would do it again. So the venv is
# built once per requirements.txt and interpreter on this machine, in a cache
# outside the clone (as Docker keeps the sandbox image), and a clone's .venv is
# a link to it. The cache key changes with any pin; an environment is used only
# once its install finished (.complete), and only the newest three are kept.
# A clone whose .venv is a real folder (an older checkout) keeps it and is
# updated in place, as before.
set -euo pipefail
cd "$(dirname "$0")/.."

requirements_hash=$(sha256sum requirements.txt | cut -c1-16)
stamp=".requirements-$requirements_hash"

if [ -d .venv ] && [ ! -L .venv ]; then
  # A folder of this clone's own.
  if [ ! -f ".venv/$stamp" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
    rm -f .venv/.requirements-* && touch ".venv/$stamp"
  fi
  exit 0
fi

interpreter=$(python3 -c 'import sys; print(sys.version.split()[0])')
key=$(printf '%s %s\n' "$requirements_hash" "$interpreter" | sha256sum | cut -c1-16)
cache="${MLPREP_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mlprep/venvs}"
target="$cache/$key"
mkdir -p "$cache"

# One builder at a time per machine; the others wait and then find it complete.
exec 9>"$cache/.lock"
flock 9
if [ ! -f "$target/.complete" ]; then
  rm -rf "$target"  # an install that was interrupted: start again
  echo "Building the Python environment in $target (once per requirements.txt on this machine)"
  python3 -m venv "$target"
  "$target/bin/python" -m pip install --quiet --disable-pip-version-check -r requirements.txt
  touch "$target/$stamp" "$target/.complete"
  # Keep the newest three environments: older pins are not coming back often.
  ls -1dt "$cache"/*/ 2>/dev/null | tail -n +4 | xargs -r rm -rf
fi
flock -u 9

ln -sfn "$target" .venv
