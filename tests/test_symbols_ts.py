"""The symbol index over TypeScript and JavaScript: definitions, references, imports followed across files."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from harness_audit.llm.tools import NavigationTools
from harness_audit.symbols import SymbolIndex, indexed_languages
from harness_audit.workspace import Workspace
from tests.conftest import MakeTree

AGENT_TS = '''\
import { runTool as execute, type Registry } from "./tools";
import * as tools from "./tools.js";
import makeClient from "./client";

export const MAX_TURNS = 8;
const { retries, backoff: wait } = defaults;

@traced
export class Agent<T> extends Base implements Runner {
  history: Message[] = [];
  onEvent = (event: string) => log(event);
  #secret = 1;

  constructor(private client = makeClient()) {
    super();
  }

  async run(message: string): Promise<string> {
    const step = () => execute(message, this.registry);
    function nested() {}
    return step();
  }

  get size() {
    return this.history.length;
  }
}

export function main(agent: Agent<string>) {
  return agent.run("hi");
}

export const handler = async ({ signal }: Options) => tools.runTool("x", { signal });
const helper = function named() {};
export default Agent;

export interface Tool {
  execute(args: string): Promise<string>;
}
export type ToolName = "read" | "write";
export enum Mode { Fast, Careful = 2 }
export namespace Limits {
  export const turns = 3;
}
declare function overloaded(x: string): void;
export abstract class Step {
  abstract apply(): void;
}
export const registry = {
  search: async (q: string) => q,
  fetch(url: string) { return url; },
};
'''

TOOLS_TS = '''\
export function runTool(name: string, opts?: object): string {
  return name;
}

export class Registry {
  tools = new Map<string, Tool>();
}
'''

CLIENT_TS = '''\
export default function makeClient() {
  return {};
}
'''


def _index(make_tree: MakeTree, files: dict[str, str | bytes]) -> SymbolIndex:
    ws = Workspace.open(make_tree(files))
    return SymbolIndex.build(ws, ws.discover().files)


def _agent(make_tree: MakeTree) -> SymbolIndex:
    return _index(make_tree, {"web/agent.ts": AGENT_TS, "web/tools.ts": TOOLS_TS, "web/client.ts": CLIENT_TS})


def test_typescript_definitions(make_tree: MakeTree) -> None:
    index = _agent(make_tree)
    got = {(s.qualname, s.kind, s.line) for s in index.symbols if s.file == "web/agent.ts"}
    assert got == {
        ("MAX_TURNS", "variable", 5),
        ("retries", "variable", 6),
        ("wait", "variable", 6),
        ("Agent", "class", 9),
        ("Agent.history", "variable", 10),
        ("Agent.onEvent", "method", 11),
        ("Agent.#secret", "variable", 12),
        ("Agent.constructor", "method", 14),
        ("Agent.run", "method", 18),
        ("Agent.run.step", "function", 19),
        ("Agent.run.nested", "function", 20),
        ("Agent.size", "method", 24),
        ("main", "function", 29),
        ("handler", "function", 33),
        ("helper", "function", 34),
        ("Tool", "interface", 37),
        ("ToolName", "type", 40),
        ("Mode", "enum", 41),
        ("Mode.Fast", "variable", 41),
        ("Mode.Careful", "variable", 41),
        ("Limits", "namespace", 42),
        ("Limits.turns", "variable", 43),
        ("overloaded", "function", 45),
        ("Step", "class", 46),
        ("Step.apply", "method", 47),
        ("registry", "variable", 49),
        ("registry.search", "method", 50),
        ("registry.fetch", "method", 51),
    }
    assert {s.language for s in index.symbols} == {"typescript"}
    assert [s.name for s in index.definitions("Agent.run.step")] == ["step"]


def test_typescript_references_are_uses_not_bindings(make_tree: MakeTree) -> None:
    index = _agent(make_tree)
    # the imported name, not its alias; the call through the alias is a use of `execute`
    assert [(r.file, r.line, r.column) for r in index.references("runTool")] == [
        ("web/agent.ts", 1, 10), ("web/agent.ts", 33, 61)]
    assert [(r.line, r.column) for r in index.references("execute") if r.file == "web/agent.ts"] == [(19, 24)]
    # a method call through any receiver, and a type annotation
    assert [(r.file, r.line) for r in index.references("Agent.run")] == [("web/agent.ts", 30)]
    assert [r.line for r in index.references("Agent")] == [29, 35]
    assert [r.line for r in index.references("Registry")] == [1]
    # shorthand properties and destructured option names read a property
    assert [(r.line, r.column) for r in index.references("signal")] == [(33, 33), (33, 76)]
    # declarations, parameters, object keys, type parameters and stores are no references
    for name in ("MAX_TURNS", "search", "wait", "T", "nested", "Mode", "Careful"):
        assert index.references(name) == (), name
    assert [r.line for r in index.references("message")] == [19]  # the read, not the parameter


def test_columns_count_characters(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"u.ts": 'const x = "éé" + émoji.call();\n'})
    (ref,) = index.references("call")
    assert (ref.line, ref.column) == (1, 24)
    assert 'const x = "éé" + émoji.call();'[ref.column - 1:].startswith("call")


def test_tsx_components_are_defined_and_referenced(make_tree: MakeTree) -> None:
    source = '''\
import { Panel } from "./panel";

export function Chat({ messages }: Props) {
  const render = (m: Message) => <Panel key={m.id} title={m.text} />;
  return <ul>{messages.map(render)}</ul>;
}
'''
    index = _index(make_tree, {"ui/chat.tsx": source, "ui/panel.tsx": "export const Panel = () => <div />;\n"})
    assert {(s.qualname, s.kind) for s in index.symbols if s.file == "ui/chat.tsx"} == {
        ("Chat", "function"), ("Chat.render", "function")}
    assert [(r.file, r.line) for r in index.references("Panel")] == [("ui/chat.tsx", 1), ("ui/chat.tsx", 4)]
    assert index.references("title") == ()  # a JSX attribute is a key
    assert [(s.file, s.qualname) for s in index.resolve("ui/chat.tsx", "Panel")] == [("ui/panel.tsx", "Panel")]


@dataclass(frozen=True)
class Case:
    """A JS module shape: the file, its source, and the definitions it must yield."""

    path: str
    source: str
    definitions: frozenset[tuple[str, str]]


JS_CASES = [
    Case("lib/esm.mjs", '''\
import { spawn } from "node:child_process";
export async function runCommand(cmd) {
  return spawn(cmd);
}
export class Shell { kill = () => {}; static create() {} }
''', frozenset({("runCommand", "function"), ("Shell", "class"), ("Shell.kill", "method"),
                ("Shell.create", "method")})),
    Case("lib/legacy.cjs", '''\
const path = require("path");
const { readFile } = require("fs/promises");
const LIMIT = 5;
exports.readTool = async function (args) { return readFile(path.join(args.dir)); };
module.exports.writeTool = (args) => args;
Agent.prototype.loop = function loop() {};
''', frozenset({("LIMIT", "variable"), ("readTool", "function"), ("writeTool", "function"),
                ("Agent.loop", "method")})),
    Case("lib/plain.js", '''\
var Client = class { send() {} };
function helper() { var local = 1; return local; }
''', frozenset({("Client", "class"), ("Client.send", "method"), ("helper", "function")})),
    Case("lib/view.jsx", '''\
export const View = ({ items }) => <List items={items} />;
''', frozenset({("View", "function")})),
]


@pytest.mark.parametrize("case", JS_CASES, ids=lambda c: c.path)
def test_javascript_definitions(make_tree: MakeTree, case: Case) -> None:
    index = _index(make_tree, {case.path: case.source})
    assert {(s.qualname, s.kind) for s in index.symbols} == case.definitions
    assert {s.language for s in index.symbols} == {"javascript"}
    assert index.unparsed == ()


def test_javascript_references(make_tree: MakeTree) -> None:
    index = _index(make_tree, {c.path: c.source for c in JS_CASES})
    assert [(r.file, r.line) for r in index.references("readFile")] == [("lib/legacy.cjs", 2), ("lib/legacy.cjs", 4)]
    assert [(r.file, r.line, r.column) for r in index.references("join")] == [("lib/legacy.cjs", 4, 65)]
    assert [(r.file, r.line) for r in index.references("List")] == [("lib/view.jsx", 1)]
    assert [(r.file, r.line) for r in index.references("local")] == [("lib/plain.js", 2)]  # the read, not the store


def test_follows_imports_to_the_definition_in_another_module(make_tree: MakeTree) -> None:
    index = _agent(make_tree)

    def where(name: str, file: str = "web/agent.ts") -> list[tuple[str, str]]:
        return [(s.file, s.qualname) for s in index.resolve(file, name)]

    assert where("execute") == [("web/tools.ts", "runTool")]  # aliased named import
    assert where("tools.runTool") == [("web/tools.ts", "runTool")]  # namespace import of `./tools.js`
    assert where("makeClient") == [("web/client.ts", "makeClient")]  # default import
    assert where("Registry") == [("web/tools.ts", "Registry")]
    assert where("Registry.tools") == [("web/tools.ts", "Registry.tools")]
    assert where("Agent.run") == [("web/agent.ts", "Agent.run")]  # the file's own
    assert where("this.run") == [("web/agent.ts", "Agent.run")]
    assert where("step") == [("web/agent.ts", "Agent.run.step")]  # nested, by bare name
    assert where("default") == [("web/agent.ts", "Agent")]  # `export default Agent`
    assert where("log") == []  # not defined anywhere indexed
    assert where("runTool", "web/other.ts") == []  # not an indexed file


def test_follows_barrels_re_exports_and_commonjs(make_tree: MakeTree) -> None:
    index = _index(make_tree, {
        "src/tools/run.ts": "export function runTool() {}\nexport class Agent { run() {} }\n",
        "src/tools/index.ts": 'export * from "./run";\nexport { Agent as Bot, runTool as default } from "./run";\n',
        "src/app.ts": 'import exec, { runTool, Bot } from "./tools";\nimport OpenAI from "openai";\n',
        # what `tsc` emits for the same barrel as CommonJS
        "cjs/run.js": "function runTool() {}\nexports.runTool = runTool;\nclass Agent { run() {} }\n"
                       "exports.Agent = Agent;\n",
        "cjs/index.js": '__exportStar(require("./run"), exports);\nvar run_1 = require("./run");\n'
                         'Object.defineProperty(exports, "Bot", { enumerable: true, get: function () '
                         "{ return run_1.Agent; } });\n",
        "cjs/main.js": 'const { runTool, Bot: B } = require("./index");\nconst lib = require("./index.js");\n'
                        'const m = __importStar(require("./run"));\nconst only = require("./run").runTool;\n',
    })

    def where(file: str, name: str) -> list[tuple[str, str]]:
        return [(s.file, s.qualname) for s in index.resolve(file, name)]

    assert where("src/app.ts", "runTool") == [("src/tools/run.ts", "runTool")]  # `./tools` -> `./tools/index.ts`
    assert where("src/app.ts", "Bot") == [("src/tools/run.ts", "Agent")]
    assert where("src/app.ts", "Bot.run") == [("src/tools/run.ts", "Agent.run")]
    assert where("src/app.ts", "exec") == [("src/tools/run.ts", "runTool")]  # a default that is a re-export
    assert where("src/app.ts", "OpenAI") == []  # a package: not indexed
    assert where("src/tools/index.ts", "Bot") == [("src/tools/run.ts", "Agent")]  # what the barrel exports
    assert where("cjs/main.js", "runTool") == [("cjs/run.js", "runTool")]
    assert where("cjs/main.js", "B.run") == [("cjs/run.js", "Agent.run")]
    assert where("cjs/main.js", "lib.runTool") == [("cjs/run.js", "runTool")]
    assert where("cjs/main.js", "m.Agent") == [("cjs/run.js", "Agent")]
    assert where("cjs/main.js", "only") == [("cjs/run.js", "runTool")]
    assert where("cjs/index.js", "Bot") == [("cjs/run.js", "Agent")]
    # the getter inside `Object.defineProperty` is plumbing, not a definition
    assert index.definitions("get") == ()


def test_import_cycles_end(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"a.ts": 'export * from "./b";\nexport { x } from "./b";\n',
                               "b.ts": 'export * from "./a";\nexport { x } from "./a";\n',
                               "c.ts": 'import { x, y } from "./a";\n'})
    assert index.resolve("c.ts", "x") == ()
    assert index.resolve("c.ts", "y") == ()


def test_syntax_errors_index_what_parsed_and_are_listed(make_tree: MakeTree) -> None:
    broken = '''\
export function before() {
  return 1;
}

function broken() {
  const x = ;
  return run(x;
}

export class After {
  go() { return before(); }
}
'''
    index = _index(make_tree, {"web/broken.ts": broken, "web/garbage.js": "}{ ) ((( => => ;;; class\n",
                               "web/empty.mjs": ""})
    (note, garbage) = index.unparsed
    assert (note.path, note.partial) == ("web/broken.ts", True)
    assert note.reason == "partially parsed: syntax error near line 6"
    assert (garbage.path, garbage.partial) == ("web/garbage.js", True)
    assert index.files == ("web/broken.ts", "web/empty.mjs", "web/garbage.js")
    assert {s.qualname for s in index.symbols if s.file == "web/broken.ts"} >= {"before", "broken", "After",
                                                                                  "After.go"}
    assert [r.line for r in index.references("before")] == [11]


def test_mixed_project_answers_for_both_languages(make_tree: MakeTree) -> None:
    root = make_tree({
        "backend/agent/loop.py": "from .tools import run_tool as execute\n\n\ndef main():\n    return execute(1)\n",
        "backend/agent/tools.py": "def run_tool(call):\n    return call\n",
        "backend/agent/__init__.py": "from .tools import run_tool\n",
        "backend/cli.py": "import agent.tools as t\nfrom agent import run_tool, tools\n",
        "web/tools.ts": TOOLS_TS,
        "web/app.ts": 'import { runTool } from "./tools";\n\nexport const go = () => runTool("x");\n',
    })
    ws = Workspace.open(root)
    index = SymbolIndex.build(ws, ws.discover().files)
    assert index.languages == indexed_languages() == frozenset({"python", "typescript", "javascript"})
    assert {(s.file, s.language) for s in index.definitions("run_tool") + index.definitions("runTool")} == {
        ("backend/agent/tools.py", "python"), ("web/tools.ts", "typescript")}
    # Python imports are followed the same way: relative, package re-export, submodule, `src`-less absolute
    assert [s.file for s in index.resolve("backend/agent/loop.py", "execute")] == ["backend/agent/tools.py"]
    assert [s.file for s in index.resolve("backend/cli.py", "run_tool")] == ["backend/agent/tools.py"]
    assert [s.file for s in index.resolve("backend/cli.py", "tools.run_tool")] == ["backend/agent/tools.py"]
    assert [s.file for s in index.resolve("backend/cli.py", "t.run_tool")] == ["backend/agent/tools.py"]
    assert [s.file for s in index.resolve("web/app.ts", "runTool")] == ["web/tools.ts"]

    tools = NavigationTools(ws, index)
    assert tools.find_symbol("runTool").splitlines() == [
        "definitions of 'runTool' (symbol index): 1",
        "web/tools.ts:1: function runTool: export function runTool(name: string, opts?: object): string {",
    ]
    assert tools.find_symbol("run_tool").splitlines()[1] == "backend/agent/tools.py:1: function run_tool: " \
                                                            "def run_tool(call):"
    assert tools.find_references("runTool").splitlines() == [
        "references to 'runTool' (symbol index): 2",
        'web/app.ts:1:10: import { runTool } from "./tools";',
        'web/app.ts:3:25: export const go = () => runTool("x");',
    ]
    assert not tools.degraded


def test_navigation_tools_on_a_typescript_workspace_use_the_index(make_tree: MakeTree) -> None:
    root = make_tree({"web/agent.ts": AGENT_TS, "web/tools.ts": TOOLS_TS, "web/client.ts": CLIENT_TS,
                      "web/notes.md": "runTool is documented here\n"})
    ws = Workspace.open(root)
    tools = NavigationTools(ws, SymbolIndex.build(ws, ws.discover().files))
    assert tools.find_symbol("Agent.run").splitlines() == [
        "definitions of 'Agent.run' (symbol index): 1",
        "web/agent.ts:18: method Agent.run: async run(message: string): Promise<string> {",
    ]
    assert tools.find_symbol("Mode").splitlines()[1] == "web/agent.ts:41: enum Mode: export enum Mode { Fast, " \
                                                        "Careful = 2 }"
    refs = tools.find_references("runTool").splitlines()
    assert refs[0] == "references to 'runTool' (symbol index): 2"
    assert not any(line.startswith("degraded") for line in refs)
    assert not tools.degraded


def test_every_query_pattern_fits_a_grammar() -> None:
    from harness_audit.symbols import _TS_PATTERNS, _ts_query  # pyright: ignore[reportPrivateUsage]

    # a misspelt node type or field would drop its pattern from every grammar, silently
    kept = {p for dialect in ("typescript", "tsx", "javascript") for p in _ts_query(dialect).patterns}
    assert kept == set(_TS_PATTERNS)
    assert all(_ts_query(d).query.pattern_count == len(_ts_query(d).patterns) for d in ("typescript", "javascript"))


def test_build_is_deterministic(make_tree: MakeTree) -> None:
    root = make_tree({"web/agent.ts": AGENT_TS, "web/tools.ts": TOOLS_TS, "lib/legacy.cjs": JS_CASES[1].source})
    ws = Workspace.open(root)
    files = ws.discover().files
    first = SymbolIndex.build(ws, files)
    second = SymbolIndex.build(Workspace.open(root), reversed(files))
    assert first.symbols == second.symbols
    assert first.references("run") == second.references("run")
