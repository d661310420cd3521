"""Hostile family "trace files": generated JSONL logs, HAR files and VCR cassettes for `harness-audit trace`.

JSON of any shape, near-valid bodies of every dialect with fields of the wrong type, lines that do not parse,
lines nested deeper than the decoder's stack, a first line of megabytes, BOMs, binary, YAML with aliases and
Python tags, keys in headers and messages. Every file must give reports that list its unreadable lines, or
one error line; a `!!python/` tag must never run.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.hostile.runner import assert_sane, hostile_settings, record, run_cli
from tests.hostile.strategies import SECRETS, json_value, nested, request_body, response_body, secret

FAMILY = "trace-files"
EXAMPLES = 300

BAD_LINES = ['{"request": {', "not json", "\x00\x01", '{"request": 1e999999}', "[" * 5000 + "]" * 5000,
             '{"a": ' + nested(3000) + "}", "\ufeff{}", '{"request": NaN}']
"""Lines the readers must list (or read) and go past; the first four never parse."""
UNREADABLE = frozenset(BAD_LINES[:3] + BAD_LINES[4:5])


@st.composite
def jsonl_trace(draw: st.DrawFn) -> tuple[bytes, bool]:
    """(content, has a line that cannot be read) of a JSONL trace."""
    lines: list[str] = []
    unreadable = False
    for _ in range(draw(st.integers(1, 6))):
        choice = draw(st.integers(0, 9))
        if choice == 0:
            line = draw(st.sampled_from(BAD_LINES))
            unreadable |= line in UNREADABLE
        elif choice == 1:
            line = json.dumps(draw(json_value), ensure_ascii=False)
        else:
            record_: dict[str, Any] = {"request": draw(request_body())}
            if draw(st.booleans()):
                record_["response"] = draw(response_body())
            if draw(st.integers(0, 5)) == 0:
                record_["headers"] = {"Authorization": f"Bearer {draw(secret)}"}
            line = json.dumps(record_, ensure_ascii=False)
        lines.append(line)
    if draw(st.integers(0, 15)) == 0:  # a first record of megabytes: format detection reads whole lines
        lines.insert(0, json.dumps({"request": {"model": "m", "messages": [{"role": "user", "content": "x" * 100_000}]}}))
    return ("\n".join(lines) + "\n").encode("utf-8", errors="surrogatepass"), unreadable


@st.composite
def har_trace(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A HAR log whose entries are near-valid, with fields of any type now and then."""
    entries: list[Any] = []
    for _ in range(draw(st.integers(1, 4))):
        body = json.dumps(draw(request_body()))
        entry: Any = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                                  "headers": [{"name": "Authorization", "value": f"Bearer {draw(secret)}"}],
                                  "postData": {"text": body}},
                      "response": {"status": 200, "content": {"text": json.dumps(draw(response_body()))}}}
        if draw(st.integers(0, 3)) == 0:
            where = draw(st.sampled_from(["request", "response", "postData", "content", "entry"]))
            junk = draw(json_value)
            if where == "entry":
                entry = junk
            elif where in ("request", "response"):
                entry[where] = junk
            elif where == "postData":
                entry["request"]["postData"] = junk
            else:
                entry["response"]["content"] = junk
        entries.append(entry)
    doc = {"log": {"version": "1.2", "entries": entries}}
    return json.dumps(doc, indent=draw(st.sampled_from([None, 1]))).encode(), False


YAML_SPECIALS = [
    "interactions:\n- !!python/object/apply:os.system ['echo pwned > {marker}']\n",
    "interactions: !!python/name:os.system\n",
    "interactions:\n- &a [*a]\n",
    "interactions: [" + "[" * 3000 + "]" * 3000 + "]\n",
    "interactions:\n- request: {body: &x {a: [1, 2, 3]}, uri: 'https://api.openai.com/v1/chat/completions'}\n"
    "  response: {body: *x}\n",
    "interactions:\n  - request:\n    bad indent\n",
    "a: &a ['x','x','x','x','x','x','x','x','x','x']\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]\ninteractions: [{request: {body: *g}}]\n",
]


@st.composite
def vcr_trace(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A YAML cassette: near-valid interactions, or one of the YAML specials (tags, aliases, nesting)."""
    if draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(YAML_SPECIALS)).encode(), False
    import yaml

    interactions = [{"request": {"method": "POST", "uri": "https://api.openai.com/v1/chat/completions",
                                 "headers": {"authorization": [f"Bearer {draw(secret)}"]},
                                 "body": json.dumps(draw(request_body()))},
                     "response": {"status": {"code": 200}, "body": {"string": json.dumps(draw(response_body()))}}}
                    for _ in range(draw(st.integers(1, 3)))]
    return yaml.safe_dump({"interactions": interactions}, allow_unicode=True).encode(), False


raw_trace = st.sampled_from([b"", b"\n\n", b"\x00" * 10, b"\xef\xbb\xbf", b"\xff\xfe{\x00}\x00", b"{}", b"[]", b"null",
                             b"{\"log\": {\"entries\": 5}}", b"interactions: 5\n"]).map(lambda b: (b, False))


@hostile_settings(EXAMPLES)
@given(trace=st.one_of(jsonl_trace(), jsonl_trace(), har_trace(), vcr_trace(), raw_trace),
       suffix=st.sampled_from([".jsonl", ".json", ".har", ".yaml", ".txt"]), fmt=st.sampled_from(
           [None, None, None, "jsonl", "vcr", "har", "otel", "ledger", "openhands"]))
def test_any_trace_file_gives_reports_listing_what_it_skipped_or_one_error_line(
        trace: tuple[bytes, bool], suffix: str, fmt: str | None) -> None:
    record(FAMILY)
    data, unreadable = trace
    base = Path(tempfile.mkdtemp(prefix="trace-"))
    try:
        marker = base / "pwned"
        path = base / f"t{suffix}"
        path.write_bytes(data.replace(b"{marker}", str(marker).encode()))
        args = ["trace", str(path), "-q", "--output-dir", str(base / "out")]
        if fmt is not None:
            args += ["--input-format", fmt]
        run = run_cli(args, timeout_s=60, memory_mb=1536)
        assert_sane(run, unreadable=[path.name] if unreadable and fmt in (None, "jsonl") else [], secrets=SECRETS,
                    family=FAMILY)
        assert not marker.exists(), "a !!python/ tag ran"
    finally:
        shutil.rmtree(base, ignore_errors=True)
