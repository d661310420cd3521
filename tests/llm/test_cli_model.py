"""Model-engine command-line paths that must not spend anything: --estimate and the usage errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop"


def test_estimate_plans_from_static_recon_and_spends_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # no key needed: nothing is sent
    code = main([str(EXAMPLE), "C1,C12", "--engine", "hybrid", "--model", "openai:m", "--estimate",
                 "--output-dir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    assert "2 subagents, no request made" in out
    assert "C1:" in out and "C12:" in out
    assert "recon:" not in out  # static recon found every required landmark: no recon subagent is planned
    assert "Ceiling: 2 × 120,000 = 240,000 tokens" in out
    assert "Expected: ~" in out and "read from the provider's cache" in out
    assert "the cost is unknown, not zero" in out  # openai:m: no configured price, not a model the table knows
    assert not (tmp_path / "out" / "runs").exists()  # no ledger: no run happened


def test_estimate_gives_money_with_a_price(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "agent"
    root.mkdir()
    for f in EXAMPLE.rglob("*.py"):
        dest = root / f.relative_to(EXAMPLE)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    (root / ".harness-audit.toml").write_text(
        'max_tokens_per_check = 100000\n[prices."openai:m"]\ninput = 1.0\ncached_input = 0.1\noutput = 4.0\n',
        encoding="utf-8")
    assert main([str(root), "C1", "--engine", "llm", "--model", "openai:m", "--estimate"]) == 0
    out = capsys.readouterr().out
    assert "2 subagents" in out  # recon + C1
    assert "Ceiling: 2 × 100,000 = 200,000 tokens" in out
    assert "Ceiling in money: $0.20" in out  # 200,000 weighted tokens, none dearer than a $1/M input token
    expected = float(out.split("Expected cost: ~$", 1)[1].split(" ", 1)[0])
    assert 0 < expected < 0.20


def test_estimate_prices_a_known_model_from_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "C1", "--engine", "hybrid", "--model", "anthropic:claude-sonnet-4-5", "--estimate",
                 "--output-dir", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "Expected cost: ~$" in out and "genai-prices" in out
    assert "Ceiling in money: $0.36" in out  # 120,000 weighted tokens at $3 per million


@pytest.mark.parametrize(("args", "needle"), [
    (["--engine", "llm"], "needs a model"),
    (["--engine", "llm", "--model", "gpt-4"], "is not PROVIDER:NAME"),
    (["--engine", "llm", "--model", "openai:m"], "OPENAI_API_KEY"),
])
def test_model_usage_errors_exit_2_and_say_what_to_do(args: list[str], needle: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main([str(EXAMPLE), "C1", *args, "--output-dir", str(tmp_path)]) == 2
    assert needle in capsys.readouterr().err


def test_a_request_timeout_not_shorter_than_the_check_budget_is_refused(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "agent"
    root.mkdir()
    (root / ".harness-audit.toml").write_text("request_timeout_s = 900\ncheck_timeout_s = 600\n", encoding="utf-8")
    assert main([str(root), "C1", "--engine", "llm", "--model", "openai:m"]) == 2
    assert "must be shorter than check_timeout_s" in capsys.readouterr().err


def test_resume_of_a_directory_without_a_ledger_is_a_usage_error(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["resume", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
