#!/usr/bin/python3
"""json_check.py: check npulaunch's --json output against its schemas (docs/json/*.schema.json).

usage: json_check.py SCHEMAS LIST
       json_check.py --lint SCHEMAS

LIST has one line per output to check: SCHEMA-NAME <TAB> FILE <TAB> WHAT (the command line, for
the message). Each FILE must hold exactly one JSON document (standard output of one run: no other
line before or after it, no second document) that the schema SCHEMAS/NAME.schema.json accepts.

--lint checks the schemas themselves: each is a valid JSON Schema of draft 2020-12, and strict:
every object schema ("type": "object") closes its properties ("additionalProperties": false) and
names the ones it requires; "type" never leaves a value untyped.

Prints a line per failure; exit 1 when any, 0 otherwise. Needs python3-jsonschema
(tests/install-deps.sh installs it).
"""
import glob
import json
import os
import sys

import jsonschema

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def load_schema(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def lint(path, schema):
    """Problems of one schema: validity and strictness."""
    out = []
    if schema.get("$schema") != DRAFT:
        out.append("%s: $schema is not %s" % (path, DRAFT))
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.exceptions.SchemaError as e:
        out.append("%s: not a valid schema: %s" % (path, e.message))

    def walk(s, where):
        if isinstance(s, list):
            for i, x in enumerate(s):
                walk(x, "%s/%d" % (where, i))
            return
        if not isinstance(s, dict):
            return
        t = s.get("type")
        if t == "object" or (isinstance(t, list) and "object" in t):
            if s.get("additionalProperties") is not False:
                out.append("%s: %s: an object schema without \"additionalProperties\": false" % (path, where))
            if "required" not in s and s.get("patternProperties") is None:
                out.append("%s: %s: an object schema that names no required property" % (path, where))
        for k, v in s.items():
            if k in ("enum", "const", "required", "description", "title", "dependentRequired"):
                continue
            if k in ("properties", "patternProperties", "$defs"):
                for name, sub in v.items():
                    walk(sub, "%s/%s/%s" % (where, k, name))
            else:
                walk(v, "%s/%s" % (where, k))

    walk(schema, "#")
    return out


def check(schemas, listing):
    out = []
    validators = {}
    n = 0
    with open(listing, encoding="utf-8") as f:
        for line in f:
            name, path, what = line.rstrip("\n").split("\t", 2)
            n += 1
            if name not in validators:
                validators[name] = jsonschema.Draft202012Validator(
                    load_schema(os.path.join(schemas, name + ".schema.json")))
            with open(path, "rb") as g:
                raw = g.read()
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                out.append("%s: standard output is not UTF-8: %s" % (what, e))
                continue
            if not text.strip():
                out.append("%s: nothing on standard output" % what)
                continue
            dec = json.JSONDecoder()
            start = len(text) - len(text.lstrip())
            if start:
                out.append("%s: standard output starts with blank space, not the document" % what)
            try:
                doc, end = dec.raw_decode(text, start)
            except json.JSONDecodeError as e:
                out.append("%s: standard output is not a JSON document: %s: %r" % (what, e, text[:200]))
                continue
            rest = text[end:]
            if rest.strip():
                out.append("%s: more than one document, or text after it, on standard output: %r" % (what, rest[:200]))
                continue
            if rest != "\n":
                out.append("%s: the document does not end with one newline: %r" % (what, rest))
            errors = sorted(validators[name].iter_errors(doc), key=lambda e: list(e.absolute_path))
            for e in errors[:5]:
                # the branch of a oneOf/anyOf that came nearest (went deepest), not the whole instance
                while e.context:
                    e = max(e.context, key=lambda c: (len(c.absolute_path), c.validator != "additionalProperties"))
                loc = "/".join(str(p) for p in e.absolute_path) or "(the document)"
                out.append("%s: %s.schema.json: at %s: %s" % (what, name, loc, e.message[:400]))
    return out, n


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--lint":
        out = []
        files = sorted(glob.glob(os.path.join(sys.argv[2], "*.schema.json")))
        if not files:
            out.append("%s: no *.schema.json" % sys.argv[2])
        for p in files:
            try:
                out += lint(os.path.basename(p), load_schema(p))
            except (OSError, ValueError) as e:
                out.append("%s: %s" % (p, e))
        n = len(files)
    elif len(sys.argv) == 3:
        out, n = check(sys.argv[1], sys.argv[2])
    else:
        sys.stderr.write(__doc__)
        return 2
    for line in out:
        print("FAIL: " + line)
    print("%d checked, %d failure(s)" % (n, len(out)))
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
