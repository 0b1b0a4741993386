#!/usr/bin/env python3
"""Generate vectors.json: known-answer tests for attest.ComputeFingerprints.

This is an independent implementation of the fingerprints, written from the spec and
not from the Go code, using only the Python standard library:

  canonical form (nfc-jcs/v1): every string and object key in Unicode NFC, then
  RFC 8785: members sorted by the UTF-16 code units of their keys, strings escaped as
  RFC 8785 section 3.2.2.2 says, numbers serialized as ECMAScript does.

  toolset      = canonical array of tool names, sorted, duplicates kept
  schema       = canonical array of {"name", "inputSchema"}, sorted by name, then by the
                 canonical inputSchema bytes
  surface      = canonical array of {name, title, description, inputSchema,
                 outputSchema, annotations} per tool (absent members omitted, other
                 members ignored), sorted by name, then by the canonical element bytes
  instructions = canonical JSON string of the instructions ("" when absent)

Names are compared after NFC by UTF-16 code units. Each fingerprint is "sha256:" and the
lowercase hex SHA-256 of the canonical bytes.

Run from this directory:  python3 gen.py  (rewrites vectors.json)
"""

import decimal
import hashlib
import json
import os
import struct
import unicodedata

MAX_SAFE = 2**53


def nfc(s):
    return unicodedata.normalize("NFC", s)


def nfd(s):
    return unicodedata.normalize("NFD", s)


def utf16_key(s):
    # Big-endian UTF-16 bytes compare exactly as the sequence of code units does.
    return s.encode("utf-16-be")


def es6_number(f):
    """ECMAScript Number::toString for a finite double (RFC 8785 section 3.2.2.3)."""
    if f == 0:
        return "0"
    if f < 0:
        return "-" + es6_number(-f)
    # repr gives the shortest decimal that round-trips, as ECMAScript requires.
    _, digit_tuple, exp = decimal.Decimal(repr(f)).as_tuple()
    all_digits = "".join(map(str, digit_tuple))
    # Fold trailing zeros into the exponent: value = int(digits) * 10^exp.
    digits = all_digits.rstrip("0")
    exp += len(all_digits) - len(digits)
    k = len(digits)
    n = exp + k  # value = 0.digits * 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return mantissa + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def quote(s):
    out = ['"']
    short = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    for ch in s:
        if ch in short:
            out.append(short[ch])
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical(v):
    """The nfc-jcs/v1 canonical text of a value parsed by parse()."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        assert abs(v) <= MAX_SAFE, v
        return str(v)
    if isinstance(v, float):
        return es6_number(v)
    if isinstance(v, str):
        return quote(nfc(v))
    if isinstance(v, list):
        return "[" + ",".join(canonical(e) for e in v) + "]"
    if isinstance(v, Obj):
        members = [(nfc(k), e) for k, e in v.pairs]
        keys = [k for k, _ in members]
        assert len(set(keys)) == len(keys), "duplicate key after NFC: %r" % keys
        members.sort(key=lambda m: utf16_key(m[0]))
        return "{" + ",".join(quote(k) + ":" + canonical(e) for k, e in members) + "}"
    raise TypeError(type(v))


class Obj:
    """A JSON object with its members in document order."""

    def __init__(self, pairs):
        keys = [k for k, _ in pairs]
        assert len(set(keys)) == len(keys), "duplicate key: %r" % keys
        self.pairs = pairs

    def get(self, key, default=None):
        for k, v in self.pairs:
            if k == key:
                return v
        return default

    def __contains__(self, key):
        return any(k == key for k, _ in self.pairs)


def parse(text):
    return json.loads(text, object_pairs_hook=Obj)


def digest(text):
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def tools_and_instructions(doc):
    if isinstance(doc, list):
        return doc, None
    obj = doc
    if "result" in obj and "tools" not in obj:
        obj = obj.get("result")
    return obj.get("tools"), obj.get("instructions")


SURFACE_MEMBERS = ["name", "title", "description", "inputSchema", "outputSchema", "annotations"]


def fingerprints(text):
    tools, instructions = tools_and_instructions(parse(text))
    names = [nfc(t.get("name")) for t in tools]

    toolset = "[" + ",".join(quote(n) for n in sorted(names, key=utf16_key)) + "]"

    schema_els = []
    for t in tools:
        el = [("name", t.get("name"))]
        if "inputSchema" in t:
            el.append(("inputSchema", t.get("inputSchema")))
        input_canon = canonical(t.get("inputSchema")) if "inputSchema" in t else ""
        schema_els.append((utf16_key(nfc(t.get("name"))), input_canon.encode("utf-8"), canonical(Obj(el))))
    schema_els.sort(key=lambda e: (e[0], e[1]))
    schema = "[" + ",".join(e[2] for e in schema_els) + "]"

    surface_els = []
    for t in tools:
        el = [(k, t.get(k)) for k in SURFACE_MEMBERS if k in t]
        c = canonical(Obj(el))
        surface_els.append((utf16_key(nfc(t.get("name"))), c.encode("utf-8"), c))
    surface_els.sort(key=lambda e: (e[0], e[1]))
    surface = "[" + ",".join(e[2] for e in surface_els) + "]"

    ins = canonical(instructions if instructions is not None else "")

    projections = {"toolset": toolset, "schema": schema, "surface": surface, "instructions": ins}
    return {k: digest(v) for k, v in projections.items()}, projections


# ---------------------------------------------------------------------------------------
# The cases. Documents are built as Python values and serialized with json.dumps, which
# keeps dict insertion order, so key order, whitespace and Unicode forms are chosen here.


def dumps(v, pretty=False, ascii=False):
    if pretty:
        return json.dumps(v, ensure_ascii=ascii, indent=2)
    return json.dumps(v, ensure_ascii=ascii, separators=(",", ":"))


def result(tools, **extra):
    d = {"tools": tools}
    d.update(extra)
    return d


def rpc(res, id_=1):
    return {"jsonrpc": "2.0", "id": id_, "result": res}


def map_strings(v, f):
    if isinstance(v, str):
        return f(v)
    if isinstance(v, list):
        return [map_strings(e, f) for e in v]
    if isinstance(v, dict):
        return {f(k): map_strings(e, f) for k, e in v.items()}
    return v


def reverse_keys(v):
    if isinstance(v, list):
        return [reverse_keys(e) for e in v]
    if isinstance(v, dict):
        return {k: reverse_keys(v[k]) for k in reversed(list(v))}
    return v


WEATHER = {
    "name": "get_weather",
    "title": "Get weather",
    "description": "Returns the current weather for a city.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "units": {"type": "string", "enum": ["metric", "imperial"], "default": "metric"},
        },
        "required": ["city"],
    },
    "outputSchema": {"type": "object", "properties": {"tempC": {"type": "number"}}},
    "annotations": {"readOnlyHint": True, "openWorldHint": True},
}

SEARCH = {
    "name": "search",
    "description": "Full-text search over the index.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        },
        "required": ["query"],
    },
}

DELETE = {
    "name": "delete_file",
    "title": "Delete a file",
    "description": "Deletes the file at a path.\nThis cannot be undone.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "annotations": {"destructiveHint": True, "idempotentHint": True, "readOnlyHint": False},
}

ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}

UPPER = {
    "name": "Zeta",
    "description": 'Quotes " and backslashes \\ and a tab\tand </script>',
    "inputSchema": {
        "type": "object",
        "properties": {
            "ratio": {"type": "number", "minimum": 0.0, "maximum": 1.5, "default": 0.25},
            "big": {"type": "number", "maximum": 1e30, "minimum": -1e-7},
            "n": {"type": "integer", "maximum": 9007199254740992},
        },
    },
}

SEVERAL = [WEATHER, SEARCH, DELETE, ECHO, UPPER]

NFC_TOOLS = [
    {
        "name": "caf\u00e9_menu",
        "title": "Caf\u00e9 menu",
        "description": "R\u00e9sum\u00e9 of the \u00c5ngstr\u00f6m caf\u00e9, \u1e9b\u0323 and \uac00.",
        "inputSchema": {
            "type": "object",
            "properties": {"cr\u00e8me": {"type": "string", "enum": ["br\u00fbl\u00e9e", "fra\u00eeche"]}},
        },
    },
    {"name": "\u00c5_tool", "inputSchema": {"type": "object"}},
    {"name": "na\u00efve", "description": "\u1e14", "inputSchema": {"type": "object"}},
]

INSTR = "Use get_weather for forecasts.\nNever call delete_file without asking. Caf\u00e9 \u00e9t\u00e9."

cases = []


def case(name, doc_text, same_as=None, differs_from=None, note=""):
    fps, proj = fingerprints(doc_text)
    c = {"name": name}
    if note:
        c["note"] = note
    c["document"] = doc_text
    c.update(fps)
    c["projections"] = proj
    if same_as:
        c["same_as"] = same_as
    if differs_from:
        c["differs_from"] = differs_from
    cases.append(c)


case("empty", dumps(result([])))
case("empty_bare_array", "[]", same_as="empty")
case("empty_rpc", dumps(rpc(result([]))), same_as="empty")
case("one_tool", dumps(result([WEATHER])))
case("one_tool_pretty", dumps(result([WEATHER]), pretty=True), same_as="one_tool", note="whitespace")
case("one_tool_ascii_escapes", dumps(result([WEATHER]), ascii=True), same_as="one_tool")
case("several", dumps(result(SEVERAL)))
case("several_shuffled", dumps(result([UPPER, DELETE, WEATHER, ECHO, SEARCH])), same_as="several")
case("several_reversed_keys", dumps(reverse_keys(result(SEVERAL[::-1])), pretty=True), same_as="several",
     note="every object's members in reverse order, tools reversed, pretty-printed")
case("several_rpc", dumps(rpc(result(SEVERAL), id_="req-7")), same_as="several")
case("several_rpc_reordered", dumps(reverse_keys(rpc(result(SEVERAL), id_=99))), same_as="several",
     note='"result" before "id" and "jsonrpc"')
case("several_bare_array", dumps(SEVERAL), same_as="several")
case("several_bare_array_ws", "\n  " + dumps(SEVERAL, pretty=True) + "\n", same_as="several")

SEARCH2 = dict(SEARCH, description="A second search tool.",
               inputSchema={"type": "object", "properties": {"q": {"type": "string"}}})
SEARCH3 = dict(SEARCH, description="A third search tool.")
case("duplicate_names", dumps(result([SEARCH, ECHO, SEARCH2, SEARCH3])))
case("duplicate_names_shuffled", dumps(result([SEARCH3, SEARCH2, ECHO, SEARCH])), same_as="duplicate_names")
case("duplicate_identical", dumps(result([ECHO, ECHO])))

case("nfc", dumps(result(NFC_TOOLS, instructions=INSTR)))
case("nfd", dumps(map_strings(result(NFC_TOOLS, instructions=INSTR), nfd)), same_as="nfc",
     note="every string and key in NFD")
case("nfd_escaped", dumps(map_strings(result(NFC_TOOLS, instructions=INSTR), nfd), ascii=True), same_as="nfc",
     note="NFD, written with \\u escapes")
case("nfd_angstrom_sign", dumps(result([dict(NFC_TOOLS[0]), dict(NFC_TOOLS[1], name="\u212b_tool"),
                                        NFC_TOOLS[2]], instructions=INSTR)), same_as="nfc",
     note="U+212B ANGSTROM SIGN normalizes to U+00C5")
case("nfc_name_collision", dumps(result([{"name": "\u00c5", "description": "precomposed"},
                                         {"name": "A\u030a", "description": "decomposed"},
                                         {"name": "\u212b", "description": "angstrom sign"}])),
     note="three names equal after NFC: duplicates, ordered by the surface element")

BASE_ABSENT = {"name": "t", "inputSchema": {"type": "object"}}
case("members_absent", dumps(result([BASE_ABSENT])))
case("members_null", dumps(result([dict(BASE_ABSENT, title=None, description=None, outputSchema=None,
                                        annotations=None)])),
     differs_from="members_absent", note="null members are present: surface differs")
case("members_extra_ignored", dumps(result([dict(BASE_ABSENT, _meta={"x": 1}, icons=[{"src": "a.png"}],
                                                 execution={"taskSupport": "optional"})])),
     same_as="members_absent")
case("input_schema_absent", dumps(result([{"name": "t"}])), differs_from="members_absent")
case("input_schema_null", dumps(result([{"name": "t", "inputSchema": None}])), differs_from="input_schema_absent")

case("utf16_order", dumps(result([{"name": n} for n in
                                  ["\uff21", "\U0001F600", "a", "\ue000", "\ud7ff", "\U00010000", "\uffff", "Z"]])),
     note="supplementary characters (surrogates D800-DFFF) sort before U+E000-U+FFFF")
case("utf16_order_shuffled", dumps(result([{"name": n} for n in
                                           ["\U00010000", "Z", "\uffff", "\ud7ff", "a", "\U0001F600", "\ue000",
                                            "\uff21"]]), ascii=True), same_as="utf16_order")
case("utf16_prefix_order", dumps(result([{"name": n} for n in ["ab", "a", "a\U0001F600", "a\uff21", ""]])))

case("instructions_absent", dumps(result([ECHO])))
case("instructions_empty", dumps(result([ECHO], instructions="")), same_as="instructions_absent")
case("instructions_bare_array", dumps([ECHO]), same_as="instructions_absent")
case("instructions_text", dumps(result([ECHO], instructions=INSTR)), differs_from="instructions_absent")
case("instructions_text_nfd", dumps(result([ECHO], instructions=nfd(INSTR)), ascii=True), same_as="instructions_text")
case("instructions_rpc", dumps(rpc(result([ECHO], instructions=INSTR))), same_as="instructions_text")
case("instructions_controls", dumps(result([ECHO], instructions="a\u0000b\u001f\u007f\"\\/\u2028")))

case("name_escapes", dumps(result([{"name": n} for n in
                                   ["a\\b", "a\"b", "a b", "a\nb", "a\u0000b", "a\u001fb", "a/b", "a\u007fb", "a\u2028b"]])),
     note="names are compared as decoded strings, not as their escaped JSON text")
case("name_escapes_escaped", dumps(result([{"name": n} for n in
                                           ["a\u2028b", "a\u007fb", "a/b", "a\u001fb", "a\u0000b", "a\nb", "a b",
                                            "a\"b", "a\\b"]]), ascii=True).replace("a/b", "a\\/b"),
     same_as="name_escapes")
case("numbers_and_escapes", r'''{"tools":[{"name":"\u006eum","description":"line\nbreak \/ \u00e9",
 "inputSchema":{"type":"object","properties":{"x":{"type":"number","minimum":1.0,"maximum":1E2,
 "multipleOf":0.50,"default":-0,"examples":[1e21,1e-7,0.000001,123456789.125]}}}}]}''',
     note="number forms and escapes are canonicalized")
case("numbers_and_escapes_plain", dumps(result([{"name": "num", "description": "line\nbreak / \u00e9",
                                                 "inputSchema": {"type": "object", "properties": {"x": {
                                                     "type": "number", "minimum": 1, "maximum": 100,
                                                     "multipleOf": 0.5, "default": 0,
                                                     "examples": [1e21, 1e-7, 1e-6, 123456789.125]}}}}])),
     same_as="numbers_and_escapes")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    # Sanity checks of the number serialization against RFC 8785 Appendix B.
    for bits, want in [(0x0000000000000001, "5e-324"), (0x7fefffffffffffff, "1.7976931348623157e+308"),
                       (0x4340000000000000, "9007199254740992"), (0x4430000000000000, "295147905179352830000"),
                       (0x444b1ae4d6e2ef50, "1e+21"), (0x3eb0c6f7a0b5ed8d, "0.000001"),
                       (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"), (0x41b3de4355555553, "333333333.3333332"),
                       (0x44b52d02c7e14af6, "1e+23"), (0xbecbf647612f3696, "-0.0000033333333333333333"),
                       (0x43143ff3c1cb0959, "1424953923781206.2")]:
        f = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
        assert es6_number(f) == want, (hex(bits), es6_number(f), want)
    assert utf16_key("\U0001F600") < utf16_key("\uff21")
    byname = {c["name"]: c for c in cases}
    assert len(byname) == len(cases)
    for c in cases:
        fp = [c[k] for k in ("toolset", "schema", "surface", "instructions")]
        if "same_as" in c:
            o = byname[c["same_as"]]
            assert fp == [o[k] for k in ("toolset", "schema", "surface", "instructions")], c["name"]
        if "differs_from" in c:
            o = byname[c["differs_from"]]
            assert fp != [o[k] for k in ("toolset", "schema", "surface", "instructions")], c["name"]
    with open(os.path.join(here, "vectors.json"), "w", encoding="ascii") as f:
        json.dump({"generator": "gen.py", "cases": cases}, f, ensure_ascii=True, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
