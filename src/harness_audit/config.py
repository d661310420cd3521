"""Configuration: `[tool.harness-audit]` in pyproject.toml or `.harness-audit.toml`, then flags.

Unknown keys and bad values are refused with a `ConfigError` that names the key, the value
and what is allowed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness_audit.catalogue import parse_selection
from harness_audit.errors import ConfigError, UsageError
from harness_audit.messages import Msg, OneOf
from harness_audit.workspace import DEFAULT_EXCLUDES, DEFAULT_MAX_FILE_BYTES, ReadRefused, read_regular

Engine = Literal["static", "llm", "hybrid"]
FailOn = Literal["confirmed", "suspected", "never"]
FORMATS = ("md", "json", "sarif", "html")


class ModelPrice(BaseModel):
    """Dollars per million tokens of one model."""

    model_config = ConfigDict(extra="forbid")
    input: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)
    """Cache reads; unset means unknown (a cost that needs it is shown as unknown)."""
    cache_write: float | None = Field(default=None, ge=0)
    """Cache writes (Anthropic bills 1.25x input for its five-minute cache); unset means unknown."""
    output: float = Field(ge=0)


class AuditConfig(BaseModel):
    """Every setting of an audit, with its default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    checks: list[str] = Field(default_factory=list[str])
    """Default check selection (ids or one preset); empty means "ask", never "everything"."""
    priority_floor: Literal[1, 2] = 2
    """Only configured checks of priority ≤ this run; explicit ids ignore it."""
    concurrency: int = Field(default=3, ge=1, le=16)
    """Check units run at once."""
    engine: Engine = "static"
    """Which engine runs recon and the checks."""
    max_tokens_per_check: int = Field(default=120_000, ge=1000)
    """Token ceiling of one check unit (model engines)."""
    output_dir: str = ".harness-audit"
    """Where reports go, relative to the audited root unless absolute."""
    language: Literal["auto", "en", "zh"] = "auto"
    """Language of the human-facing text."""
    exclude_paths: list[str] = Field(default_factory=lambda: list(DEFAULT_EXCLUDES))
    """Directory names out of scope, matched per path segment; `[]` audits vendored code on purpose."""
    extend_exclude_paths: list[str] = Field(default_factory=list[str])
    """More directory names to exclude, on top of `exclude_paths`."""
    max_file_bytes: int = Field(default=DEFAULT_MAX_FILE_BYTES, ge=1)
    """Larger files are skipped and listed."""
    fail_on: FailOn = "confirmed"
    """Lowest verdict that makes the exit code 1."""
    docs_url: str | None = None
    """Base URL of the check pages for SARIF `helpUri` (default: the Action's repository, or this checkout)."""
    suppressions: bool = True
    """Honour inline `harness-audit: ignore[C8] reason` markers; false (`--no-suppressions`) reports every finding."""
    allow_empty: bool = False
    """Exit 0 even when nothing was audited (0 files analysed, or every selected check not covered)."""
    formats: list[Literal["md", "json", "sarif", "html"]] = Field(default_factory=lambda: ["md", "json", "sarif"])
    """Report formats to write (`html` on request: one self-contained page)."""
    cache: bool = True
    """Reuse the static result when no file changed."""
    min_precision: Literal["low", "medium", "high"] = "low"
    """Report findings of static rules whose measured precision is at least this (`--min-precision`); the others
    are withheld: listed with their rule's record, not counted (`harness_audit.catalogue.precision`). `low`, the
    default, reports every rule: on real bug-fix history the rules of low measured precision find as many bugs as
    the others (benchmarks/README.md, "Precision floor")."""
    preview: bool = False
    """Also run the semantic layer's queries (`--preview`): the analysis engine that is replacing the shape rules,
    one check at a time; its findings join the rules' and go through the same gate."""
    background: bool = False
    """Start every audit as a background job (`--background`): print its job id and return at once."""
    model: str | None = None
    """`provider:name` for the llm and hybrid engines, e.g. `openai:gpt-4.1-mini`."""
    base_url: str | None = None
    """Any OpenAI-compatible endpoint (vLLM, Ollama, DeepSeek, OpenRouter, a local server)."""
    stream: bool = False
    """Stream model responses (same results; some servers time out long non-streamed replies)."""
    max_turns_per_check: int = Field(default=40, ge=1, le=1000)
    """Model requests one check's subagent may make."""
    max_tool_calls_per_check: int = Field(default=120, ge=1, le=10_000)
    """Tool calls one check's subagent may make."""
    check_timeout_s: float = Field(default=900.0, gt=0)
    """Wall clock of one check's subagent."""
    request_timeout_s: float = Field(default=120.0, gt=0)
    """One model request; must be shorter than `check_timeout_s`. Each retry after a timeout is printed."""
    run_timeout_s: float | None = Field(default=None, gt=0)
    """Wall clock of the whole model phase; none by default."""
    transport_retries: int = Field(default=2, ge=0, le=10)
    """Extra attempts of a model request after 429, 5xx, a timeout or a dropped connection (a hung provider
    costs at most `request_timeout_s` x 3 per request by default, each wait announced)."""
    prices: dict[str, ModelPrice] = Field(default_factory=dict[str, "ModelPrice"])
    """Dollars per million tokens per model (`"openai:gpt-4.1-mini" = {input=0.4, cached_input=0.1, output=1.6}`);
    a model not listed is priced from the genai-prices table when it knows it."""
    cross_check_analysis: bool = False
    """Add a model-written section on interactions between findings (inference, not gated)."""
    trace_max_turns: int = Field(default=50, ge=1)
    """Trace checker (C12): model requests per recorded conversation before it is flagged."""
    trace_max_tool_calls: int = Field(default=200, ge=1)
    """Trace checker (C12): executed tool calls per recorded conversation before it is flagged."""
    trace_max_identical_calls: int = Field(default=3, ge=2)
    """Trace checker (C12): the same call with the same arguments and result this many times in a row is flagged."""

    @model_validator(mode="after")
    def _timeouts(self) -> AuditConfig:
        if self.request_timeout_s >= self.check_timeout_s:
            raise ValueError(Msg("err.config.timeouts", request=f"{self.request_timeout_s:g}",
                                 check=f"{self.check_timeout_s:g}"))
        return self

    @field_validator("checks")
    @classmethod
    def _valid_checks(cls, v: list[str]) -> list[str]:
        if v:
            try:
                parse_selection(v, origin=Msg("origin.checks_key"))
            except UsageError as exc:
                raise ValueError(exc.msg or str(exc)) from None
        return v

    @field_validator("exclude_paths", "extend_exclude_paths")
    @classmethod
    def _segments(cls, v: list[str]) -> list[str]:
        for name in v:
            if not name or "/" in name.strip("/") or name in {".", ".."}:
                raise ValueError(Msg("err.config.exclude_segment", name=name))
        return [n.strip("/") for n in v]

    @field_validator("formats")
    @classmethod
    def _formats(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError(Msg("err.config.no_format"))
        return list(dict.fromkeys(v))

    @property
    def excludes(self) -> tuple[str, ...]:
        """The effective per-segment exclude list."""
        return tuple(dict.fromkeys([*self.exclude_paths, *self.extend_exclude_paths]))


_PYDANTIC_MESSAGES = {
    "literal_error": "err.config.expected_one_of", "int_type": "err.config.int", "int_parsing": "err.config.int",
    "int_from_float": "err.config.int", "float_type": "err.config.number", "float_parsing": "err.config.number",
    "bool_type": "err.config.bool", "bool_parsing": "err.config.bool", "string_type": "err.config.string",
    "list_type": "err.config.list", "dict_type": "err.config.table", "model_type": "err.config.table",
    "model_attributes_type": "err.config.table", "greater_than_equal": "err.config.ge",
    "less_than_equal": "err.config.le", "greater_than": "err.config.gt", "less_than": "err.config.lt",
    "missing": "err.config.missing", "finite_number": "err.config.finite",
}
"""pydantic's error types that a configuration meets, as catalogue messages (their values come from `ctx`)."""


def _reason(e: Any) -> Msg | str:
    """One pydantic error as a message in both languages; our validators raise `ValueError(Msg(…))`."""
    ctx: dict[str, Any] = e.get("ctx") or {}
    error = ctx.get("error")
    if isinstance(error, ValueError) and error.args and isinstance(error.args[0], Msg):
        return error.args[0]
    key = _PYDANTIC_MESSAGES.get(e["type"])
    if key is not None:
        values = {name: ctx[name] for name in ("expected", "ge", "le", "gt", "lt") if name in ctx}
        if "expected" in values:  # pydantic's "'a', 'b' or 'c'": the reader's list, not pydantic's English
            values["expected"] = OneOf(re.findall(r"'[^']*'|\S+", str(values["expected"]).replace(",", " ")
                                               .replace(" or ", " ")))
        try:
            return Msg(key, **values)
        except KeyError:
            pass
    return str(e["msg"]).removeprefix("Value error, ")


def _explain(err: ValidationError, where: Msg | str, data: dict[str, Any]) -> ConfigError:
    e = err.errors()[0]
    loc = ".".join(str(p) for p in e["loc"]) or "?"
    key = str(e["loc"][0]) if e["loc"] else "?"
    if e["type"] == "extra_forbidden":
        allowed = ", ".join(AuditConfig.model_fields)
        return ConfigError("err.config.unknown_key", key=key, where=where, allowed=allowed)
    if not e["loc"]:  # a rule across keys
        return ConfigError("err.config.bad", where=where, reason=_reason(e))
    value = data.get(key, e.get("input"))
    return ConfigError("err.config.bad_value", value=value, loc=loc, where=where, reason=_reason(e))


CONFIG_FILE = ".harness-audit.toml"


def _pyproject_table(path: Path) -> dict[str, Any] | None:
    """`[tool.harness-audit]` of a pyproject.toml, or None when it has none."""
    tool = _read_toml(path).get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError("err.config.tool_not_table", path=str(path), tool=tool)
    table = tool.get("harness-audit")  # pyright: ignore[reportUnknownMemberType]
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError("err.config.table_not_table", path=str(path))
    return dict(table)  # type: ignore[arg-type]


def _dedicated_table(path: Path) -> dict[str, Any]:
    """`.harness-audit.toml`: its top-level keys, merged over a `[tool.harness-audit]` table it may also hold."""
    raw = _read_toml(path)
    tool = raw.pop("tool", None)
    table: dict[str, Any] = {}
    if tool is not None:
        if not isinstance(tool, dict) or set(tool) - {"harness-audit"} or not isinstance(  # pyright: ignore
                tool.get("harness-audit", {}), dict):  # pyright: ignore[reportUnknownMemberType]
            raise ConfigError("err.config.dedicated_tool", path=str(path))
        table = dict(tool.get("harness-audit", {}))  # pyright: ignore
    return {**table, **raw}


def find_config_dir(start: Path) -> Path | None:
    """The nearest directory, from `start` upward, with `.harness-audit.toml` or a `[tool.harness-audit]` table."""
    for directory in (start, *start.parents):
        if (directory / CONFIG_FILE).is_file():
            return directory
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and _pyproject_table(pyproject) is not None:
            return directory
    return None


def load_file_config(root: Path) -> tuple[dict[str, Any], str | None]:
    """The settings that apply to `root` and where they came from, searched upward from `root` (as ruff does).

    In the nearest directory that has any: `[tool.harness-audit]` of pyproject.toml, with `.harness-audit.toml`
    merged over it key by key (its own `[tool.harness-audit]` table is read too). A relative `output_dir` is taken
    from that directory, where the file that says it lives.
    """
    directory = find_config_dir(root)
    if directory is None:
        return {}, None
    data: dict[str, Any] = {}
    sources: list[str] = []
    pyproject = directory / "pyproject.toml"
    table = _pyproject_table(pyproject) if pyproject.is_file() else None
    if table is not None:
        data.update({k.replace("-", "_"): v for k, v in table.items()})
        sources.append(f"{pyproject} [tool.harness-audit]")
    dedicated = directory / CONFIG_FILE
    if dedicated.is_file():
        data.update({k.replace("-", "_"): v for k, v in _dedicated_table(dedicated).items()})
        sources.append(str(dedicated))
    out = data.get("output_dir")
    if isinstance(out, str) and out and not Path(out).expanduser().is_absolute():
        data["output_dir"] = str(directory / out)
    return data, " + ".join(sources)


_MAX_CONFIG_BYTES = 4_000_000
"""A configuration file larger than this is refused (read through the workspace's bounded regular-file reader)."""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data = read_regular(path, _MAX_CONFIG_BYTES)
    except ReadRefused as exc:
        raise ConfigError("err.config.unreadable", name=path.name, reason=exc.why) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("err.config.not_utf8", name=path.name) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError("err.config.not_toml", name=path.name, detail=_toml_error(str(exc))) from None
    except RecursionError:
        raise ConfigError("err.config.too_deep", name=path.name) from None


_TOML_ERRORS = (
    ("Cannot overwrite a value", "overwrite"), ("Escaped character is not a Unicode scalar value", "escape"),
    ("Expected '=' after a key in a key/value pair", "expected_equals"),
    ("Expected ']' at the end of a table declaration", "expected_bracket"),
    ("Expected ']]' at the end of an array declaration", "expected_brackets"),
    ("Expected newline or end of document after a statement", "expected_newline"),
    ("Invalid date or datetime", "date"), ("Invalid hex value", "hex"),
    ("Invalid initial character for a key part", "key_start"), ("Invalid statement", "statement"),
    ("Invalid value", "value"), ("Unclosed array", "unclosed_array"), ("Unclosed inline table", "unclosed_table"),
    ("Unescaped '\\' in a string", "backslash"), ("Unterminated string", "unterminated"),
    (r"Cannot declare (?P<key>.+) twice", "declared_twice"), (r"Cannot mutate immutable namespace (?P<key>.+)", "immutable"),
    (r"Cannot redefine namespace (?P<key>.+)", "redefine"), (r"Duplicate inline table key (?P<key>.+)", "duplicate_key"),
    (r"Found invalid character (?P<char>.+)", "invalid_char"), (r"Illegal character (?P<char>.+)", "illegal_char"),
)
"""tomllib's (3.11–3.13) descriptions of a syntax error, and their catalogue messages (`err.toml.*`)."""


def _toml_error(text: str) -> Msg:
    """tomllib's error in the reader's words: its description and its place (line and column, or the end)."""
    m = re.fullmatch(r"(?s)(.*) \(at line (\d+), column (\d+)\)", text)
    where = {"line": int(m.group(2)), "column": int(m.group(3))} if m else {}
    if m is None:
        m = re.fullmatch(r"(?s)(.*) \(at end of document\)", text)
    if m is None:
        return Msg("err.reason.other", detail=text)
    detail: Msg | str = m.group(1)
    for pattern, key in _TOML_ERRORS:
        if found := re.fullmatch(pattern if "(?P<" in pattern else re.escape(pattern), m.group(1)):
            detail = Msg(f"err.toml.{key}", **found.groupdict())
            break
    return Msg("err.config.toml_at", detail=detail, **where) if where else Msg("err.config.toml_at_end", detail=detail)


def build_config(root: Path, overrides: dict[str, Any] | None = None) -> tuple[AuditConfig, str | None]:
    """File settings of `root`, then `overrides` (from flags); returns the config and its file source."""
    data, where = load_file_config(root)
    data = {k.replace("-", "_"): v for k, v in data.items()}
    try:
        base = AuditConfig.model_validate(data)
    except ValidationError as err:
        raise _explain(err, where or Msg("what.configuration"), data) from None
    if not overrides:
        return base, where
    merged = {**base.model_dump(), **{k: v for k, v in overrides.items() if v is not None}}
    try:
        return AuditConfig.model_validate(merged), where
    except ValidationError as err:
        raise _explain(err, Msg("what.flags"), merged) from None
