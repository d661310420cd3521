"""Python front end: tree-sitter-python parse trees lowered into the IR.

tree-sitter parses every Python 3 version's syntax (3.12 type parameters, `type X = …`, `except*`)
whatever Python runs the audit, and recovers from errors: a file that does not parse whole is lowered as
far as it parses and says so in `Module.error`.
"""

from __future__ import annotations

import ast
from functools import cache
from typing import TYPE_CHECKING

from harness_audit.static.sem import ir

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


_F: dict[str, int] = {}
"""The grammar's field ids by name (filled with the parser): a field read by id skips a name lookup per node."""


@cache
def _parser() -> Parser:
    import tree_sitter_python
    from tree_sitter import Language, Parser

    lang = Language(tree_sitter_python.language())
    for name in ("alias", "alternative", "argument", "arguments", "attribute", "body", "condition", "consequence",
                 "definition", "expression", "function", "key", "left", "module_name", "name", "object", "operator",
                 "parameters", "return_type", "right", "subject", "subscript", "superclasses", "type", "value"):
        field = lang.field_id_for_name(name)
        assert field is not None, name
        _F[name] = field
    return Parser(lang)


def parse(path: str, text: str) -> ir.Module:
    """Lower one Python file. Never raises on bad syntax: see `Module.error`."""
    source = text.encode("utf-8", errors="surrogatepass")
    tree = _parser().parse(source)
    mod = ir.Module(path, "python", text)
    low = _Lowerer(mod, source)
    root = tree.root_node
    body = mod.body
    body.end = low.rows[root.end_byte]
    mod.functions.append(body)
    try:
        body.body = low.block(root)
    except RecursionError:
        mod.error = "nested too deeply to analyse"
        body.body = []
        mod.functions[1:] = []
        mod.classes.clear()
    if root.has_error and mod.error is None:
        mod.error = f"syntax error at line {_first_error_line(root)}"
    return mod


def _first_error_line(root: Node) -> int:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return n.start_point[0] + 1
        if n.has_error:
            stack.extend(reversed(n.children))
    return root.start_point[0] + 1


def line_table(source: bytes) -> list[int]:
    """The 1-based line of every byte offset of `source` (and of the offset just past its end), as tree-sitter
    counts rows (a line ends at `\n`). One int object per line, shared by every node on it: a node's position
    costs two list reads instead of two `Point`s and two new ints."""
    out: list[int] = []
    extend = out.extend
    for line, piece in enumerate(source.split(b"\n"), 1):
        extend([line] * (len(piece) + 1))
    return out


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


class _Texts:
    """Text of nodes by byte range, decoded once per distinct spelling (names repeat thousands of times)."""

    __slots__ = ("src", "seen")

    def __init__(self, src: bytes) -> None:
        self.src = src
        self.seen: dict[bytes, str] = {}

    def __call__(self, node: Node) -> str:
        raw = self.src[node.start_byte:node.end_byte]
        text = self.seen.get(raw)
        if text is None:
            text = self.seen[raw] = raw.decode("utf-8", errors="replace")
        return text


_BINARY = frozenset({"binary_operator", "boolean_operator"})
_COMPS = {"list_comprehension": "list", "set_comprehension": "set", "dictionary_comprehension": "dict",
          "generator_expression": "gen"}
_SEQS = {"list": "list", "tuple": "tuple", "set": "set", "expression_list": "tuple", "pattern_list": "tuple",
         "tuple_pattern": "tuple", "list_pattern": "list"}
_SKIP_STMTS = frozenset({"pass_statement", "import_statement", "import_from_statement", "future_import_statement",
                         "global_statement", "nonlocal_statement", "comment", "type_alias_statement",
                         "print_statement", "exec_statement", "line_continuation"})


class _Lowerer:
    __slots__ = ("mod", "fn_stack", "cls_stack", "text", "rows", "src", "seen")

    def __init__(self, mod: ir.Module, source: bytes) -> None:
        self.mod = mod
        self.text = _Texts(source)
        self.src = source
        self.seen = self.text.seen
        self.rows = line_table(source)
        self.fn_stack: list[ir.Function] = [mod.body]
        self.cls_stack: list[ir.Class] = []

    # ------------------------------------------------------------ statements

    def block(self, node: Node | None) -> ir.Block:
        out: ir.Block = []
        if node is None:
            return out
        for child in node.named_children:
            self.stmt(child, out)
        return out

    def stmt(self, n: Node, out: ir.Block) -> None:  # noqa: C901 - one dispatch over the grammar's statements
        t = n.type
        line, end = self.rows[n.start_byte], self.rows[n.end_byte]
        if t == "expression_statement":
            for child in n.named_children:
                self._expr_stmt(child, out)
        elif t in _SKIP_STMTS:
            if t in ("import_statement", "import_from_statement", "future_import_statement"):
                self._import(n)
        elif t == "return_statement":
            kids = n.named_children
            out.append(ir.Return(line, end, self.expr(kids[0]) if kids else None))
        elif t == "raise_statement":
            kids = n.named_children
            out.append(ir.Raise(line, end, self.expr(kids[0]) if kids else None))
        elif t == "if_statement":
            out.append(self._if(n))
        elif t == "for_statement":
            out.append(ir.Loop(line, end, "for", target=self.expr(n.child_by_field_id(_F["left"])),
                               iter=self.expr(n.child_by_field_id(_F["right"])),
                               body=self.block(n.child_by_field_id(_F["body"])),
                               orelse=self._else(n.child_by_field_id(_F["alternative"])),
                               is_async=_has_token(n, "async")))
        elif t == "while_statement":
            out.append(ir.Loop(line, end, "while", test=self.expr(n.child_by_field_id(_F["condition"])),
                               body=self.block(n.child_by_field_id(_F["body"])),
                               orelse=self._else(n.child_by_field_id(_F["alternative"]))))
        elif t == "try_statement":
            out.append(self._try(n))
        elif t == "with_statement":
            items: list[tuple[ir.Expr, ir.Expr | None]] = []
            for clause in n.named_children:
                if clause.type == "with_clause":
                    for item in clause.named_children:
                        value = item.child_by_field_id(_F["value"]) or (item.named_children or [item])[0]
                        items.append(self._as(value))
            out.append(ir.With(line, end, items, self.block(n.child_by_field_id(_F["body"])),
                               is_async=_has_token(n, "async")))
        elif t == "function_definition":
            fn = self.function(n, [])
            out.append(ir.Def(line, end, fn=fn))
        elif t == "class_definition":
            out.append(ir.Def(line, end, cls=self.klass(n, [])))
        elif t == "decorated_definition":
            decorators = [self.expr(d.named_children[0]) for d in n.named_children
                          if d.type == "decorator" and d.named_children]
            inner = n.child_by_field_id(_F["definition"])
            if inner is not None and inner.type == "function_definition":
                fn = self.function(inner, decorators)
                out.append(ir.Def(line, end, fn=fn))
            elif inner is not None and inner.type == "class_definition":
                out.append(ir.Def(line, end, cls=self.klass(inner, decorators)))
        elif t in ("break_statement", "continue_statement"):
            out.append(ir.Jump(line, end, "break" if t == "break_statement" else "continue"))
        elif t == "delete_statement":
            targets = [self.expr(k) for k in n.named_children]
            if len(targets) == 1 and isinstance(targets[0], ir.Seq) and targets[0].kind == "tuple":
                targets = targets[0].items
            out.append(ir.Assign(line, end, targets, None, op="del"))
        elif t == "assert_statement":
            kids = n.named_children
            if kids:
                out.append(ir.If(line, end, self.expr(kids[0]), [],
                                 [ir.Raise(line, end, ir.Call(line, end, ir.Name(line, end, "AssertionError"),
                                                              [self.expr(k) for k in kids[1:]], []))]))
        elif t == "match_statement":
            subject = n.child_by_field_id(_F["subject"])
            cases: list[tuple[ir.Expr | None, ir.Block]] = []
            body = n.child_by_field_id(_F["body"])
            for case in body.named_children if body is not None else []:
                if case.type != "case_clause":
                    continue
                pats = [c for c in case.named_children if c.type == "case_pattern"]
                pattern = None if not pats or pats[0].named_child_count == 0 else self.expr(pats[0])
                cases.append((pattern, self.block(case.child_by_field_id(_F["consequence"]))))
            out.append(ir.Switch(line, end, self.expr(subject) if subject is not None else ir.Lit(line, end, None),
                                 cases))
        elif t == "block":
            out.extend(self.block(n))
        elif t == "ERROR":
            for child in n.named_children:
                if child.type.endswith("_statement") or child.type in ("expression_statement", "block"):
                    self.stmt(child, out)
        # anything else (a stray token) carries no behaviour

    def _expr_stmt(self, n: Node, out: ir.Block) -> None:
        line, end = self.rows[n.start_byte], self.rows[n.end_byte]
        t = n.type
        if t == "assignment":
            targets: list[ir.Expr] = []
            cur: Node | None = n
            value: Node | None = None
            ann: str | None = None
            while cur is not None and cur.type == "assignment":
                left = cur.child_by_field_id(_F["left"])
                if left is not None:
                    targets.append(self.expr(left))
                typ = cur.child_by_field_id(_F["type"])
                if typ is not None and ann is None:
                    ann = self.text(typ)
                value = cur.child_by_field_id(_F["right"])
                cur = value
            out.append(ir.Assign(line, end, targets, self.expr(value) if value is not None else None,
                                 decl="ann" if ann is not None else "", type=ann))
        elif t == "augmented_assignment":
            op = n.child_by_field_id(_F["operator"])
            out.append(ir.Assign(line, end, [self.expr(n.child_by_field_id(_F["left"]))],
                                 self.expr(n.child_by_field_id(_F["right"])), op=self.text(op) if op else "+="))
        elif t == "string" and self._is_docstring_position(out):
            return
        else:
            out.append(ir.ExprStmt(line, end, self.expr(n)))

    def _is_docstring_position(self, out: ir.Block) -> bool:
        return not out

    def _if(self, n: Node) -> ir.If:
        line, end = self.rows[n.start_byte], self.rows[n.end_byte]
        test = self.expr(n.child_by_field_id(_F["condition"]))
        body = self.block(n.child_by_field_id(_F["consequence"]))
        alts = [c for c in n.children_by_field_id(_F["alternative"])]
        orelse: ir.Block = []
        # elif chains: fold from the last clause backwards
        for alt in reversed(alts):
            if alt.type == "else_clause":
                orelse = self.block(alt.child_by_field_id(_F["body"]))
            elif alt.type == "elif_clause":
                orelse = [ir.If(self.rows[alt.start_byte], self.rows[alt.end_byte],
                                self.expr(alt.child_by_field_id(_F["condition"])),
                                self.block(alt.child_by_field_id(_F["consequence"])), orelse)]
        return ir.If(line, end, test, body, orelse)

    def _else(self, n: Node | None) -> ir.Block:
        if n is None:
            return []
        return self.block(n.child_by_field_id(_F["body"]))

    def _try(self, n: Node) -> ir.Try:
        line, end = self.rows[n.start_byte], self.rows[n.end_byte]
        handlers: list[ir.Handler] = []
        orelse: ir.Block = []
        final: ir.Block = []
        for child in n.named_children:
            ct = child.type
            if ct in ("except_clause", "except_group_clause"):
                types: list[ir.Expr] = []
                name: str | None = None
                body_node = None
                for part in child.named_children:
                    if part.type == "block":
                        body_node = part
                    elif part.type == "as_pattern":
                        inner = part.named_children[0] if part.named_children else None
                        alias = part.child_by_field_id(_F["alias"])
                        if inner is not None:
                            types.extend(self._types(inner))
                        if alias is not None:
                            name = self.text(alias)
                    elif part.type != "comment":
                        types.extend(self._types(part))
                        # old grammar: `except E, e` / `except E as e` as two children
                if not types and ct == "except_group_clause":
                    types = [ir.Name(line, end, "BaseExceptionGroup")]
                handlers.append(ir.Handler(self.rows[child.start_byte], self.rows[child.end_byte], types, name,
                                           self.block(body_node)))
            elif ct == "else_clause":
                orelse = self.block(child.child_by_field_id(_F["body"]))
            elif ct == "finally_clause":
                final = self.block(child.named_children[-1] if child.named_children else None)
        return ir.Try(line, end, self.block(n.child_by_field_id(_F["body"])), handlers, orelse, final)

    def _types(self, n: Node) -> list[ir.Expr]:
        e = self.expr(n)
        if isinstance(e, ir.Seq):
            return list(e.items)
        return [e]

    def _as(self, value: Node) -> tuple[ir.Expr, ir.Expr | None]:
        if value.type == "as_pattern":
            inner = value.named_children[0] if value.named_children else value
            alias = value.child_by_field_id(_F["alias"])
            target = None
            if alias is not None:
                target = self.expr(alias.named_children[0] if alias.named_children else alias)
            return self.expr(inner), target
        return self.expr(value), None

    def _import(self, n: Node) -> None:
        line = self.rows[n.start_byte]
        imports = self.mod.imports
        if n.type == "import_statement":
            for item in n.named_children:
                if item.type == "aliased_import":
                    name = self.text(item.child_by_field_id(_F["name"]))
                    alias = self.text(item.child_by_field_id(_F["alias"]))
                    imports[alias] = ir.Import(alias, name, "*", line)
                elif item.type == "dotted_name":
                    dotted = self.text(item)
                    top = dotted.split(".")[0]
                    imports.setdefault(top, ir.Import(top, top, "*", line))
                    if dotted != top:
                        imports[dotted] = ir.Import(dotted, dotted, "*", line)
        elif n.type == "import_from_statement":
            src = n.child_by_field_id(_F["module_name"])
            source = self.text(src) if src is not None else ""
            for item in n.children_by_field_id(_F["name"]):
                if item.type == "aliased_import":
                    name = self.text(item.child_by_field_id(_F["name"]))
                    alias = self.text(item.child_by_field_id(_F["alias"]))
                    imports[alias] = ir.Import(alias, source, name, line)
                else:
                    name = self.text(item)
                    imports[name] = ir.Import(name, source, name, line)

    # ------------------------------------------------------------ definitions

    def function(self, n: Node, decorators: list[ir.Expr]) -> ir.Function:
        name_node = n.child_by_field_id(_F["name"])
        name = self.text(name_node) if name_node is not None else "<anonymous>"
        parent = self.fn_stack[-1]
        owner = self.cls_stack[-1] if self.cls_stack and self._directly_in_class(n) else None
        qual = f"{owner.qualname}.{name}" if owner else (name if parent.kind == "module" else
                                                          f"{parent.qualname}.{name}")
        rt = n.child_by_field_id(_F["return_type"])
        fn = ir.Function(name, qual, self.mod, line=self.rows[n.start_byte], end=self.rows[n.end_byte],
                         is_async=_has_token(n, "async"), decorators=decorators,
                         returns=self.text(rt) if rt is not None else None, kind="method" if owner else "function")
        fn.parent = parent
        fn.cls = owner
        fn.params = self.params(n.child_by_field_id(_F["parameters"]))
        self.mod.functions.append(fn)
        if owner is not None:
            owner.methods[name] = fn  # the last definition wins, as at run time (`@overload` stubs come first)
        self.fn_stack.append(fn)
        saved = self.cls_stack
        self.cls_stack = []
        try:
            fn.body = self.block(n.child_by_field_id(_F["body"]))
        finally:
            self.cls_stack = saved
            self.fn_stack.pop()
        return fn

    def _directly_in_class(self, n: Node) -> bool:
        p = n.parent
        if p is not None and p.type == "decorated_definition":
            p = p.parent
        return p is not None and p.type == "block" and p.parent is not None and p.parent.type == "class_definition"

    def params(self, n: Node | None) -> list[ir.Param]:
        out: list[ir.Param] = []
        if n is None:
            return out
        for p in n.named_children:
            t = p.type
            line = self.rows[p.start_byte]
            if t == "identifier":
                out.append(ir.Param(self.text(p), None, None, "pos", line))
            elif t in ("typed_parameter", "typed_default_parameter", "default_parameter"):
                name_node = p.child_by_field_id(_F["name"])
                if name_node is None:  # typed_parameter keeps the name as its first child
                    name_node = p.named_children[0] if p.named_children else None
                kind = "pos"
                if name_node is not None and name_node.type == "list_splat_pattern":
                    kind, name_node = "star", (name_node.named_children or [name_node])[0]
                elif name_node is not None and name_node.type == "dictionary_splat_pattern":
                    kind, name_node = "kw", (name_node.named_children or [name_node])[0]
                typ = p.child_by_field_id(_F["type"])
                value = p.child_by_field_id(_F["value"])
                out.append(ir.Param(self.text(name_node) if name_node is not None else "_",
                                    self.text(typ) if typ is not None else None,
                                    self.expr(value) if value is not None else None, kind, line))
            elif t == "list_splat_pattern":
                out.append(ir.Param(self.text((p.named_children or [p])[0]), None, None, "star", line))
            elif t == "dictionary_splat_pattern":
                out.append(ir.Param(self.text((p.named_children or [p])[0]), None, None, "kw", line))
        return out

    def klass(self, n: Node, decorators: list[ir.Expr]) -> ir.Class:
        name_node = n.child_by_field_id(_F["name"])
        name = self.text(name_node) if name_node is not None else "<class>"
        parent = self.fn_stack[-1]
        outer = self.cls_stack[-1] if self.cls_stack else None
        qual = f"{outer.qualname}.{name}" if outer else (name if parent.kind == "module" else
                                                          f"{parent.qualname}.{name}")
        bases: list[ir.Expr] = []
        sup = n.child_by_field_id(_F["superclasses"])
        if sup is not None:
            for b in sup.named_children:
                if b.type != "keyword_argument":
                    bases.append(self.expr(b))
        cls = ir.Class(name, qual, self.mod, line=self.rows[n.start_byte], end=self.rows[n.end_byte], bases=bases,
                       decorators=decorators)
        self.mod.classes.append(cls)
        self.cls_stack.append(cls)
        try:
            body = self.block(n.child_by_field_id(_F["body"]))
        finally:
            self.cls_stack.pop()
        for stmt in body:
            if isinstance(stmt, ir.Assign) and stmt.op == "=":
                for target in stmt.targets:
                    if isinstance(target, ir.Name):
                        cls.fields[target.id] = stmt.type
                        if stmt.value is not None:
                            cls.field_values[target.id] = stmt.value
        return cls

    # ------------------------------------------------------------ expressions

    def expr(self, n: Node | None) -> ir.Expr:  # noqa: C901 - one dispatch over the grammar's expressions
        if n is None:
            return ir.Lit(0, 0, None)
        t = n.type
        start, stop = n.start_byte, n.end_byte
        line, end = self.rows[start], self.rows[stop]
        if t == "identifier":  # the commonest node: its text is read here, not through `self.text`
            raw = self.src[start:stop]
            name = self.seen.get(raw)
            if name is None:
                name = self.seen[raw] = raw.decode("utf-8", errors="replace")
            return ir.Name(line, end, name)
        if t == "attribute":
            attr = n.child_by_field_id(_F["attribute"])
            return ir.Attr(line, end, self.expr(n.child_by_field_id(_F["object"])), self.text(attr) if attr else "")
        if t == "call":
            return self._call(n, line, end)
        if t == "string":
            return self._string(n, line, end)
        if t == "concatenated_string":
            parts: list[str | ir.Expr] = []
            for s in n.named_children:
                e = self._string(s, line, end)
                if isinstance(e, ir.Tmpl):
                    parts.extend(e.parts)
                else:
                    parts.append(str(e.value) if isinstance(e, ir.Lit) else "")
            if all(isinstance(p, str) for p in parts):
                return ir.Lit(line, end, "".join(p for p in parts if isinstance(p, str)))
            return ir.Tmpl(line, end, parts)
        if t == "subscript":
            subs = n.children_by_field_id(_F["subscript"])
            key: ir.Expr
            key = self.expr(subs[0]) if len(subs) == 1 else ir.Seq(line, end, "tuple", [self.expr(s) for s in subs])
            return ir.Index(line, end, self.expr(n.child_by_field_id(_F["value"])), key)
        if t == "slice":
            parts3: list[ir.Expr | None] = [None, None, None]
            slot = 0
            for c in n.children:
                if c.type == ":":
                    slot += 1
                elif c.is_named and slot < 3:
                    parts3[slot] = self.expr(c)
            return ir.Slice(line, end, parts3[0], parts3[1], parts3[2])
        if t == "integer":
            return ir.Lit(line, end, _number(self.text(n), int))
        if t == "float":
            return ir.Lit(line, end, _number(self.text(n), float))
        if t == "true":
            return ir.Lit(line, end, True)
        if t == "false":
            return ir.Lit(line, end, False)
        if t == "none":
            return ir.Lit(line, end, None)
        if t == "dictionary":
            items: list[tuple[str | ir.Expr | None, ir.Expr]] = []
            for c in n.named_children:
                if c.type == "pair":
                    k = self.expr(c.child_by_field_id(_F["key"]))
                    v = self.expr(c.child_by_field_id(_F["value"]))
                    items.append((k.value if isinstance(k, ir.Lit) and isinstance(k.value, str) else k, v))
                elif c.type == "dictionary_splat":
                    items.append((None, self.expr((c.named_children or [c])[0])))
            return ir.Obj(line, end, items)
        if t in _SEQS:
            return ir.Seq(line, end, _SEQS[t], [self.expr(c) for c in n.named_children  # type: ignore[arg-type]
                                                 if c.type != "comment"])
        if t in ("list_splat", "list_splat_pattern", "dictionary_splat", "dictionary_splat_pattern"):
            kids = n.named_children
            return ir.Spread(line, end, self.expr(kids[0]) if kids else ir.Lit(line, end, None))
        if t == "parenthesized_expression":
            kids = [c for c in n.named_children if c.type != "comment"]
            return self.expr(kids[0]) if len(kids) == 1 else ir.Seq(line, end, "tuple",
                                                                   [self.expr(c) for c in kids])
        if t == "await":
            kids = n.named_children
            return ir.Await(line, end, self.expr(kids[0]) if kids else ir.Lit(line, end, None))
        if t in _BINARY:
            op = n.child_by_field_id(_F["operator"])
            return ir.Op(line, end, self.text(op) if op is not None else "?",
                         [self.expr(n.child_by_field_id(_F["left"])), self.expr(n.child_by_field_id(_F["right"]))])
        if t == "comparison_operator":
            ops = [c for c in n.children if not c.is_named]
            return ir.Op(line, end, " ".join(self.text(o) for o in ops) or "==",
                         [self.expr(c) for c in n.named_children])
        if t == "not_operator":
            return ir.Op(line, end, "not", [self.expr(n.child_by_field_id(_F["argument"]))])
        if t == "unary_operator":
            op = n.child_by_field_id(_F["operator"])
            arg = self.expr(n.child_by_field_id(_F["argument"]))
            if op is not None and self.text(op) == "-" and isinstance(arg, ir.Lit) and isinstance(arg.value, int | float):
                return ir.Lit(line, end, -arg.value)
            return ir.Op(line, end, self.text(op) if op is not None else "-", [arg])
        if t == "conditional_expression":
            kids = n.named_children
            if len(kids) >= 3:
                return ir.Cond(line, end, self.expr(kids[1]), self.expr(kids[0]), self.expr(kids[2]))
        if t == "lambda":
            return self._lambda(n, line, end)
        if t in _COMPS:
            return self._comp(n, _COMPS[t], line, end)
        if t == "named_expression":
            return ir.Op(line, end, ":=", [self.expr(n.child_by_field_id(_F["name"])),
                                           self.expr(n.child_by_field_id(_F["value"]))])
        if t == "yield":
            self.fn_stack[-1].is_generator = True
            kids = n.named_children
            return ir.Op(line, end, "yield from" if _has_token(n, "from") else "yield",
                         [self.expr(k) for k in kids])
        if t == "keyword_argument":  # stray, outside an argument list
            return self.expr(n.child_by_field_id(_F["value"]))
        if t in ("as_pattern_target", "case_pattern", "type"):
            kids = n.named_children
            if len(kids) == 1:
                return self.expr(kids[0])
        if t == "ellipsis":
            return ir.Lit(line, end, "...")
        return ir.Other(line, end, t, [self.expr(c) for c in n.named_children if c.type != "comment"])

    def _call(self, n: Node, line: int, end: int) -> ir.Expr:
        func = self.expr(n.child_by_field_id(_F["function"]))
        argn = n.child_by_field_id(_F["arguments"])
        args: list[ir.Expr] = []
        kw: list[tuple[str, ir.Expr]] = []
        if argn is not None:
            if argn.type == "generator_expression":
                args.append(self.expr(argn))
            else:
                for a in argn.named_children:
                    at = a.type
                    if at == "keyword_argument":
                        name = a.child_by_field_id(_F["name"])
                        kw.append((self.text(name) if name is not None else "?", self.expr(a.child_by_field_id(_F["value"]))))
                    elif at == "dictionary_splat":
                        kw.append(("**", self.expr((a.named_children or [a])[0])))
                    elif at != "comment":
                        args.append(self.expr(a))
        return ir.Call(line, end, func, args, kw)

    def _string(self, n: Node, line: int, end: int) -> ir.Expr:
        parts: list[str | ir.Expr] = []
        is_template = False
        for c in n.children:
            ct = c.type
            if ct in ("string_content", "escape_sequence"):
                raw = self.text(c)
                if ct == "escape_sequence":
                    raw = _unescape(raw)
                if parts and isinstance(parts[-1], str):
                    parts[-1] += raw
                else:
                    parts.append(raw)
            elif ct == "interpolation":
                is_template = True
                e = c.child_by_field_id(_F["expression"])
                parts.append(self.expr(e) if e is not None else ir.Lit(line, end, None))
        if not is_template:
            return ir.Lit(line, end, "".join(p for p in parts if isinstance(p, str)))
        return ir.Tmpl(line, end, parts)

    def _lambda(self, n: Node, line: int, end: int) -> ir.Expr:
        parent = self.fn_stack[-1]
        fn = ir.Function("<lambda>", f"{parent.qualname}.<lambda>" if parent.kind != "module" else "<lambda>",
                         self.mod, line=line, end=end, kind="lambda")
        fn.parent = parent
        fn.params = self.params(n.child_by_field_id(_F["parameters"]))
        self.mod.functions.append(fn)
        self.fn_stack.append(fn)
        try:
            body = self.expr(n.child_by_field_id(_F["body"]))
        finally:
            self.fn_stack.pop()
        fn.expr_body = body
        fn.body = [ir.Return(body.line, body.end, body)]
        return ir.FuncExpr(line, end, fn)

    def _comp(self, n: Node, kind: str, line: int, end: int) -> ir.Expr:
        body = n.child_by_field_id(_F["body"])
        targets: list[tuple[ir.Expr, ir.Expr]] = []
        parts: list[ir.Expr] = []
        for c in n.named_children:
            if c.type == "for_in_clause":
                lefts = c.children_by_field_id(_F["left"])
                left = self.expr(lefts[0]) if len(lefts) == 1 else ir.Seq(line, end, "tuple",
                                                                          [self.expr(x) for x in lefts])
                targets.append((left, self.expr(c.child_by_field_id(_F["right"]))))
            elif c.type == "if_clause":
                parts.extend(self.expr(k) for k in c.named_children)
        elt: ir.Expr
        if body is not None and body.type == "pair":
            elt = ir.Seq(line, end, "tuple", [self.expr(body.child_by_field_id(_F["key"])),
                                              self.expr(body.child_by_field_id(_F["value"]))])
        else:
            elt = self.expr(body)
        return ir.Comp(line, end, kind, elt, targets, parts)


def _has_token(n: Node, token: str) -> bool:
    for c in n.children:
        if c.type == token:
            return True
        if c.is_named and c.type not in ("identifier",):
            break
    return False


def _number(text: str, kind: type[int] | type[float]) -> int | float | str:
    try:
        return kind(text.replace("_", ""), 0) if kind is int else float(text.replace("_", ""))  # type: ignore[call-arg]
    except ValueError:
        return text


def _unescape(raw: str) -> str:
    try:
        value = ast.literal_eval(f'"{raw}"')
    except (ValueError, SyntaxError):
        return raw
    return value if isinstance(value, str) else raw
