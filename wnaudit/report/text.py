"""The text formats, for a person at a terminal or reading a CI log.

``concise`` (the default): one short line per finding, the code's title as its
message; a checkpoint's (or program's) tensor findings are one line per file and
code, with their count and the first names, so 4 checkpoints of 64 pairs are a
few lines, not 256.  ``full``: each finding, every tensor, with its whole
message, then the explanation of each code once.  ``grouped``: findings under
their file, with a count per file, tensors grouped as in ``concise``.  ``--statistics``: counts per code only.  Every untrusted part
of a line (paths, tensor names, messages) goes through the one sanitiser.

Fix marks, as ruff shows them: ``[*]`` a fix ``--fix`` applies; ``[-]`` a fix
that needs review, applied only with ``--fix --unsafe-fixes``.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, TextIO

import click

from ..common.findings import Finding, RunResult, Severity
from . import code_statistics, needs_review, sorted_findings
from .codes import code_info
from .sanitize import encodable, sanitize

SAFE_MARK, REVIEW_MARK = "[*]", "[-]"


def location(finding: Finding) -> str:
    """``path:line:col:`` for source, ``path:cell N:line:col:`` in a notebook, ``path: object:`` for tensors."""
    path = sanitize(finding.path)
    if finding.line is not None:
        cell = f"cell {finding.cell}:" if finding.cell is not None else ""
        return f"{path}:{cell}{finding.line}:{finding.column or 1}:"
    if finding.object is not None:
        return f"{path}: {sanitize(finding.object)}:"
    return f"{path}:"


def fix_mark(finding: Finding) -> str:
    """``[*]`` / ``[-]`` / nothing, by the fix's applicability."""
    if not finding.fixable:
        return ""
    return REVIEW_MARK if needs_review(finding) else SAFE_MARK


def short_message(finding: Finding) -> str:
    """The code's title: the same few words for every finding of a code."""
    info = code_info(finding.code)
    return info.title if info is not None else sanitize(finding.message)


class _Writer:
    """Writes lines to a stream, styled only when colour is on, encodable in the stream's encoding."""

    def __init__(self, stream: TextIO, color: bool) -> None:
        self.stream, self.color = stream, color
        self.encoding = getattr(stream, "encoding", None)

    def style(self, text: str, **style: object) -> str:
        return click.style(text, **style) if self.color else text  # type: ignore[arg-type]

    def line(self, text: str = "") -> None:
        self.stream.write(encodable(text, self.encoding) + "\n")

    def finding(self, item: Finding, where: str, message: str) -> str:
        code_color = "red" if item.severity == Severity.ERROR else "yellow"
        mark = fix_mark(item)
        parts = [self.style(where, bold=True), self.style(item.code, fg=code_color, bold=True)]
        if mark:
            parts.append(self.style(mark, fg="cyan"))
        parts.append(message)
        return " ".join(parts)


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}{'es' if word.endswith('x') else 's'}"


def _summary(out: _Writer, result: RunResult, findings: list[Finding], *, unsafe_fixes: bool, checked: int | None) -> None:
    if checked == 0 and not result.errors:
        out.line(out.style("Nothing checked: no Python file, notebook or checkpoint found.", bold=True))
        return
    fixed = len(result.fixed)
    if fixed:
        total = fixed + len(findings)
        out.line(out.style(f"Found {_plural(total, 'finding')} ({fixed} fixed, {len(findings)} remaining).", bold=True))
    elif findings:
        out.line(out.style(f"Found {_plural(len(findings), 'finding')}.", bold=True))
    elif not result.errors:
        out.line(out.style("All checks passed!", bold=True))
        return
    safe = sum(1 for f in findings if f.fixable and not needs_review(f))
    review = sum(1 for f in findings if needs_review(f))
    if unsafe_fixes:
        if safe or review:
            line = f"{SAFE_MARK} {safe + review} fixable with the `--fix` option"
            line += f" ({review} of them need review {REVIEW_MARK})." if review else "."
            out.line(line)
        return
    hidden = f"{_plural(review, 'hidden fix')} can be enabled with the `--unsafe-fixes` option" if review else ""
    if safe:
        out.line(f"{SAFE_MARK} {safe} fixable with the `--fix` option" + (f" ({hidden})." if hidden else "."))
    elif hidden:
        out.line(f"No fixes available ({hidden}).")


def _fixed_listing(out: _Writer, result: RunResult) -> None:
    """``--show-fixes``: what ``--fix`` changed, one line per fixed finding."""
    if not result.fixed:
        return
    out.line(f"Fixed {_plural(len(result.fixed), 'finding')}:")
    for item in sorted(result.fixed, key=lambda f: f.sort_key()):
        out.line(f"  {location(item)} {item.code} {short_message(item)}")


def _statistics(out: _Writer, findings: list[Finding]) -> None:
    """``count<TAB>code<TAB>[mark ]title`` per code, the mark as for its findings."""
    marks = {f.code: fix_mark(f) for f in findings if f.fixable}
    for code, count, _fixable, title in code_statistics(findings):
        mark = f"{marks[code]} " if code in marks else ""
        out.line(f"{count:>5}\t{code}\t{mark}{title}")


def _explanations(out: _Writer, findings: list[Finding]) -> None:
    """Once per code seen: what it means and where the whole page is (``full``)."""
    from .rule_pages import parse_sections, read_page

    for code in sorted({f.code for f in findings}):
        info = code_info(code)
        out.line()
        out.line(out.style(f"{code}: {info.title if info else ''}", bold=True))
        try:
            what = parse_sections(read_page(code)).get("What it does", "")
        except (KeyError, FileNotFoundError):
            what = ""
        for paragraph in what.split("\n\n")[:1]:
            out.line("  " + " ".join(paragraph.split()))
        out.line(f"  More: wnaudit --explain {code}")


LineMaker = Callable[[_Writer, Finding], list[str]]

#: Characters of tensor names a grouped line shows before ``...`` (at least one name): lines stay short.
NAMES_BUDGET = 32


def _is_tensor(item: Finding) -> bool:
    return item.object is not None and item.line is None


def collapsed(findings: list[Finding]) -> list[list[Finding]]:
    """Findings in report order, a file's tensor findings of one code gathered where the first one stands."""
    rows: list[list[Finding]] = []
    groups: dict[tuple[str, str], list[Finding]] = {}
    for item in findings:
        if not _is_tensor(item):
            rows.append([item])
        elif (item.path, item.code) in groups:
            groups[item.path, item.code].append(item)
        else:
            groups[item.path, item.code] = [item]
            rows.append(groups[item.path, item.code])
    return rows


def tensor_count(group: list[Finding]) -> str:
    """``(64 tensors: conv_pre.weight, ups.0.weight, ...)``: the count and the first names."""
    names: list[str] = []
    for item in group:
        name = sanitize(item.object or "")
        if names and len(", ".join([*names, name])) > NAMES_BUDGET:
            break
        names.append(name)
    more = ", ..." if len(names) < len(group) else ""
    return f"({len(group)} tensors: {', '.join(names)}{more})"


def _concise_lines(out: _Writer, item: Finding) -> list[str]:
    return [out.finding(item, location(item), short_message(item))]


def _concise_group(out: _Writer, group: list[Finding]) -> str:
    """One finding's line, or one line for a file's tensor findings of one code."""
    if len(group) == 1:
        return _concise_lines(out, group[0])[0]
    first = group[0]
    return out.finding(first, f"{sanitize(first.path)}:", f"{short_message(first)} {tensor_count(group)}")


def _full_lines(out: _Writer, item: Finding) -> list[str]:
    return [out.finding(item, location(item), short_message(item)), "    " + sanitize(item.message)]


def _render(
    result: RunResult, stream: TextIO, lines: LineMaker | None, *, color: bool, quiet: bool, statistics: bool,
    show_fixes: bool, unsafe_fixes: bool, checked: int | None, explain: bool = False,
) -> None:
    out = _Writer(stream, color)
    findings = sorted_findings(result)
    if statistics:
        _statistics(out, findings)
    elif lines is _concise_lines:
        for group in collapsed(findings):
            out.line(_concise_group(out, group))
    elif lines is not None:
        for item in findings:
            for text in lines(out, item):
                out.line(text)
    else:
        _grouped(out, findings)
    if show_fixes:
        _fixed_listing(out, result)
    if explain and findings and not statistics:
        _explanations(out, findings)
    if not quiet:
        if checked != 0:
            _walk_counts(out, result)
        _summary(out, result, findings, unsafe_fixes=unsafe_fixes, checked=checked)


def _walk_counts(out: _Writer, result: RunResult) -> None:
    """After a directory walk, what was read: ``Checked 12 source files, 3 checkpoints and 1 exported program.``"""
    if result.checked_sources is None and result.checked_checkpoints is None:
        return
    parts = [_plural(result.checked_sources or 0, "source file"), _plural(result.checked_checkpoints or 0, "checkpoint")]
    if result.checked_programs:
        parts.append(_plural(result.checked_programs, "exported program"))
    out.line(f"Checked {', '.join(parts[:-1])} and {parts[-1]}.")


def _grouped(out: _Writer, findings: list[Finding]) -> None:
    counts = Counter(f.path for f in findings)
    current: str | None = None
    for group in collapsed(findings):
        item = group[0]
        if item.path != current:
            if current is not None:
                out.line()
            current = item.path
            out.line(out.style(f"{sanitize(item.path)}: {_plural(counts[item.path], 'finding')}", bold=True, underline=True))
        if len(group) > 1:
            out.line("  " + out.finding(item, "", f"{short_message(item)} {tensor_count(group)}").lstrip())
            continue
        if item.line is not None:
            cell = f"cell {item.cell}:" if item.cell is not None else ""
            where = f"{cell}{item.line}:{item.column or 1}:"
        else:
            where = f"{sanitize(item.object or '')}:"
        out.line("  " + out.finding(item, where, short_message(item)))
    if findings:
        out.line()


def render_concise(
    result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False,
    show_fixes: bool = False, unsafe_fixes: bool = False, checked: int | None = None,
) -> None:
    _render(result, stream, _concise_lines, color=color, quiet=quiet, statistics=statistics,
            show_fixes=show_fixes, unsafe_fixes=unsafe_fixes, checked=checked)


def render_full(
    result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False,
    show_fixes: bool = False, unsafe_fixes: bool = False, checked: int | None = None,
) -> None:
    _render(result, stream, _full_lines, color=color, quiet=quiet, statistics=statistics,
            show_fixes=show_fixes, unsafe_fixes=unsafe_fixes, checked=checked, explain=True)


def render_grouped(
    result: RunResult, stream: TextIO, *, color: bool = False, quiet: bool = False, statistics: bool = False,
    show_fixes: bool = False, unsafe_fixes: bool = False, checked: int | None = None,
) -> None:
    _render(result, stream, None, color=color, quiet=quiet, statistics=statistics,
            show_fixes=show_fixes, unsafe_fixes=unsafe_fixes, checked=checked)


#: The default text format.
render = render_concise
