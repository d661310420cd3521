"""The TS/JS module helpers the C1–C5 rules share: guarded calls, bindings, and symbol navigation across imports."""

from __future__ import annotations

from harness_audit.static.lang.typescript import TsModule, TsProject


def _calls(mod: TsModule, name: str) -> list[str]:
    return [mod.node_text(c) for c in mod.calls() if mod.call_name(c) == name]


def _guarded(mod: TsModule) -> dict[str, bool]:
    return {mod.node_text(c): mod.guarded(c) for c in mod.calls() if mod.call_name(c) == "JSON.parse"}


def test_guarded_sees_try_catch_promise_catch_and_async_callbacks() -> None:
    mod = TsModule.parse("a.ts", """
async function f(calls) {
  try { JSON.parse(a) } catch (e) { log(e) }
  try { JSON.parse(b) } catch (e) { throw e }
  try { JSON.parse(c) } catch (e) { if (e instanceof TypeError) throw e; return null }
  JSON.parse(d)
  await Promise.all(calls.map(async (x) => JSON.parse(x.arguments))).catch(() => [])
  await run(JSON.parse(e)).catch(() => 1)
  try { await Promise.all(calls.map(async (x) => JSON.parse(x.input))) } catch { }
}""")
    assert _guarded(mod) == {
        "JSON.parse(a)": True, "JSON.parse(b)": False, "JSON.parse(c)": True, "JSON.parse(d)": False,
        "JSON.parse(x.arguments)": True, "JSON.parse(e)": False, "JSON.parse(x.input)": True,
    }


def test_bindings_follow_declarations_destructuring_and_reassignment() -> None:
    mod = TsModule.parse("a.ts", "function f({ path: p }, opts = {}) { const { x } = opts; let q = p; q = join(root, q); "
                                 "g(q) }")
    fn = mod.functions()[0]
    assert set(mod.params(fn)) == {"p", "opts"}
    assert {k: [mod.node_text(v) for v in vs] for k, vs in mod.bindings(fn).items()} == {
        "x": ["opts"], "q": ["p", "join(root, q)"]}
    call = next(c for c in mod.calls() if mod.call_name(c) == "g")
    assert "join(root, q)" in mod.derivation_text(fn, call)


def test_resolve_call_follows_local_functions_methods_and_relative_imports() -> None:
    a = TsModule.parse("src/a.ts", "import { run as go } from './b'; import * as ns from './b';\n"
                                   "export function local() { go(1); ns.run(2); helper(); this.x(); pkg.run(3) }\n"
                                   "function helper() {}\nclass K { x() {} }")
    b = TsModule.parse("src/b.ts", "export async function run(x) { return x }")
    project = TsProject({"src/a.ts": a, "src/b.ts": b})
    resolved = {a.node_text(c): [(m.path, m.function_name(f)) for m, f in project.resolve_call(a, c)]
                for c in a.calls()}
    assert resolved == {"go(1)": [("src/b.ts", "run")], "ns.run(2)": [("src/b.ts", "run")],
                        "helper()": [("src/a.ts", "helper")], "this.x()": [("src/a.ts", "x")], "pkg.run(3)": []}
    assert [a.node_text(c) for _, c in project.callers_of(b, b.functions()[0])] == ["go(1)", "ns.run(2)"]
    assert [m.path for m in project.importers(b)] == ["src/a.ts"]


def test_memo_builds_once_per_module_and_key() -> None:
    mod = TsModule.parse("a.ts", "f()")
    project = TsProject({"a.ts": mod})
    built: list[int] = []
    for _ in range(3):
        project.memo("k", mod, lambda: built.append(1) or len(built))
    assert built == [1]
