"""Edits of one call node, the vocabulary the rules' fix functions are written in.

Every edit keeps the call's own formatting (spacing, comments, one argument
per line) wherever it does not have to change.
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst

#: The tensor a remover is given when the call names none.
DEFAULT_TENSOR = "weight"


def keyword(arg: cst.Arg) -> str | None:
    """The argument's keyword, None for a positional one."""
    return arg.keyword.value if arg.keyword is not None else None


def positional(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    return [arg for arg in args if arg.keyword is None]


def has_star(call: cst.Call) -> bool:
    """``*args`` or ``**kwargs`` among the arguments: the real argument list is unknown."""
    return any(arg.star for arg in call.args)


def is_true(arg: cst.Arg) -> bool:
    return isinstance(arg.value, cst.Name) and arg.value.value == "True"


def with_value_true(arg: cst.Arg) -> cst.Arg:
    return arg.with_changes(value=cst.Name("True"))


def rename_keyword(arg: cst.Arg, name: str) -> cst.Arg:
    return arg.with_changes(keyword=cst.Name(name))


def call_to(call: cst.Call, callee: str, args: Sequence[cst.Arg] | None = None) -> cst.Call:
    """The call with ``callee`` (a dotted name) as its function, and ``args`` when given."""
    func = cst.parse_expression(callee)
    if args is None:
        return call.with_changes(func=func)
    return call.with_changes(func=func, args=list(args))


def is_multiline(call: cst.Call) -> bool:
    """The arguments start on a line of their own (one argument per line, as black lays out long calls)."""
    return isinstance(call.whitespace_before_args, cst.ParenthesizedWhitespace)


def without_trailing_comma(call: cst.Call, args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """``args`` for ``call`` once some were dropped: the new last one loses its comma, unless one per line."""
    kept = list(args)
    if kept and not is_multiline(call):
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return kept


def with_tensor_name(call: cst.Call) -> cst.Call | None:
    """Pass the default tensor name to a remover called without one, keeping the rest as written."""
    args = list(call.args)
    if not args:
        return None
    space = cst.SimpleWhitespace(" ")
    last = args[-1]
    trailing: cst.Comma | None = None
    if isinstance(last.comma, cst.Comma):
        after = last.comma.whitespace_after
        before_last = args[-2].comma if len(args) >= 2 else None
        separator = before_last.whitespace_after if isinstance(before_last, cst.Comma) else call.whitespace_before_args
        if isinstance(after, cst.ParenthesizedWhitespace) and isinstance(separator, cst.ParenthesizedWhitespace):
            # One argument per line with a trailing comma: the new one gets its own line.
            args[-1] = last.with_changes(comma=last.comma.with_changes(
                whitespace_after=after.with_changes(indent=separator.indent, last_line=separator.last_line)))
            trailing = cst.Comma(whitespace_after=cst.ParenthesizedWhitespace(
                first_line=cst.TrailingWhitespace(), empty_lines=[], indent=after.indent, last_line=after.last_line))
        elif isinstance(after, cst.SimpleWhitespace) and not after.value:
            args[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=space))
    else:
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=space))
    value = cst.SimpleString(f'"{DEFAULT_TENSOR}"')
    if any(arg.keyword is not None for arg in args):
        new_arg = cst.Arg(
            value, keyword=cst.Name("tensor_name"),
            equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
        )
    else:
        new_arg = cst.Arg(value)
    if trailing is not None:
        new_arg = new_arg.with_changes(comma=trailing)
    return call.with_changes(args=[*args, new_arg])
