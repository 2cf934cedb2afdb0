#!/usr/bin/python3
"""kval.py: strict offline validation of Kubernetes manifests, as kubectl --validate=strict would
judge them against the published schemas, without a cluster.

usage: kval.py SCHEMAS FILE_OR_DIR...
       kval.py SCHEMAS --each DIR...

--each judges each DIR on its own, as a run on it alone would, with the schemas loaded once (the
slow part): its report goes to DIR.kval, ending with a line 'exit N', N the status of that run.

SCHEMAS is tests/data/k8s (crds/*.yaml: published CustomResourceDefinitions; core/core.json:
the core kinds and kustomize's Kustomization, see its $comment). Every YAML document of every
file (folders: every *.yaml below them) must be a known kind and pass its schema with every
object schema closed (an unknown field is an error unless the schema preserves unknown fields),
types and enums as published; pod templates also pass the checks the API server makes beyond
the schema (a mount names a volume, names unique, port names, hostNetwork's DNS policy,
extended resources requested as limited). A kustomization's resources must exist beside it.
Prints a line per failure; exit 1 when any, 0 otherwise. Needs python3-yaml and python3-jsonschema.
"""
import json
import os
import re
import sys

import jsonschema
import yaml

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def strictify(s):
    """A CRD's openAPIV3Schema as JSON schema, every object with listed properties closed."""
    if isinstance(s, list):
        return [strictify(x) for x in s]
    if not isinstance(s, dict):
        return s
    o = {}
    for k, v in s.items():
        if k == "description":
            continue
        if k in ("properties", "patternProperties"):
            o[k] = {pk: strictify(pv) for pk, pv in v.items()}
        else:
            o[k] = strictify(v)
    if o.pop("nullable", False) and "type" in o:
        o["type"] = [o["type"], "null"]
    if o.get("x-kubernetes-embedded-resource") and "properties" in o:
        o["properties"] = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                           "metadata": {"type": "object"}, **o["properties"]}
    if "properties" in o and "additionalProperties" not in o and not o.get("x-kubernetes-preserve-unknown-fields"):
        o["additionalProperties"] = False
    return o


def load_schemas(root):
    validators = {}
    pod_template = None
    for f in sorted(os.listdir(os.path.join(root, "crds"))):
        with open(os.path.join(root, "crds", f)) as fp:
            for crd in yaml.load_all(fp, Loader=Loader):
                if not crd or crd.get("kind") != "CustomResourceDefinition":
                    continue
                for v in crd["spec"]["versions"]:
                    if not v.get("served"):
                        continue
                    schema = strictify(v["schema"]["openAPIV3Schema"])
                    key = (f'{crd["spec"]["group"]}/{v["name"]}', crd["spec"]["names"]["kind"])
                    validators[key] = jsonschema.Draft7Validator(schema)
                    if key[1] == "LeaderWorkerSet":
                        pod_template = schema["properties"]["spec"]["properties"]["leaderWorkerTemplate"][
                            "properties"]["workerTemplate"]
    with open(os.path.join(root, "core", "core.json")) as fp:
        core = json.load(fp)
    core["definitions"]["PodTemplateSpec"] = pod_template
    for api, kind in (("apps/v1", "Deployment"), ("v1", "Service"), ("v1", "ConfigMap"), ("v1", "Namespace"),
                      ("kustomize.config.k8s.io/v1beta1", "Kustomization")):
        schema = {"definitions": core["definitions"], "$ref": f"#/definitions/{kind}"}
        validators[(api, kind)] = jsonschema.Draft7Validator(schema)
    meta = jsonschema.Draft7Validator({"definitions": core["definitions"], "$ref": "#/definitions/ObjectMeta"})
    return validators, meta


IANA = re.compile(r"^(?=.{1,15}$)(?=.*[a-z])[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
ENVNAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
DNSLABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def pod_specs(obj, path=""):
    """Every pod spec in obj (under a 'template' or a template patch's spec), with its path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = f"{path}/{k}"
            if k in ("template", "leaderTemplate", "workerTemplate") and isinstance(v, dict) and isinstance(v.get("spec"), dict):
                yield p + "/spec", v["spec"]
            yield from pod_specs(v, p)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from pod_specs(v, f"{path}/{i}")


def pod_problems(spec):
    """What the API server's pod validation refuses that the schema lets through."""
    out = []
    vols = [v.get("name") for v in spec.get("volumes", [])]
    for n in vols:
        if vols.count(n) > 1:
            out.append(f"volume '{n}' is listed twice")
        if not DNSLABEL.match(n or "") or len(n) > 63:
            out.append(f"volume name '{n}' is not a DNS label")
    if spec.get("hostNetwork") and spec.get("dnsPolicy") not in ("ClusterFirstWithHostNet", "Default", "None"):
        out.append("hostNetwork without dnsPolicy ClusterFirstWithHostNet: the pod would not resolve cluster names")
    names = []
    for c in spec.get("initContainers", []) + spec.get("containers", []):
        names.append(c.get("name"))
        for m in c.get("volumeMounts", []):
            if m.get("name") not in vols:
                out.append(f"container '{c.get('name')}' mounts '{m.get('name')}', which is no volume")
        ports = [p.get("name") for p in c.get("ports", []) if "name" in p]
        for p in ports:
            if not IANA.match(p):
                out.append(f"container '{c.get('name')}': port name '{p}' is not an IANA service name (15 at most)")
            if ports.count(p) > 1:
                out.append(f"container '{c.get('name')}': port name '{p}' twice")
        for e in c.get("env", []):
            if not ENVNAME.match(e.get("name", "")):
                out.append(f"container '{c.get('name')}': env name '{e.get('name')}' is not valid")
        res = c.get("resources", {})
        for r, q in res.get("limits", {}).items():
            if "/" in r and not r.startswith("kubernetes.io/") and res.get("requests", {}).get(r, q) != q:
                out.append(f"container '{c.get('name')}': extended resource {r} requested other than limited")
    for n in names:
        if names.count(n) > 1:
            out.append(f"container name '{n}' twice")
    return out


def check_doc(validators, meta, obj):
    if not isinstance(obj, dict):
        return [("", "a manifest is a mapping")]
    key = (obj.get("apiVersion"), obj.get("kind"))
    if key not in validators:
        return [("", f"unknown kind {key}: no published schema for it here")]
    errs = [("/" + "/".join(map(str, e.absolute_path)), e.message[:300])
            for e in sorted(validators[key].iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))]
    if key[1] != "Kustomization":
        errs += [("/metadata/" + "/".join(map(str, e.absolute_path)), e.message[:300])
                 for e in meta.iter_errors(obj.get("metadata"))]
    for p, spec in pod_specs(obj):
        errs += [(p, m) for m in pod_problems(spec)]
    return errs


def files_of(args):
    for a in args:
        if os.path.isdir(a):
            for d, _, fs in sorted(os.walk(a)):
                for f in sorted(fs):
                    if f.endswith(".yaml"):
                        yield os.path.join(d, f)
        else:
            yield a


def validate(validators, meta, paths, out):
    """The report on every document of paths, printed to out; the exit status of a run on them."""
    ok = bad = 0
    for f in files_of(paths):
        with open(f) as fp:
            try:
                docs = list(yaml.load_all(fp, Loader=Loader))
            except yaml.YAMLError as e:
                print(f"FAIL {f}: not YAML: {e}", file=out)
                bad += 1
                continue
        for n, obj in enumerate(docs):
            if obj is None:
                continue
            errs = check_doc(validators, meta, obj)
            if isinstance(obj, dict) and obj.get("kind") == "Kustomization":
                for r in obj.get("resources", []):
                    if not os.path.exists(os.path.join(os.path.dirname(f), r)):
                        errs.append(("/resources", f"'{r}' is not beside {f}"))
            name = f"{obj.get('kind')}/{(obj.get('metadata') or {}).get('name', '')}" if isinstance(obj, dict) else "?"
            if errs:
                bad += 1
                print(f"FAIL {f}#{n} {name}", file=out)
                for p, m in errs[:8]:
                    print(f"    {p or '/'}: {m}", file=out)
            else:
                ok += 1
    print(f"{ok} passed, {bad} failed", file=out)
    return 1 if bad or not ok else 0


def main(argv):
    if len(argv) < 3 or argv[2:] == ["--each"]:
        print(__doc__, file=sys.stderr)
        return 2
    validators, meta = load_schemas(argv[1])
    if argv[2] != "--each":
        return validate(validators, meta, argv[2:], sys.stdout)
    for d in argv[3:]:
        with open(d.rstrip("/") + ".kval", "w") as out:
            print(f"exit {validate(validators, meta, [d], out)}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
