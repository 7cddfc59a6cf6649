"""Griffe extension for the API reference: a docstring's doctest runs outside an Examples section render as examples.

Many docstrings end with a doctest but no ``Examples`` heading. The numpy parser then reads ``>>>`` lines as
prose (a ``[...]`` result becomes a broken Markdown link) or as a malformed parameter. This extension inserts
the heading before the first ``>>>`` line of any docstring that has none before it, and dedents the rest of the
docstring to that line's indentation, so the runs render as code; it also turns Sphinx roles
(``:func:`x```) into code spans. It changes only what the site shows.
"""

from __future__ import annotations

import re

import griffe

_HEADING = re.compile(r"^Examples\n-{3,}\s*$", re.M)
_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|obj|exc):`~?([^`]+)`")


def plain_roles(text: str) -> str:
    """Sphinx cross-reference roles as code spans (the site does not resolve them).

    >>> plain_roles("Build one with :meth:`build` or :func:`~cocoviz.estimate`.")
    'Build one with `build` or `cocoviz.estimate`.'
    """
    return _ROLE.sub(r"`\1`", text)


def examples_heading(text: str) -> str:
    """``text`` with an Examples heading before its first doctest line, when none comes before it.

    >>> examples_heading("Sum.\\n\\n>>> 1 + 1\\n2").splitlines()[:4]
    ['Sum.', '', 'Examples', '--------']
    """
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.lstrip().startswith(">>>"):
            if _HEADING.search("\n".join(lines[:i])):
                return text
            indent = len(line) - len(line.lstrip())
            rest = [row[indent:] if row[:indent].isspace() else row.lstrip() for row in lines[i:]]
            head = lines[:i]
            if head and head[-1].strip():
                head.append("")
            return "\n".join([*head, "Examples", "--------", *rest])
    return text


class DoctestExamples(griffe.Extension):
    """Apply :func:`plain_roles` and :func:`examples_heading` to every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = examples_heading(plain_roles(obj.docstring.value))
