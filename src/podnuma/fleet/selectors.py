"""Label selectors of node groups, as Kubernetes parses and matches them:
kubectl's ``-l`` string form or a ``{matchLabels, matchExpressions}``
mapping (a ``metav1.LabelSelector``).

Mirrors k8s.io/apimachinery v0.37.2:

* ``pkg/labels/selector.go``: the string form's lexer and parser
  (``Parse``), ``NewRequirement``'s checks, the sort of the requirements
  by key and ``Requirement.Matches``;
* ``pkg/apis/meta/v1/helpers.go``: ``LabelSelectorAsSelector`` (the
  mapping form);
* ``pkg/util/validation/validation.go`` (``IsQualifiedName``,
  ``IsValidLabelValue``), which are ``pkg/api/validate/content/kube.go``'s
  ``IsLabelKey`` and ``IsLabelValue`` (and ``dns.go`` for a key's prefix):
  label keys and values, with their messages;
* ``pkg/util/validation/field/errors.go`` and ``pkg/util/errors``: how a
  field error and a list of them print;
* Go's ``sort.Sort`` (the requirements are sorted with it, and it is not a
  stable sort: see :func:`_go_sort_by_key`).

An invalid selector is an :class:`~podnuma.errors.InputError` whose message
is apimachinery's error text. The shape of the mapping form (types, field
names) is checked as podnuma checks its files; a JSON ``null`` where a
string is expected is Go's zero value, the empty string, as when
``encoding/json`` decodes it.

Operators are ``selection.Operator``'s strings: ``=``, ``==``, ``!=``,
``in``, ``notin``, ``exists``, ``!`` (does not exist), ``gt``, ``lt``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NoReturn

from podnuma.api.pod_validation import qualified_name_errors
from podnuma.errors import InputError
from podnuma.fieldkit import check_known_fields, wrong_type

__all__ = ["Requirement", "parse_selector", "selector_matches"]


class Requirement:
    """One requirement of a label selector: a key, an operator (one of
    ``selection.Operator``'s strings, see the module's docstring) and the
    values, in the order the selector keeps them."""

    __slots__ = ("key", "op", "values")

    key: str
    op: str
    values: tuple[str, ...]

    def __init__(self, key: str, op: str, values: tuple[str, ...] = ()) -> None:
    # written out, with the comparison, the hash and the repr (a frozen
    # ``dataclass`` would make them when the module is imported, on every
    # ``fleet`` command's start); not frozen at run time
        self.key = key
        self.op = op
        self.values = values

    def _fields(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.key, self.op, self.values)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}(key={self.key!r}, op={self.op!r}, values={self.values!r})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Requirement)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


class _SelectorError(Exception):
    """apimachinery's error text for an invalid selector."""


def _fail(message: str) -> NoReturn:
    raise _SelectorError(message)


def _is_map(x: object) -> bool:
    return type(x) is dict or isinstance(x, Mapping)


# ---------------------------------------------------------------------------
# the public functions
# ---------------------------------------------------------------------------


def parse_selector(value: Any, *, path: str, file: str) -> tuple[Requirement, ...]:
    """A label selector's requirements, sorted by key as apimachinery sorts
    them: ``value`` is kubectl's ``-l`` string (``labels.Parse``) or a
    ``{matchLabels, matchExpressions}`` mapping
    (``metav1.LabelSelectorAsSelector``). No requirement: every node.

    An invalid selector raises :class:`InputError` at ``path`` in ``file``
    with apimachinery's message."""
    try:
        if isinstance(value, str):
            return tuple(_parse_string(value))
        if _is_map(value):
            return tuple(_from_mapping(value, path))
    except _SelectorError as e:
        raise InputError(str(e), path=path, file=file) from None
    except InputError as e:
        raise e.in_file(file) from None
    raise wrong_type(path, "a label selector (a string or a mapping)", value).in_file(file)


def selector_matches(reqs: Sequence[Requirement], labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy every requirement (``Requirement.Matches``):
    ``!=`` and ``notin`` hold for a node without the label; ``gt``/``lt``
    want the label to be a 64-bit integer."""
    return all(_matches(r, labels) for r in reqs)


def _matches(r: Requirement, labels: Mapping[str, str]) -> bool:
    op = r.op
    if op in ("in", "=", "=="):
        return r.key in labels and labels[r.key] in r.values
    if op in ("notin", "!="):
        return r.key not in labels or labels[r.key] not in r.values
    if op == "exists":
        return r.key in labels
    if op == "!":
        return r.key not in labels
    if op in ("gt", "lt"):
        if r.key not in labels or len(r.values) != 1:
            return False
        have, want = _parse_int64(labels[r.key]), _parse_int64(r.values[0])
        if have is None or want is None:
            return False
        return have > want if op == "gt" else have < want
    return False


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``, None when it fails."""
    from podnuma.golang.strconv import go_atoi  # same syntax and range (64-bit int)

    try:
        return go_atoi(text)
    except ValueError:
        return None


# ---------------------------------------------------------------------------
# keys, values and their messages (content.IsLabelKey, IsLabelValue)
# ---------------------------------------------------------------------------

_NAME_RE = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_VALUE_RE = "(" + _NAME_RE + ")?"
_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and "
             "end with an alphanumeric character")
_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, "
              "'-', '_' or '.', and must start and end with an alphanumeric character")
_MAX_VALUE = 63


def _regex_error(msg: str, regex: str, *examples: str) -> str:
    # content.RegexError: each example is written "'EX', " and joined by
    # " or " (hence the two spaces the messages have)
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{regex}')"


def _full(regex: str, text: str) -> bool:
    import re  # the module cache keeps the compiled pattern

    return re.fullmatch(regex, text) is not None


def _size(text: str) -> int:
    """A Go string's ``len``: its UTF-8 bytes."""
    return len(text.encode("utf-8", "surrogatepass"))


def _name_error() -> str:
    return _regex_error(_NAME_MSG, _NAME_RE, "MyName", "my.name", "123-abc")


def _label_key_problems(key: str) -> list[str]:
    """A label key's problems: ``IsQualifiedName``'s, which the pod
    validation already reproduces."""
    return qualified_name_errors(key)


def _label_value_problems(value: str) -> list[str]:
    problems: list[str] = []
    if _size(value) > _MAX_VALUE:
        problems.append(f"must be no more than {_MAX_VALUE} bytes")
    if not _full(_VALUE_RE, value):
        problems.append(_regex_error(_VALUE_MSG, _VALUE_RE, "MyValue", "my_value", "12345"))
    return problems


def _shown(value: str | tuple[str, ...]) -> str:
    """A field error's bad value: a string as ``%q`` prints it, a list of
    strings as ``json.Marshal`` writes it (an empty one is a nil slice:
    ``null``)."""
    if isinstance(value, str):
        from podnuma.golang.strconv import go_quote

        return go_quote(value)
    if not value:
        return "null"
    from podnuma.golang.json import go_json_quote

    return "[" + ",".join(go_json_quote(v) for v in value) + "]"


def _invalid(field: str, value: str | tuple[str, ...], detail: str) -> str:
    """``field.Invalid(...).Error()``."""
    return f"{field}: Invalid value: {_shown(value)}: {detail}"


def _aggregate(messages: list[str]) -> str:
    """``ErrorList.ToAggregate().Error()``: duplicates dropped, one message
    as it is, several in brackets."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


_OPERATORS = ("in", "notin", "=", "==", "!=", "gt", "lt", "exists", "!")


def _new_requirement(key: str, op: str, values: tuple[str, ...]) -> Requirement:
    """``labels.NewRequirement`` without a field path (how both forms call
    it): every problem found, or the requirement."""
    errors: list[str] = []
    problems = _label_key_problems(key)
    if problems:
        errors.append(_invalid("key", key, "; ".join(problems)))
    if op in ("in", "notin"):
        if not values:
            errors.append(_invalid(
                "values", values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op in ("=", "==", "!="):
        if len(values) != 1:
            errors.append(_invalid(
                "values", values, "exact-match compatibility requires one single value"))
    elif op in ("exists", "!"):
        if values:
            errors.append(_invalid(
                "values", values, "values set must be empty for exists and does not exist"))
    elif op in ("gt", "lt"):
        if len(values) != 1:
            errors.append(_invalid(
                "values", values, "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(values):
            if _parse_int64(v) is None:
                errors.append(_invalid(
                    f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer"))
    else:
        from podnuma.golang.json import go_json_quote
        from podnuma.golang.strconv import go_quote

        supported = ", ".join(go_quote(o) for o in _OPERATORS)
        errors.append(
            f"operator: Unsupported value: {go_json_quote(op)}: supported values: {supported}")
    for i, v in enumerate(values):
        problems = _label_value_problems(v)
        if problems:
            errors.append(_invalid(f"values[{i}][{key}]", v, "; ".join(problems)))
    if errors:
        _fail(_aggregate(errors))
    return Requirement(key, op, values)


# ---------------------------------------------------------------------------
# the string form (labels.Parse)
# ---------------------------------------------------------------------------

# tokens
(_END, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _IDENT, _IN, _LT, _NOT_EQ, _NOT_IN,
 _OPEN) = range(13)
_SYMBOLS = {b")": _CLOSE, b",": _COMMA, b"!": _NOT, b"==": _DOUBLE_EQ, b"=": _EQ, b">": _GT,
            b"<": _LT, b"!=": _NOT_EQ, b"(": _OPEN}
_WORDS = {"in": _IN, "notin": _NOT_IN}
_BLANK = frozenset(b" \t\r\n")
_SPECIAL = frozenset(b"=!(),><")
_BINARY_OPS = {_IN: "in", _NOT_IN: "notin", _EQ: "=", _DOUBLE_EQ: "==", _NOT_EQ: "!=",
               _GT: "gt", _LT: "lt"}


def _lex(text: str) -> list[tuple[int, str]]:
    """The tokens of a selector, up to and with the end token.

    The lexer works on the UTF-8 bytes. A NUL byte reads as the end of the
    input: met where a token would start, it ends the selector; met inside
    a word or a run of symbols, it ends that token and is skipped."""
    data = text.encode("utf-8", "surrogatepass")
    n = len(data)
    pos = 0
    out: list[tuple[int, str]] = []
    while True:
        ch = 0
        while pos < n:
            ch = data[pos]
            pos += 1
            if ch not in _BLANK:
                break
            ch = 0
        if ch == 0:
            out.append((_END, ""))
            return out
        start = pos - 1
        if ch in _SPECIAL:
            # the longest run of symbols that is a token, growing one byte
            # at a time until a longer run stops being one
            best: tuple[int, str] | None = None
            pos = start
            while pos < n:
                c = data[pos]
                pos += 1
                if c == 0:
                    break
                if c not in _SPECIAL:
                    pos -= 1
                    break
                run = data[start:pos]
                tok = _SYMBOLS.get(run)
                if tok is not None:
                    best = (tok, run.decode())
                elif best is not None:
                    pos -= 1
                    break
            if best is None:  # cannot happen: every symbol is a token by itself
                best = (-1, f"error expected: keyword found '{data[start:pos].decode()}'")
            out.append(best)
            continue
        end = start
        pos = start
        while pos < n:
            c = data[pos]
            pos += 1
            if c == 0:
                break
            if c in _SPECIAL or c in _BLANK:
                pos -= 1
                break
            end = pos
        word = data[start:end].decode("utf-8", "surrogatepass")
        out.append((_WORDS.get(word, _IDENT), word))


class _Parser:
    """``labels.Parse``'s recursive descent over the tokens of :func:`_lex`.
    Where a value may stand, ``in`` and ``notin`` are words like any other
    (``values=True``)."""

    __slots__ = ("items", "at")

    def __init__(self, text: str) -> None:
        self.items = _lex(text)
        self.at = 0

    def peek(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.items[self.at]
        if values and tok in (_IN, _NOT_IN):
            tok = _IDENT
        return tok, lit

    def take(self, values: bool = True) -> tuple[int, str]:
        item = self.peek(values)
        self.at += 1
        return item

    def selector(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok == _END:
                return reqs
            if tok not in (_IDENT, _NOT):
                _fail(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self.requirement())
            except _SelectorError as e:
                _fail(f"unable to parse requirement: {e}")
            tok, lit = self.take()
            if tok == _END:
                return reqs
            if tok != _COMMA:
                _fail(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.peek()
            if tok not in (_IDENT, _NOT):
                _fail(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        tok, key = self.take()
        negated = tok == _NOT
        if negated:
            tok, key = self.take()
        if tok != _IDENT:
            _fail(f"found '{key}', expected: identifier")
        problems = _label_key_problems(key)
        if problems:  # reported with the parser's field path: none
            _fail(_invalid("<nil>", key, "; ".join(problems)))
        if negated or self.peek()[0] in (_END, _COMMA):
            return _new_requirement(key, "!" if negated else "exists", ())
        tok, lit = self.take(values=False)
        op = _BINARY_OPS.get(tok)
        if op is None:
            _fail(f"found '{lit}', expected: in, notin, =, ==, !=, gt, lt")
        found = self.value_set() if op in ("in", "notin") else self.exact_value()
        # a set of strings: listed sorted, each once
        return _new_requirement(key, op, tuple(sorted(found)))

    def value_set(self) -> set[str]:
        tok, lit = self.take()
        if tok != _OPEN:
            _fail(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == _CLOSE:  # "()": the empty value
            self.take()
            return {""}
        if tok not in (_IDENT, _COMMA):
            _fail(f"found '{lit}', expected: ',', ')' or identifier")
        found = self.value_list()
        if self.take()[0] != _CLOSE:  # (the list ends before a ")": never taken)
            _fail(f"found '{lit}', expected: ')'")
        return found

    def value_list(self) -> set[str]:
        # values between commas; a missing one (",," or a leading or
        # trailing comma) is the empty value
        found: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _IDENT:
                found.add(lit)
                tok, lit = self.peek()
                if tok == _CLOSE:
                    return found
                if tok != _COMMA:
                    _fail(f"found '{lit}', expected: ',' or ')'")
            elif tok == _COMMA:
                if not found:
                    found.add("")
                tok = self.peek()[0]
                if tok == _CLOSE:
                    found.add("")
                    return found
                if tok == _COMMA:
                    found.add("")
            else:
                _fail(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_END, _COMMA):
            return {""}
        tok, lit = self.take()
        if tok != _IDENT:
            _fail(f"found '{lit}', expected: identifier")
        return {lit}


def _parse_string(text: str) -> list[Requirement]:
    reqs = _Parser(text).selector()
    _go_sort_by_key(reqs)
    return reqs


# ---------------------------------------------------------------------------
# the mapping form (metav1.LabelSelectorAsSelector)
# ---------------------------------------------------------------------------

_EXPRESSION_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def _go_string(value: object, path: str) -> str:
    """A string field as ``encoding/json`` decodes it: null is ``""``."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise wrong_type(path, "a string", value)
    return value


def _from_mapping(value: Mapping[Any, Any], path: str) -> list[Requirement]:
    check_known_fields(value, ("matchLabels", "matchExpressions"), path)
    labels = value.get("matchLabels")
    if labels is None:
        labels = {}
    if not _is_map(labels):
        raise wrong_type(f"{path}.matchLabels", "a mapping", labels)
    exprs = value.get("matchExpressions")
    if exprs is None:
        exprs = []
    if not isinstance(exprs, list):
        raise wrong_type(f"{path}.matchExpressions", "a list", exprs)
    # the shape first: a requirement's error is apimachinery's, and only
    # the first is reported
    pairs: list[tuple[str, str]] = []
    for k, v in labels.items():
        if not isinstance(k, str):
            raise wrong_type(f"{path}.matchLabels", "a mapping with string keys (label keys)", k)
        pairs.append((k, _go_string(v, f"{path}.matchLabels[{k}]")))
    terms: list[tuple[str, str, tuple[str, ...]]] = []
    for i, e in enumerate(exprs):
        at = f"{path}.matchExpressions[{i}]"
        if not _is_map(e):
            raise wrong_type(at, "a mapping (key, operator, values)", e)
        check_known_fields(e, ("key", "operator", "values"), at)
        vals = e.get("values")
        if vals is None:
            vals = []
        if not isinstance(vals, list):
            raise wrong_type(f"{at}.values", "a list", vals)
        terms.append((
            _go_string(e.get("key"), f"{at}.key"),
            _go_string(e.get("operator"), f"{at}.operator"),
            tuple(_go_string(v, f"{at}.values[{j}]") for j, v in enumerate(vals)),
        ))
    # matchLabels is a Go map there, walked in a random order: with two bad
    # entries either may be the one reported; here the first one given
    reqs = [_new_requirement(k, "=", (v,)) for k, v in pairs]
    for key, operator, values in terms:
        op = _EXPRESSION_OPS.get(operator)
        if op is None:
            from podnuma.golang.strconv import go_quote

            _fail(f"{go_quote(operator)} is not a valid label selector operator")
        reqs.append(_new_requirement(key, op, values))
    _go_sort_by_key(reqs)
    return reqs


# ---------------------------------------------------------------------------
# Go's sort.Sort, for the order of requirements with the same key
# ---------------------------------------------------------------------------


def _go_sort_by_key(reqs: list[Requirement]) -> None:
    """Sort by key in place as ``sort.Sort(ByKey(reqs))`` does.

    ``sort.Sort`` is Go's pattern-defeating quicksort, which is not stable:
    requirements sharing a key may come out in another order than they were
    given. Up to 12 elements it is an insertion sort (stable), and with
    distinct keys every sort agrees, so Python's sort serves then; otherwise
    the quicksort runs step by step."""
    n = len(reqs)
    if n <= 12 or len({r.key for r in reqs}) == n:
        reqs.sort(key=lambda r: r.key)
        return
    _GoQuicksort(reqs).run()


_MASK64 = (1 << 64) - 1


class _GoQuicksort:
    """Go 1.26's ``sort.Sort`` (``pdqsort``, ``zsortinterface.go``) on
    requirements by key: the same comparisons and swaps, so the same final
    order of equal keys."""

    __slots__ = ("a",)

    def __init__(self, a: list[Requirement]) -> None:
        self.a = a

    def less(self, i: int, j: int) -> bool:
        return self.a[i].key < self.a[j].key

    def swap(self, i: int, j: int) -> None:
        a = self.a
        a[i], a[j] = a[j], a[i]

    def run(self) -> None:
        n = len(self.a)
        if n > 1:
            self.pdq(0, n, n.bit_length())

    def insertion(self, lo: int, hi: int) -> None:
        for i in range(lo + 1, hi):
            j = i
            while j > lo and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, root: int, hi: int, first: int) -> None:
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap(self, lo: int, hi: int) -> None:
        size = hi - lo
        for i in range((size - 1) // 2, -1, -1):
            self.sift_down(i, size, lo)
        for i in range(size - 1, -1, -1):
            self.swap(lo, lo + i)
            self.sift_down(0, i, lo)

    def pdq(self, lo: int, hi: int, limit: int) -> None:
        balanced = partitioned = True
        while True:
            length = hi - lo
            if length <= 12:
                self.insertion(lo, hi)
                return
            if limit == 0:
                self.heap(lo, hi)
                return
            if not balanced:
                self.break_patterns(lo, hi)
                limit -= 1
            pivot, hint = self.choose_pivot(lo, hi)
            if hint < 0:  # descending: reverse, and the pivot with it
                self.reverse(lo, hi)
                pivot = (hi - 1) - (pivot - lo)
                hint = 1
            if balanced and partitioned and hint > 0 and self.partial_insertion(lo, hi):
                return
            if lo > 0 and not self.less(lo - 1, pivot):
                # nothing here is below the previous pivot: put the
                # elements equal to it first and go on with the rest
                lo = self.partition_equal(lo, hi, pivot)
                continue
            mid, partitioned = self.partition(lo, hi, pivot)
            left, right = mid - lo, hi - mid
            if left < right:
                balanced = left >= length // 8
                self.pdq(lo, mid, limit)
                lo = mid + 1
            else:
                balanced = right >= length // 8
                self.pdq(mid + 1, hi, limit)
                hi = mid

    def partition(self, lo: int, hi: int, pivot: int) -> tuple[int, bool]:
        self.swap(lo, pivot)
        i, j = lo + 1, hi - 1
        while i <= j and self.less(i, lo):
            i += 1
        while i <= j and not self.less(j, lo):
            j -= 1
        if i > j:
            self.swap(j, lo)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, lo):
                i += 1
            while i <= j and not self.less(j, lo):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, lo)
        return j, False

    def partition_equal(self, lo: int, hi: int, pivot: int) -> int:
        self.swap(lo, pivot)
        i, j = lo + 1, hi - 1
        while True:
            while i <= j and not self.less(lo, i):
                i += 1
            while i <= j and self.less(lo, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion(self, lo: int, hi: int) -> bool:
        i = lo + 1
        for _ in range(5):
            while i < hi and not self.less(i, i - 1):
                i += 1
            if i == hi:
                return True
            if hi - lo < 50:
                return False
            self.swap(i, i - 1)
            if i - lo >= 2:
                # (down to index 1 of the whole list, as Go's loop goes)
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if hi - i >= 2:
                for j in range(i + 1, hi):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, lo: int, hi: int) -> None:
        length = hi - lo
        if length < 8:
            return
        state = length  # an xorshift generator seeded with the length
        mask = (1 << length.bit_length()) - 1
        middle = lo + (length // 4) * 2
        for idx in range(middle - 1, middle + 2):
            state ^= (state << 13) & _MASK64
            state ^= state >> 7
            state ^= (state << 17) & _MASK64
            other = state & mask
            if other >= length:
                other -= length
            self.swap(idx, lo + other)

    def choose_pivot(self, lo: int, hi: int) -> tuple[int, int]:
        """The pivot and a hint: 1 the three samples were in order, -1 in
        reverse order at every comparison, 0 otherwise."""
        length = hi - lo
        swaps = 0

        def order(x: int, y: int) -> tuple[int, int]:
            nonlocal swaps
            if self.less(y, x):
                swaps += 1
                return y, x
            return x, y

        def median(x: int, y: int, z: int) -> int:
            x, y = order(x, y)
            y, z = order(y, z)
            x, y = order(x, y)
            return y

        quarter = length // 4
        i, j, k = lo + quarter, lo + quarter * 2, lo + quarter * 3
        if length >= 8:
            if length >= 50:
                i, j, k = median(i - 1, i, i + 1), median(j - 1, j, j + 1), median(k - 1, k, k + 1)
            j = median(i, j, k)
        if swaps == 0:
            return j, 1
        if swaps == 12:
            return j, -1
        return j, 0

    def reverse(self, lo: int, hi: int) -> None:
        i, j = lo, hi - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1
