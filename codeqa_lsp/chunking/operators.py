"""C++ operator names as people write them (`operator()`, `operator<=>`, `operator bool`).

The generic name clean-up (`definitions._clean_name`) cuts a name at its first parenthesis
and drops template argument lists and spaces, which suits every other name but turns the
call operator into `operator`, the three-way comparison into `operator` and a conversion
operator into one word (`operatorbool`); nlohmann/json's eight function objects were all
`X.operator`.
"""

from __future__ import annotations

import re

# A C++ operator's name, qualified or not (`Foo::operator==`), then what follows `operator`:
# a symbol operator (the call and subscript operators whole, a literal operator's suffix),
# or the words of a conversion or allocation operator (`operator bool() const`).
_OPERATOR = re.compile(r"(?P<qualifier>(?:[A-Za-z_]\w*::)*)operator\s*(?P<rest>\S.*)?$", re.S)
_KEYWORD = re.compile(r"(?<![\w$])operator(?![\w$])")
_OPERATOR_SYMBOL = re.compile(r"\(\)|\[\]|\"\"\s*\w+|[^\w\s(]+")
_ANGLE_ARGS = re.compile(r"<[^<>]*>")
_SPACE = re.compile(r"\s+")
# Longer names are what error recovery or macros made of a declarator: no operator, and the
# pattern is only ever run on bounded text.
MAX_NAME = 200


def without_template_args(text: str) -> str:
    """`text` without its `<...>` argument lists, nested ones included (`Map<K, List<V>>` →
    `Map`): the one way the chunker drops template and generic arguments from a name."""
    previous = None
    while previous != text and "<" in text:
        previous, text = text, _ANGLE_ARGS.sub("", text)
    return text


def operator_name(name: str) -> str | None:
    """`name` as an operator's name (qualified with dots), or None when it is no operator.
    A qualifier's template arguments go (`Foo<T>::operator[]` is `Foo.operator[]`); the
    brackets after `operator` are its name."""
    keyword = _KEYWORD.search(name) if len(name) <= MAX_NAME else None
    if keyword is None:
        return None
    head = without_template_args(name[: keyword.start()])
    match = _OPERATOR.match(head + name[keyword.start() :])
    if match is None or not match["rest"]:
        return None
    return _written(match)


def _written(match: re.Match[str]) -> str:
    """A C++ operator as it is written: `operator()`, `operator[]`, `operator<=>`, and a
    conversion or allocation operator with one space and without template arguments,
    `operator bool`, `operator new[]`, `operator Matcher` (`operator Matcher<T>() const`)."""
    qualifier, rest = match["qualifier"].replace("::", "."), match["rest"]
    if rest.startswith("::") and (rest[2:3].isalpha() or rest[2:3] == "_"):
        rest = rest[2:]  # `operator ::testing::Matcher<T>()`: a type named from the root
    if rest[:1].isalpha() or rest[:1] == "_":  # conversion, `new`, `delete`
        rest = without_template_args(rest)
        words = _SPACE.sub(" ", rest.split("(", 1)[0].strip())
        return f"{qualifier}operator {words.replace(' [', '[').replace(' *', '*')}"
    symbol = _OPERATOR_SYMBOL.match(rest)
    return f"{qualifier}operator{_SPACE.sub('', symbol[0]) if symbol else ''}"
