"""A small reader for Triton's config.pbtxt (protobuf text format) that yields the JSON shape Triton
hands a Python model as args["model_config"]: repeated fields as lists, `parameters` as a map of
{key: {"string_value": ...}}, enums as their names, numbers as numbers. Enough for the fields a model
config uses; it is a test helper, not a general protobuf parser.
"""

import re

REPEATED = {"input", "output", "instance_group", "dims", "gpus", "preferred_batch_size", "parameters"}

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<comment>\#[^\n]*)
      | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
      | (?P<punct>[{}\[\]:,<>;])
      | (?P<word>[A-Za-z0-9_.+\-]+)
    )""",
    re.VERBOSE,
)


def _tokens(text):
    position = 0
    out = []
    while position < len(text):
        match = _TOKEN.match(text, position)
        if not match or match.end() == position:
            if text[position:].strip() == "":
                break
            raise ValueError(f"pbtxt: unexpected character {text[position]!r} at {position}")
        position = match.end()
        if match.group("comment") is not None:
            continue
        for kind in ("string", "punct", "word"):
            if match.group(kind) is not None:
                out.append((kind, match.group(kind)))
                break
    return out


def _scalar(kind, value):
    if kind == "string":
        return bytes(value[1:-1], "utf-8").decode("unicode_escape")
    if value in ("true", "false"):
        return value == "true"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value  # an enum name


class _Parser:
    def __init__(self, tokens):
        self.tokens = tokens
        self.index = 0

    def peek(self):
        return self.tokens[self.index] if self.index < len(self.tokens) else (None, None)

    def take(self, expected=None):
        token = self.peek()
        if token[0] is None or (expected is not None and token[1] != expected):
            raise ValueError(f"pbtxt: expected {expected!r}, got {token[1]!r}")
        self.index += 1
        return token

    def message(self, closing):
        fields = {}
        while True:
            kind, value = self.peek()
            if value == closing:
                self.index += 1
                return fields
            if kind is None:
                if closing is None:
                    return fields
                raise ValueError("pbtxt: unexpected end of input")
            if kind != "word":
                raise ValueError(f"pbtxt: expected a field name, got {value!r}")
            self.index += 1
            name = value
            if self.peek()[1] == ":":
                self.index += 1
            self._add(fields, name, self.value())
            if self.peek()[1] in (",", ";"):
                self.index += 1

    def value(self):
        kind, value = self.peek()
        if value in ("{", "<"):
            self.index += 1
            return self.message("}" if value == "{" else ">")
        if value == "[":
            self.index += 1
            items = []
            while self.peek()[1] != "]":
                items.append(self.value())
                if self.peek()[1] == ",":
                    self.index += 1
            self.index += 1
            return _ListValue(items)
        self.index += 1
        if kind == "string":
            # adjacent string literals concatenate
            text = _scalar(kind, value)
            while self.peek()[0] == "string":
                text += _scalar(*self.take())
            return text
        return _scalar(kind, value)

    @staticmethod
    def _add(fields, name, value):
        if name == "parameters":
            entries = fields.setdefault("parameters", {})
            for entry in value if isinstance(value, _ListValue) else [value]:
                entries[entry["key"]] = entry["value"]
            return
        if name in REPEATED:
            items = list(value) if isinstance(value, _ListValue) else [value]
            fields.setdefault(name, []).extend(items)
            return
        if isinstance(value, _ListValue):
            value = list(value)
        fields[name] = value


class _ListValue(list):
    pass


def parse_pbtxt(text):
    return _Parser(_tokens(text)).message(None)
