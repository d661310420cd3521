#!/usr/bin/env bash
# The audit step of the GitHub Action (action.yml). Inputs arrive as environment variables, never pasted into
# the script, so a workflow input cannot inject shell. Writes exit-code, sarif and markdown to $GITHUB_OUTPUT
# and the Markdown report to the job summary; the exit code is applied by the action's last step, after upload.
set -uo pipefail
out="${RUNNER_TEMP:-/tmp}/harness-audit"
args=("$HA_PATH")
read -r -a checks <<< "${HA_CHECKS:-p1}"
args+=("${checks[@]}" --format sarif,md,json --output-dir "$out" --fail-on "${HA_FAIL_ON:-confirmed}" -q)
if [ -n "${HA_BASELINE:-}" ]; then
    args+=(--baseline "$HA_BASELINE")
fi
if [ -n "${HA_ARGS:-}" ]; then
    read -r -a extra <<< "$HA_ARGS"
    args+=("${extra[@]}")
fi
paths="$(harness-audit "${args[@]}")"
code=$?
sarif="$(grep -E '\.sarif$' <<< "$paths" | tail -n 1 || true)"
markdown="$(grep -E '\.md$' <<< "$paths" | tail -n 1 || true)"
{
    echo "exit-code=$code"
    echo "sarif=$sarif"
    echo "markdown=$markdown"
} >> "${GITHUB_OUTPUT:-/dev/null}"
if [ -n "$markdown" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$markdown" >> "$GITHUB_STEP_SUMMARY"
fi
exit 0
