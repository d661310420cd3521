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
# the Chinese criteria live in a subfolder of the package data: the wheel must carry them
python3 -m zipfile -l "$work"/wheel/*.whl | grep "catalogue/criteria/zh/c08_partial_success.md" >/dev/null \
    || { echo "the wheel lacks the Chinese criteria (catalogue/criteria/zh/)"; exit 1; }
PIPX_HOME="$work/pipx" PIPX_BIN_DIR="$work/bin" "$work/tools/bin/pipx" install --quiet .
"$work/bin/harness-audit" --version
set +e
"$work/bin/harness-audit" examples/agent_loop all --no-progress -o "$work/out" --format md,json,sarif,html -q
code=$?
set -e
[ "$code" = 1 ] || { echo "expected exit 1 (the example has confirmed findings), got $code"; exit 1; }
ls "$work/out"
LANG=zh_CN.UTF-8 LC_ALL= "$work/bin/harness-audit" explain C8 | grep "^# C8 · 部分成功" >/dev/null \
    || { echo "the installed tool's explain is not Chinese under LANG=zh_CN.UTF-8"; exit 1; }
echo "packaging check passed"
