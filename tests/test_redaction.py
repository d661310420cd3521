"""Credential files and secrets (issue 14, item 1): one path rule for the gate, the read tools and discovery;
credential-looking text masked in every report, after the gate has checked the real text."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from harness_audit.findings import Candidate, CheckId, Finding, Refusal, RefusalReason
from harness_audit.gate import GateContext, validate
from harness_audit.llm.tools import NavigationTools, ToolRefusal, ToolRefusalReason
from harness_audit.redaction import MASK, looks_like_secret, mask_secrets
from harness_audit.workspace import Workspace, credential_file
from tests.conftest import MakeTree

OPENAI_KEY = "sk-proj-Zx81Qm4Lr7Tb2Vn9Kc5Hd3Jf6Wg0Ps1Ya8"

CREDENTIAL_PATHS = [
    ".env", ".env.local", ".env.production", "config/.env", "deploy/.ENV", ".netrc", "_netrc", ".pgpass", ".npmrc",
    ".pypirc", ".git-credentials", "certs/server.pem", "certs/server.key", "tls/ca.crt", "keys/app.p12",
    "id_rsa", "home/.ssh/config", ".aws/credentials", ".aws/config", ".kube/config", ".docker/config.json",
    "gcp/service-account-prod.json", "client_secret_123.json", "credentials.json",
    "application_default_credentials.json", ".streamlit/secrets.toml", ".vault-token",
]
ORDINARY_PATHS = [".env.example", ".env.sample", "env.py", "src/environment.py", "keys.py", "docs/keys.md",
                  "tokens/count.py", "gcloud/client.py", "docker/Dockerfile", "secret_santa.py"]


@pytest.mark.parametrize("rel", CREDENTIAL_PATHS)
def test_credential_paths_match_the_rule(rel: str) -> None:
    assert credential_file(rel)


@pytest.mark.parametrize("rel", ORDINARY_PATHS)
def test_ordinary_paths_do_not_match_the_rule(rel: str) -> None:
    assert not credential_file(rel)


def _finding(file: str, line: int, evidence: str) -> Candidate:
    return Candidate(check="C6", verdict="confirmed", file=file, line=line, evidence=evidence,
                     claim="the key is in the tree", consequence="anyone with the tree has the key", source="model")


def test_gate_refuses_the_env_file_the_issue_names(make_tree: MakeTree) -> None:
    # the exact submission of the issue: accepted before, and the key copied into md, json and sarif
    ws = Workspace.open(make_tree({".env": f"OPENAI_API_KEY={OPENAI_KEY}\n", "agent.py": "import os\n"}))
    ctx = GateContext(workspace=ws, checks_in_run=(CheckId.C6,))
    gated = validate(_finding(".env", 1, f"OPENAI_API_KEY={OPENAI_KEY}"), ctx)
    assert isinstance(gated, Refusal)
    assert gated.reason is RefusalReason.OUT_OF_SCOPE_PATH
    # and the answer is the same whatever the excerpt: accept/refuse tells nothing about the contents
    wrong = validate(_finding(".env", 1, "OPENAI_API_KEY=not-the-key"), ctx)
    assert isinstance(wrong, Refusal) and wrong.reason is RefusalReason.OUT_OF_SCOPE_PATH
    assert wrong.message == gated.message


@pytest.mark.parametrize("rel", CREDENTIAL_PATHS)
def test_gate_and_read_tools_refuse_every_credential_file(make_tree: MakeTree, rel: str) -> None:
    ws = Workspace.open(make_tree({rel: "password = 'x9Tq2-hunter-77'\n", "agent.py": "import os\n"}))
    gated = validate(_finding(rel, 1, "password = 'x9Tq2-hunter-77'"),
                     GateContext(workspace=ws, checks_in_run=(CheckId.C6,)))
    assert isinstance(gated, Refusal) and gated.reason is RefusalReason.OUT_OF_SCOPE_PATH
    with pytest.raises(ToolRefusal) as refused:
        NavigationTools(ws, None).read_file(rel)
    assert refused.value.reason is ToolRefusalReason.OUT_OF_SCOPE_PATH


def test_a_link_named_like_a_credential_file_is_refused_and_a_link_to_one_too(make_tree: MakeTree) -> None:
    root = make_tree({".env": f"KEY={OPENAI_KEY}\n", "settings.py": "TIMEOUT = compute_timeout(30)\n"})
    (root / "env_copy.py").symlink_to(root / ".env")
    (root / ".env.local").symlink_to(root / "settings.py")
    ws = Workspace.open(root)
    ctx = GateContext(workspace=ws, checks_in_run=(CheckId.C6,))
    for rel, evidence in (("env_copy.py", f"KEY={OPENAI_KEY}"), (".env.local", "TIMEOUT = compute_timeout(30)")):
        gated = validate(_finding(rel, 1, evidence), ctx)
        assert isinstance(gated, Refusal) and gated.reason is RefusalReason.OUT_OF_SCOPE_PATH, rel


def test_discovery_lists_a_credential_source_file_as_skipped(make_tree: MakeTree) -> None:
    ws = Workspace.open(make_tree({".env.js": "module.exports = {key: 'x'}\n", "agent.py": "import os\n"}))
    found = ws.discover()
    assert [f.path for f in found.files] == ["agent.py"]
    assert [(s.path, s.reason) for s in found.skipped] == [(".env.js", "credential-file")]


SECRETS = [
    OPENAI_KEY,
    "sk-ant-api03-Qw7Er2Ty9Ui4Op1As6Df3Gh8Jk5Lz0Xc",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_9sKd8Jf7Hg6Fd5Sa4Qw3Er2Ty1Ui0OpLkJhGfDs",
    "xoxb-2931-8837-Hq81jHGs62kd",
    "AIzaSyD3k9Lm2Np8Qr5St1Uv7Wx4Yz6Ab0Cd2Ef",
    "glpat-Xy7Zw8Vu9Ts0Rq1Po2Nm3L",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "Zq8Xw3Rt5Yu1Io7Pa9Sd2Fg4Hj6Kl0Mn3Bv5Cx8",  # no prefix: a long, mixed, high-entropy token
]


@pytest.mark.parametrize("secret", SECRETS)
def test_known_prefixes_and_random_tokens_are_masked(secret: str) -> None:
    masked = mask_secrets(f'client = Client(key="{secret}")')
    assert secret not in masked and MASK in masked
    assert not looks_like_secret(masked)


@pytest.mark.parametrize("text", [
    'password = "hunter2-correct-horse"', "OPENAI_API_KEY=abc123def456ghi", "Authorization: Bearer 9f8e7d6c5b4a39281",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",  # an excerpt cut inside the block
])
def test_values_given_to_secret_names_and_key_blocks_are_masked(text: str) -> None:
    masked = mask_secrets(text)
    assert MASK in masked
    assert not looks_like_secret(masked)
    assert "MIIEow" not in masked and "b3BlbnNz" not in masked


@pytest.mark.parametrize("text", [
    "max_tokens = 4096", 'api_key = os.environ["OPENAI_API_KEY"]', "token = tokenizer.encode(text)",
    "api_key=settings.openai_api_key", 'headers = {"Authorization": f"Bearer {key}"}',
    '{"role": "tool", "tool_call_id": "call_Qx81Zm4Lr7Tb2Vn9Kc5Hd3Jf", "content": "ok"}',
    '"id": "toolu_01A09q90qw90lq917835lq9"', "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "123e4567-e89b-12d3-a456-426614174000", 'auth_url = "https://login.example.com/oauth2/token"',
    'api_key: str = "your_api_key_here"', "cachedPromptTokens: step.providerMetadata?.openai?.cachedPromptTokens",
    "_IDENT = frozenset('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$')",
    "/tmp/pytest-of-root/pytest-3/test_runs_a0/ws/.harness-audit/runs/20250101T120000-abc12345/ledger.jsonl",
])
def test_code_ids_hashes_and_paths_are_not_masked(text: str) -> None:
    assert mask_secrets(text) == text


HARNESS = f'''import openai

API_KEY = "{OPENAI_KEY}"


def run(messages):
    client = openai.OpenAI(api_key=API_KEY)
    while True:
        reply = client.chat.completions.create(model="gpt-4.1", messages=messages)
        messages.append(reply.choices[0].message)
'''


def test_a_finding_quoting_a_key_is_kept_and_the_key_masked_in_every_format(make_tree: MakeTree) -> None:
    from harness_audit.config import AuditConfig
    from harness_audit.pipeline import PhaseResult, finish

    root = make_tree({"agent.py": HARNESS})
    ws = Workspace.open(root)
    # the gate matches the real text of the file, key included
    gated = validate(_finding("agent.py", 3, f'API_KEY = "{OPENAI_KEY}"'),
                     GateContext(workspace=ws, checks_in_run=(CheckId.C6,)))
    assert isinstance(gated, Finding) and OPENAI_KEY in gated.evidence
    phase = PhaseResult(landmarks=[], findings=[gated], refusals=[], outcomes=[], unparsed=[])
    started = datetime.now().astimezone()
    run = finish(ws, ws.discover(), (CheckId.C6,), AuditConfig(), phase, run_id="r1", started=started, t0=0.0,
                 output_dir=root / "out", write=True)
    assert run.report.findings[0].evidence == f'API_KEY = "sk-proj-{MASK}"'
    assert run.report.findings[0].fingerprint == gated.fingerprint  # identity still from the real text
    texts = {p.suffix: p.read_text(encoding="utf-8") for p in run.paths}
    assert set(texts) == {".md", ".json", ".sarif"}
    for suffix, text in texts.items():
        assert OPENAI_KEY not in text, suffix
        assert f"sk-proj-{MASK}" in text, suffix
    json.loads(texts[".json"])


def test_refusal_text_and_notes_are_masked_too(make_tree: MakeTree) -> None:
    from harness_audit.aggregate import build_report
    from harness_audit.report import FileNote, RunMeta

    meta = RunMeta(tool_version="0", run_id="r", started_at="", finished_at="", duration_s=0.0, root="/x",
                   commit=None, dirty=None, engine="llm", requested=(CheckId.C6,), notes=(f"saw {OPENAI_KEY}",))
    refusal = Refusal(reason=RefusalReason.FILE_NOT_FOUND, subject="finding", check="C6", source="model",
                      file=OPENAI_KEY, line=1, message=f"no readable file at {OPENAI_KEY!r}")
    report = build_report(meta=meta, findings=[], outcomes=[], refusals=[refusal], landmarks=[],
                          unparsed_files=[FileNote(path="t.jsonl", reason=f"line 3: not JSON: {{'k': '{OPENAI_KEY}'}}")],
                          analysis=f"the key {OPENAI_KEY} is hard-coded")
    blob = repr(report)
    assert OPENAI_KEY not in blob
    assert report.refusals[0].reason is RefusalReason.FILE_NOT_FOUND


def test_masking_does_not_touch_paths_hashes_or_enums(tmp_path: Path) -> None:
    from harness_audit.redaction import mask_value

    f = Finding(check=CheckId.C6, verdict="confirmed", file="Zq8Xw3Rt5Yu1Io7Pa9Sd2Fg4Hj6Kl0Mn3Bv5Cx8.py",  # type: ignore[arg-type]
                line=1, cited_line=1, evidence=OPENAI_KEY, claim="", consequence="", direction="", confirm_hint="",
                source="s", language="python", file_sha256="0" * 64, fingerprint="Zq8Xw3Rt5Yu1Io7Pa9Sd2Fg4Hj6Kl0Mn3Bv5Cx8")
    masked = mask_value(f)
    assert masked.file == f.file and masked.fingerprint == f.fingerprint and masked.check is CheckId.C6
    assert masked.evidence == f"sk-proj-{MASK}"
