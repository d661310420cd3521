"""What common Python harness idioms look like: model calls, HTTP, spawns, retries, writes.

Recon and the rules ask these predicates instead of each keeping its own name lists.
"""

from __future__ import annotations

import ast
import re

from harness_audit.static.lang.python import FunctionNode, PyModule

_MODEL_SUFFIXES = (
    "chat.completions.create", "chat.completions.parse", "chat.completions.stream", "messages.create",
    "messages.stream", "responses.create", "responses.stream", "responses.parse", "generate_content",
    "generate_content_async", "ChatCompletion.create", "ChatCompletion.acreate", "Completion.create",
    "completions.create", "models.generate_content", "aio.models.generate_content",
)
_MODEL_FUNCS = {"litellm.completion", "litellm.acompletion", "ollama.chat", "ollama.generate"}
_MODEL_METHOD_NAMES = {"invoke", "ainvoke", "stream", "astream", "generate", "agenerate", "complete", "acomplete",
                       "chat", "achat", "create"}
_MODEL_RECEIVER = re.compile(r"(llm|model|chat|client|provider|anthropic|openai|gemini|claude|gpt)", re.I)
_MODEL_URL = re.compile(r"(chat/completions|/v1/messages|/responses\b|:generateContent|:streamGenerateContent|"
                        r"/api/chat|/api/generate|/completions\b)")

HTTP_METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream", "send"}
SIDE_EFFECT_HTTP = {"post", "put", "patch", "delete"}
_HTTP_MODULES = ("requests", "httpx", "aiohttp", "urllib3")
_HTTP_RECEIVER = re.compile(r"(session|client|http|requests|httpx|api|conn)", re.I)

SPAWN_CALLS = {
    "subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen", "os.execv", "os.execvp",
    "os.execve", "os.execvpe", "os.spawnv", "os.spawnvp", "os.posix_spawn", "os.posix_spawnp",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell", "pexpect.spawn", "pexpect.run",
    "anyio.run_process", "anyio.open_process", "trio.run_process", "sh.Command",
}
RETRY_DECORATORS = {
    "tenacity.retry", "retrying.retry", "backoff.on_exception", "backoff.on_predicate", "stamina.retry",
    "retry.retry", "async_retrying.retry", "tenacity.asyncio.retry",
}
RETRY_ITERATORS = {"tenacity.Retrying", "tenacity.AsyncRetrying", "stamina.retry_context"}
_WRITE_MODE = re.compile(r"[wax+]")


def last(name: str) -> str:
    """The last dotted part of a name."""
    return name.rsplit(".", 1)[-1]


def receiver(name: str) -> str:
    """Everything before the last dotted part (`self.client.post` → `self.client`)."""
    return name.rpartition(".")[0]


def is_model_call(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` sends a request to a model provider (SDK call, LiteLLM, LangChain, raw POST)."""
    name = mod.call_name(call)
    if not name:
        return False
    if name in _MODEL_FUNCS or any(name.endswith(s) for s in _MODEL_SUFFIXES):
        return True
    if name.endswith(".completion") or name.endswith(".acompletion") or name in {"completion", "acompletion"}:
        return "litellm" in name or mod.imports.get(name, "").startswith("litellm")
    meth = last(name)
    if meth in _MODEL_METHOD_NAMES and _MODEL_RECEIVER.search(receiver(name)) and meth != "create":
        return not is_http_call(mod, call)
    if is_http_call(mod, call):
        return any(_MODEL_URL.search(s) for s in string_parts(call))
    return False


def string_parts(node: ast.AST) -> list[str]:
    """Every string literal (and f-string constant part) inside `node`."""
    out: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.append(sub.value)
    return out


def http_method(mod: PyModule, call: ast.Call) -> str | None:
    """The HTTP verb of an HTTP client call (`post`, `get`, …), or None if `call` is not one."""
    name = mod.call_name(call)
    if not name:
        return None
    if name in {"urllib.request.urlopen", "urlopen"}:
        return "post" if len(call.args) > 1 or mod.keyword(call, "data") is not None else "get"
    meth = last(name)
    if meth not in HTTP_METHODS:
        return None
    recv = receiver(name)
    if not recv:
        return None
    if recv.split(".")[0] in _HTTP_MODULES or _HTTP_RECEIVER.search(recv.rsplit(".", 1)[-1]):
        if meth in {"request", "stream", "send"}:
            verb = call.args[0] if call.args else mod.keyword(call, "method")
            if isinstance(verb, ast.Constant) and isinstance(verb.value, str):
                return verb.value.lower()
            return "request"
        return meth
    return None


def is_http_call(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` is an outbound HTTP request."""
    return http_method(mod, call) is not None


def is_spawn(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` starts a process."""
    name = mod.call_name(call)
    return name in SPAWN_CALLS or (name.startswith("os.exec") or name.startswith("os.spawn"))


def decorator_name(mod: PyModule, dec: ast.expr) -> str:
    """Qualified name of a decorator, with or without call parentheses."""
    return mod.qualname(dec.func if isinstance(dec, ast.Call) else dec) or ""


def retry_decorator(mod: PyModule, fn: FunctionNode) -> ast.expr | None:
    """The retry decorator on `fn` (tenacity, backoff, stamina, retrying…), if any."""
    for dec in fn.decorator_list:
        name = decorator_name(mod, dec)
        if name in RETRY_DECORATORS or last(name) in {"retry", "on_exception", "retry_async", "async_retry"}:
            return dec
    return None


def is_file_write(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` writes or deletes a file (open for writing, write_text, json.dump, os.remove…)."""
    name = mod.call_name(call)
    if name in {"open", "io.open", "aiofiles.open", "codecs.open", "os.open"} or name.endswith(".open"):
        mode = call.args[1] if len(call.args) > 1 else mod.keyword(call, "mode")
        return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(_WRITE_MODE.search(mode.value))
    return last(name) in {"write_text", "write_bytes"} or name in {
        "json.dump", "pickle.dump", "yaml.dump", "yaml.safe_dump", "shutil.copy", "shutil.copyfile", "shutil.move",
        "shutil.rmtree", "os.remove", "os.unlink", "os.rename", "os.replace", "os.rmdir", "os.makedirs",
    }


_MESSAGE_NAME = re.compile(r"(messages|history|conversation|transcript|chat_log|turns|context|msgs|dialog)", re.I)


def is_message_list(mod: PyModule, expr: ast.AST) -> bool:
    """Whether an expression names a message history (`messages`, `self.history`, `state["messages"]`)."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        return isinstance(expr.slice.value, str) and bool(_MESSAGE_NAME.search(expr.slice.value))
    dotted = mod.dotted(expr)
    return bool(dotted) and bool(_MESSAGE_NAME.search(last(dotted)))


def target_name(mod: PyModule, expr: ast.AST) -> str:
    """A printable name for an assignment target or receiver."""
    return mod.dotted(expr) or mod.segment(expr)
