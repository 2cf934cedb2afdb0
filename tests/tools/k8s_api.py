#!/usr/bin/python3
"""k8s_api.py: the objects of rendered Kubernetes bundles read by Kubernetes' own API types
(Debian's python3-kubernetes: the kubernetes.client models, generated from the API's OpenAPI
document), strictly, and each folder built by `kubectl kustomize` where kubectl is.

usage: k8s_api.py [--kubectl PATH] DIR...

DIR: a bundle (kustomization.yaml in it) or a folder of bundles. Every document of every *.yaml
but the kustomization is deserialized into its model (ConfigMap -> V1ConfigMap, Service,
Deployment, Namespace) and every pod template of the custom resources (LeaderWorkerSet,
RoleBasedGroup: the templates and template patches) into V1PodTemplateSpec, with the client's
own deserializer (required fields, enums, types), after a walk of the same types that refuses
what the deserializer would drop silently: an unknown field, a number where the API has a string
(a quantity, a label), a list where it has an object. Every pod template but a patch must be of
the Guaranteed QoS class (every container and init container with cpu and memory limits equal
to its requests, the requests of every resource equal to its limits). With kubectl (--kubectl,
else /usr/bin/kubectl or kubectl on PATH), `kubectl kustomize DIR` must build each bundle, and
what it builds passes the same checks, every namespaced object in the kustomization's namespace.
Prints FAIL lines and a summary; exit 1 on any failure.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

import yaml
from kubernetes import client
from kubernetes.client import models

# libyaml's reader where python3-yaml has it (Debian's does), as kval.py: the pure-Python one
# spent 11 of this tool's 12 seconds over the 61 bundles of a target
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

FAILS = []
CHECKED = [0, 0]   # documents, pod templates
KINDS = {("v1", "ConfigMap"): "V1ConfigMap", ("v1", "Service"): "V1Service", ("v1", "Namespace"): "V1Namespace",
         ("apps/v1", "Deployment"): "V1Deployment"}
CUSTOM = {("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"), ("workloads.x-k8s.io/v1alpha2", "RoleBasedGroup")}
PRIMITIVE = {"str": str, "int": int, "float": (int, float), "bool": bool}


def fail(where, msg):
    FAILS.append(f"{where}: {msg}")
    print(f"FAIL: {where}: {msg}", flush=True)


def strict(data, typ, path, out):
    """The fields of data that the type typ (an openapi_types string) does not have, or types wrong."""
    if data is None:
        return
    if typ.startswith("list["):
        if not isinstance(data, list):
            out.append(f"{path}: a {type(data).__name__} where the API has a list")
            return
        for i, x in enumerate(data):
            strict(x, typ[5:-1], f"{path}[{i}]", out)
    elif typ.startswith("dict("):
        if not isinstance(data, dict):
            out.append(f"{path}: a {type(data).__name__} where the API has a map")
            return
        inner = typ[typ.index(",") + 1:-1].strip()
        for k, v in data.items():
            strict(v, inner, f"{path}.{k}", out)
    elif typ in PRIMITIVE:
        want = PRIMITIVE[typ]
        if not isinstance(data, want) or (typ in ("int", "float") and isinstance(data, bool)):
            out.append(f"{path}: {data!r} where the API has a {typ}")
    elif typ == "object":
        pass   # IntOrString and the like: the deserializer takes it as it is
    else:
        klass = getattr(models, typ)
        if not isinstance(data, dict):
            out.append(f"{path}: a {type(data).__name__} where the API has a {typ}")
            return
        fields = {v: k for k, v in klass.attribute_map.items()}
        for k, v in data.items():
            if k not in fields:
                out.append(f"{path}: unknown field '{k}' ({typ} has {', '.join(sorted(fields))})")
            else:
                strict(v, klass.openapi_types[fields[k]], f"{path}.{k}", out)


def read(data, typ, where):
    """data as the API type typ: strictly, then by the client's deserializer. The model or None."""
    out = []
    strict(data, typ, typ, out)
    for m in out:
        fail(where, m)
    try:
        return client.ApiClient()._ApiClient__deserialize(data, typ)
    except (ValueError, TypeError) as e:
        fail(where, f"the client's {typ} refuses it: {e}")
        return None


def guaranteed(spec, where):
    """The pod spec is of the Guaranteed QoS class (the kubelet's rule, init containers too)."""
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        res = c.get("resources") or {}
        lim, req = res.get("limits") or {}, res.get("requests") or {}
        for r in ("cpu", "memory"):
            if r not in lim:
                fail(where, f"container {c.get('name')}: no {r} limit: the pod is not Guaranteed")
        if req and req != lim:
            fail(where, f"container {c.get('name')}: requests {req} are not its limits {lim}: not Guaranteed")
        cpu = str(lim.get("cpu", ""))
        if cpu and not re.fullmatch(r"[1-9][0-9]*", cpu):
            fail(where, f"container {c.get('name')}: cpu {cpu!r} is not a whole number: the CPU manager pins none")


def templates(obj, path=""):
    """The pod templates (and template patches) in a custom resource, with their paths."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = f"{path}/{k}"
            if k in ("template", "leaderTemplate", "workerTemplate", "leaderTemplatePatch",
                     "workerTemplatePatch") and isinstance(v, dict):
                yield p, v, k.endswith("Patch")
            else:
                yield from templates(v, p)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from templates(v, f"{path}/{i}")


def check_doc(doc, where, ns=None):
    api, kind = doc.get("apiVersion"), doc.get("kind")
    CHECKED[0] += 1
    if (api, kind) in KINDS:
        read(doc, KINDS[(api, kind)], where)
    elif (api, kind) in CUSTOM:
        read(doc.get("metadata"), "V1ObjectMeta", f"{where} metadata")
    else:
        fail(where, f"{api} {kind}: no API type of a kind npulaunch writes")
        return
    if ns is not None and kind != "Namespace" and (doc.get("metadata") or {}).get("namespace") != ns:
        fail(where, f"{kind} {doc['metadata'].get('name')}: not in the namespace {ns}")
    for path, t, patch in templates(doc.get("spec") or {}):
        CHECKED[1] += 1
        read(t, "V1PodTemplateSpec", f"{where} {path}")
        if not patch:
            guaranteed(t.get("spec") or {}, f"{where} {path}")


def bundles(dirs):
    for d in dirs:
        if os.path.exists(os.path.join(d, "kustomization.yaml")):
            yield d
        else:
            yield from sorted(os.path.dirname(k) for k in glob.glob(os.path.join(d, "*", "kustomization.yaml")))


def main(argv):
    kubectl = None
    if argv[:1] == ["--kubectl"]:
        kubectl, argv = argv[1], argv[2:]
    else:
        kubectl = "/usr/bin/kubectl" if os.access("/usr/bin/kubectl", os.X_OK) else shutil.which("kubectl")
    if not argv:
        sys.exit(__doc__)
    if not kubectl:
        print("skip: kubectl kustomize: no kubectl here (/usr/bin/kubectl or on PATH)")
    n = built = 0
    for b in bundles(argv):
        n += 1
        kust = yaml.load(open(os.path.join(b, "kustomization.yaml")), Loader=Loader)
        for f in sorted(glob.glob(os.path.join(b, "*.yaml"))):
            if os.path.basename(f) == "kustomization.yaml":
                continue
            for i, doc in enumerate(yaml.load_all(open(f, encoding="utf-8"), Loader=Loader)):
                check_doc(doc, f"{f}#{i}")
        if kubectl:
            r = subprocess.run([kubectl, "kustomize", b], capture_output=True, text=True)
            if r.returncode:
                fail(b, f"kubectl kustomize: {r.stderr.strip()[:800]}")
                continue
            built += 1
            for i, doc in enumerate(yaml.load_all(r.stdout, Loader=Loader)):
                check_doc(doc, f"{b} (kustomized)#{i}", kust.get("namespace"))
    if n == 0:
        fail(" ".join(argv), "no bundle (kustomization.yaml) there")
    print(f"{n} bundles, {CHECKED[0]} documents, {CHECKED[1]} pod templates read by the API types"
          f"{f', {built} built by kubectl kustomize' if kubectl else ''}; {len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
