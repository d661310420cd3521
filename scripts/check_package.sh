#!/usr/bin/env bash
# Packaging check from a clean environment (needs the package registries; not part of `make test`):
# build a wheel, `pipx install .` into a fresh pipx home, and audit the bundled example with the installed tool.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/tools"
"$work/tools/bin/pip" install --quiet pipx
"$work/tools/bin/pip" wheel --quiet --no-deps -w "$work/wheel" .
echo "wheel: $(ls "$work/wheel")"
PIPX_HOME="$work/pipx" PIPX_BIN_DIR="$work/bin" "$work/tools/bin/pipx" install --quiet .
"$work/bin/harness-audit" --version
set +e
"$work/bin/harness-audit" examples/agent_loop all --no-progress -o "$work/out" --format md,json,sarif,html -q
code=$?
set -e
[ "$code" = 1 ] || { echo "expected exit 1 (the example has confirmed findings), got $code"; exit 1; }
ls "$work/out"
echo "packaging check passed"
