"""The Doc tree (tessera.script.printer.doc) and its Python renderer: precedence, statements,
comments, underlines with context and line numbers, and the errors of bad trees."""

import textwrap

import pytest

from tessera.ir.access_path import AccessPath
from tessera.script.printer.doc import (AssertDoc, AssignDoc, CallDoc, ClassDoc, CommentDoc,
                                        DictDoc, DocStringDoc, ExprStmtDoc, ForDoc, FunctionDoc,
                                        IdDoc, IfDoc, LambdaDoc, ListDoc, LiteralDoc,
                                        OperationDoc, OperationKind as K, ReturnDoc, ScopeDoc,
                                        SliceDoc, StmtBlockDoc, TupleDoc, WhileDoc)
from tessera.script.printer.doc_printer import to_python_script

a, b, c = IdDoc("a"), IdDoc("b"), IdDoc("c")


def op(kind, *operands):
    return OperationDoc(kind, list(operands))


def text(s):
    return textwrap.dedent(s).strip("\n")


@pytest.mark.parametrize("doc, expected", [
    (op(K.Sub, a, op(K.Sub, b, c)), "a - (b - c)"),
    (op(K.Sub, op(K.Sub, a, b), c), "a - b - c"),
    (op(K.FloorDiv, op(K.BitXor, a, b), c), "(a ^ b) // c"),
    (op(K.Pow, op(K.Invert, a), op(K.USub, b)), "(~a) ** -b"),
    (op(K.Pow, a, op(K.Pow, b, c)), "a ** b ** c"),
    (op(K.Not, op(K.Or, a, b)), "not (a or b)"),
    (op(K.GtE, op(K.RShift, a, b), c), "a >> b >= c"),
    (op(K.IfThenElse, a, b, op(K.IfThenElse, c, c, c)), "b if a else (c if c else c)"),
    (LambdaDoc([a], op(K.Mult, a, a)).call(b), "(lambda a: a * a)(b)"),
    (op(K.Add, a, b).attr("x")[SliceDoc(None, LiteralDoc(4), LiteralDoc(2))], "(a + b).x[:4:2]"),
    (a.call(b, k=LiteralDoc("s"), j=TupleDoc([c])), 'a(b, k="s", j=(c,))'),
    (DictDoc({LiteralDoc(1): ListDoc([]), LiteralDoc(None): TupleDoc([])}), "{1: [], None: ()}"),
    (LiteralDoc('q"\\\n'), r'"q\"\\\n"'),
    (LiteralDoc(-2.5), "-2.5"),
])
def test_expressions(doc, expected):
    assert to_python_script(doc) == expected


def test_statements_and_comments():
    func = FunctionDoc(IdDoc("f"), [AssignDoc(a, None, IdDoc("int")), AssignDoc(b, LiteralDoc(2), IdDoc("int"))],
                       [IdDoc("deco")], IdDoc("int"),
                       [ForDoc(TupleDoc([a, b]), c, [AssertDoc(a, LiteralDoc("m"))]),
                        ScopeDoc(None, IdDoc("ctx").call(), []),
                        WhileDoc(a, [AssignDoc(TupleDoc([a, b]), TupleDoc([b, a]))]),
                        IfDoc(a, [], [ReturnDoc(b)])])
    func.comment = "doc\n\nmore"
    func.body[0].comment = "loop"
    func.body[0].body[0].comment = "check"
    cls = ClassDoc(IdDoc("M"), [], [func, CommentDoc("x\ny"), DocStringDoc("ds")])
    assert to_python_script(cls) == text('''
        class M:
            @deco
            def f(a: int, b: int = 2) -> int:
                """
                doc

                more
                """
                # loop
                for a, b in c:
                    assert a, "m"  # check
                with ctx():
                    pass
                while a:
                    a, b = b, a
                if a:
                    pass
                else:
                    return b

            # x
            # y
            """
            ds
            """''')


def test_underline_context_and_line_numbers():
    lines = []
    for i in range(9):
        d = IdDoc(f"v{i}")
        d.source_paths = [AccessPath.root().attr("hit" if i == 5 else "miss")]
        lines.append(ExprStmtDoc(op(K.Add, d, LiteralDoc(1)) if i == 5 else d))
    out = to_python_script(StmtBlockDoc(lines), print_line_numbers=True, num_context_lines=1,
                           path_to_underline=[AccessPath.root().attr("hit").attr("deeper")])
    assert out == text("""
        (... 4 lines skipped ...)
        5 v4
        6 v5 + 1
          ^^
        7 v6
        (... 2 lines skipped ...)""")
    # Nothing matches: everything prints, unmarked.
    plain = to_python_script(StmtBlockDoc(lines), num_context_lines=1,
                             path_to_underline=[AccessPath.root().attr("none")])
    assert plain.splitlines() == [f"v{i}" if i != 5 else "v5 + 1" for i in range(9)]


def test_longest_prefix_wins():
    outer, inner = IdDoc("outer"), IdDoc("inner")
    outer.source_paths = [AccessPath.root().attr("f")]
    inner.source_paths = [AccessPath.root().attr("f").attr("g")]
    block = StmtBlockDoc([ExprStmtDoc(outer), ExprStmtDoc(inner)])
    out = to_python_script(block, path_to_underline=[AccessPath.root().attr("f").attr("g").attr("h")])
    assert out == "outer\ninner\n^^^^^"


def test_fields_and_identity():
    call = CallDoc(a, b, key=c)
    assert call.callee is a and list(call.args) == [b]
    assert dict(zip(call.kwargs_keys, call.kwargs_values)) == {"key": c}
    assert a[(b, c)].indices == (b, c)
    stmt = ExprStmtDoc(a)
    assert stmt.comment is None
    stmt.comment = "note"
    assert stmt.comment == "note" and "comment" not in vars(stmt)
    assert not isinstance(a.source_paths, list) and len(a.source_paths) == 0
    assert (a == b) is False and {a: 1}[a] == 1


@pytest.mark.parametrize("build, message", [
    (lambda: AssignDoc(a), "right-hand side or an annotation"),
    (lambda: AssignDoc(TupleDoc([a, b]), c, IdDoc("int")), "tuple on the left"),
    (lambda: IfDoc(a, [], []), "then branch or an else branch"),
    (lambda: LiteralDoc(object()), "LiteralDoc takes"),
    (lambda: CallDoc("f"), "must be an ExprDoc"),
])
def test_invalid_docs(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


def test_multiline_comment_on_a_simple_statement():
    stmt = ReturnDoc(a)
    stmt.comment = "1\n2"
    with pytest.raises(ValueError, match="cannot have newline"):
        to_python_script(stmt)
    with pytest.raises(ValueError, match="takes 2 operands"):
        to_python_script(op(K.Add, a))
