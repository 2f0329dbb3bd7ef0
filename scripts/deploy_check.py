"""Checks of the deployment files that the linters do not make, for
scripts/deploy-check.sh (run with its virtual environment's Python, which
has PyYAML through checkov).

  deploy_check.py names FILE...
      Every IMAGO_* and AWS_* variable the files name is one imago reads:
      a setting of Sources/ImagoServer/Configuration/ (each has a flag and
      an IMAGO_* variable), a variable read there directly (IMAGO_KEY,
      IMAGO_SALT, IMAGO_ADMIN_TOKEN), or AWS's, read in
      Sources/ImagoServer/Origins/ObjectStorage.swift.

  deploy_check.py compare RENDERED MANIFEST...
      The chart rendered with ci/manifests-values.yaml (RENDERED) and the
      plain manifests are the same objects, but for what only Helm adds
      (its labels, the checksum and checkov annotations), the Secret's
      values (placeholders on both sides) and the plain Deployment's
      optional IMAGO_THUMBOR_KEY reference.

Exits 1 with one line per difference.
"""

import glob
import os
import re
import sys

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

# Setting kinds whose variable is derived from the flag: IMAGO_ + FLAG in
# capitals, dashes as underscores (ServeConfiguration.variable(_:)).
DERIVED = re.compile(r'\b(?:text|list|switchSetting|count|seconds|mebibytes|number|duration|choice)\(\s*"([a-z0-9-]+)"')
EXPLICIT = re.compile(r'variable:\s*"((?:IMAGO)_[A-Z0-9_]+)"')
LIST_WITH_VARIABLE = re.compile(r'\blist\(\s*"([a-z0-9-]+)",\s*"[^"]*",\s*variable:\s*"(IMAGO_[A-Z0-9_]+)"')
READ_DIRECTLY = re.compile(r'environment\["((?:IMAGO|AWS)_[A-Z0-9_]+)"\]')
NAMED = re.compile(r"\b((?:IMAGO|AWS)_[A-Z0-9_]*[A-Z0-9])\b")


def known_variables():
    names = set()
    sources = glob.glob(os.path.join(ROOT, "Sources/ImagoServer/Configuration/*.swift"))
    sources.append(os.path.join(ROOT, "Sources/ImagoServer/Origins/ObjectStorage.swift"))
    for path in sources:
        text = open(path, encoding="utf-8").read()
        renamed = {flag for flag, _ in LIST_WITH_VARIABLE.findall(text)}
        names.update("IMAGO_" + flag.upper().replace("-", "_") for flag in DERIVED.findall(text) if flag not in renamed)
        names.update(EXPLICIT.findall(text))
        names.update(READ_DIRECTLY.findall(text))
    return names


def check_names(paths):
    known = known_variables()
    if len(known) < 40:
        return [f"found only {len(known)} variables in Sources/ImagoServer/Configuration: has the settings table moved?"]
    problems = []
    for path in paths:
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            for name in NAMED.findall(line):
                if name not in known:
                    problems.append(f"{os.path.relpath(path)}:{number}: {name} is no variable imago reads")
    return problems


HELM_LABELS = {"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"}


def load(paths):
    objects = {}
    for path in paths:
        for document in yaml.safe_load_all(open(path, encoding="utf-8")):
            if document:
                objects[(document["kind"], document["metadata"]["name"])] = document
    return objects


def normalized(document):
    metadata = document["metadata"]
    for label in HELM_LABELS:
        metadata.get("labels", {}).pop(label, None)
    annotations = {k: v for k, v in metadata.get("annotations", {}).items() if not k.startswith("checkov.io/")}
    metadata.pop("annotations", None)
    if annotations:
        metadata["annotations"] = annotations
    if document["kind"] == "Secret":
        document["stringData"] = sorted(document.get("stringData", {}))
    if document["kind"] == "Deployment":
        template = document["spec"]["template"]
        pod_annotations = {k: v for k, v in template["metadata"].get("annotations", {}).items() if not k.startswith("checksum/")}
        template["metadata"]["annotations"] = pod_annotations
        for container in template["spec"]["containers"]:
            for variable in container.get("env", []):
                variable.get("valueFrom", {}).get("secretKeyRef", {}).pop("optional", None)
            container["env"] = sorted(container.get("env", []), key=lambda variable: variable["name"])
    return document


def differences(path, plain, chart):
    if isinstance(plain, dict) and isinstance(chart, dict):
        for key in sorted(set(plain) | set(chart)):
            if key not in chart:
                yield f"{path}.{key}: only in the plain manifests"
            elif key not in plain:
                yield f"{path}.{key}: only in the chart"
            else:
                yield from differences(f"{path}.{key}", plain[key], chart[key])
    elif isinstance(plain, list) and isinstance(chart, list) and len(plain) == len(chart):
        for index, (a, b) in enumerate(zip(plain, chart)):
            yield from differences(f"{path}[{index}]", a, b)
    elif str(plain) != str(chart):
        yield f"{path}: plain {plain!r}, chart {chart!r}"


def compare(rendered, manifests):
    plain = load(manifests)
    chart = load([rendered])
    problems = []
    for key in sorted(set(plain) | set(chart)):
        if key not in chart:
            problems.append(f"{key[0]} {key[1]}: only in the plain manifests")
        elif key not in plain:
            problems.append(f"{key[0]} {key[1]}: only in the chart")
        else:
            a, b = normalized(plain[key]), normalized(chart[key])
            if key[0] == "Deployment":
                # The plain manifests let a thumbor key in the Secret turn thumbor on.
                for container in a["spec"]["template"]["spec"]["containers"]:
                    container["env"] = [v for v in container["env"] if v["name"] != "IMAGO_THUMBOR_KEY"]
            problems.extend(f"{key[0]} {key[1]}: {line}" for line in differences("", a, b))
    return problems


def main(arguments):
    if len(arguments) >= 2 and arguments[0] == "names":
        problems = check_names(arguments[1:])
    elif len(arguments) >= 3 and arguments[0] == "compare":
        problems = compare(arguments[1], arguments[2:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
