#!/usr/bin/env bash
# Builds the images of images/*.Dockerfile without a Docker engine, and unpacks each into a
# runtime bundle (rootfs + config) that scripts/cluster/sandbox runs. Why each step is the
# way it is: docs/architecture/images.md.
#
#   scripts/images/build.sh [--manifest FILE] [IMAGE...]     (IMAGE: engine, operator, spark; default all)
#
# 1. a base image from Debian's packages (mmdebstrap, bookworm, Python 3.11 in a virtualenv at
#    /usr/local, where the official python image keeps its own), imported with buildah;
# 2. each Dockerfile built on it with `buildah bud --isolation chroot --build-arg BASE=...`;
# 3. each image pushed to an OCI layout and unpacked with umoci into a bundle.
# Everything is cached under $SEGFLOW_IMAGES_CACHE (default ~/.cache/segflow/images), keyed
# by a hash of the step's inputs: a second run with unchanged inputs only hashes and checks.
# --manifest FILE writes {"image": {"bundle": DIR, "reference": REF}, ...}.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${SEGFLOW_IMAGES_CACHE:-$HOME/.cache/segflow/images}"
KEEP_BUNDLES=2          # earlier builds kept per image (see unpack_image)
# overlay is the faster of the two storage drivers here (docs/architecture/images.md has the
# numbers); vfs works wherever overlay mounts are refused.
DRIVER="${SEGFLOW_IMAGES_STORAGE:-overlay}"
STORAGE=(--root "$CACHE/storage/$DRIVER" --runroot "$CACHE/run/$DRIVER" --storage-driver "$DRIVER")
SUITE=bookworm
BASE_PACKAGES=python3,python3-venv,python3-wheel-whl,passwd,ca-certificates
ALL_IMAGES=(engine operator spark)
say() { echo "images: $*" >&2; }

manifest=""
images=()
while [ $# -gt 0 ]; do
    case "$1" in
        --manifest) manifest="$2"; shift 2 ;;
        engine|operator|spark) images+=("$1"); shift ;;
        *) say "unknown argument '$1': expected --manifest FILE or an image name (${ALL_IMAGES[*]})"; exit 2 ;;
    esac
done
[ ${#images[@]} -gt 0 ] || images=("${ALL_IMAGES[@]}")

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    # buildah's chroot isolation, umoci's unpack with real owners and the sandbox's namespaces
    # all need root.
    say "not root: building and running images needs root (mount and network namespaces)"
    exit 1
fi

# shellcheck source=../lib/apt.sh
source "$ROOT/scripts/lib/apt.sh"

# A hash of files and directories (paths and contents), leaving out what .dockerignore leaves
# out of the build context.
hash_inputs() {
    (cd "$ROOT" && find "$@" -type f ! -path '*/__pycache__/*' ! -path '*.egg-info/*' -print0 \
        | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

# Removes the images of repository $1 other than reference $2 (earlier inputs' builds), so
# that the cache holds one build of each image.
prune_others() {
    buildah "${STORAGE[@]}" images --format '{{.Name}}:{{.Tag}}' | { grep "^$1:" || true; } | { grep -vx "$2" || true; } \
        | while read -r old; do
            buildah "${STORAGE[@]}" rmi "$old" >/dev/null 2>&1 && say "removed the earlier build $old"
          done
}

image_exists() { buildah "${STORAGE[@]}" inspect --type image "$1" >/dev/null 2>&1; }

image_size() { buildah "${STORAGE[@]}" images --noheading --format '{{.Size}}' "$1" 2>/dev/null | head -1; }

# The base image: Debian bookworm's minbase with Python 3.11 in a virtualenv at /usr/local, so
# that `pip` and the scripts it installs are on the PATH at the same places as in the official
# python image, with pip, setuptools and wheel as there (Debian's wheels of them: without
# wheel, pip 23 cannot build pyspark's sdist). Documentation and locales are left out, as the official slim images do. The
# base is keyed by this recipe, so editing the rest of this script does not rebuild it.
BASE_RECIPE=(
    --variant=minbase --include="$BASE_PACKAGES" --format=tar
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/locale/*'
    --customize-hook='chroot "$1" python3 -m venv /usr/local'
    --customize-hook='chroot "$1" sh -c "pip install --quiet --no-index --no-cache-dir /usr/share/python-wheels/wheel-*.whl"'
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin'
)
BASE_SOURCES=(
    "deb http://deb.debian.org/debian $SUITE main"
    "deb http://deb.debian.org/debian $SUITE-updates main"
    "deb http://deb.debian.org/debian-security $SUITE-security main"
)
BASE_CONFIG=(--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8
             --cmd python3 --label org.opencontainers.image.base.name="debian:$SUITE")

build_base() {
    local key reference tarball container started=$SECONDS
    key="$(printf '%s\n' "$SUITE" "${BASE_RECIPE[@]}" "${BASE_SOURCES[@]}" "${BASE_CONFIG[@]}" \
        | sha256sum | cut -c1-16)"
    reference="localhost/segflow/base:$SUITE-$key"
    BASE="$reference"
    if image_exists "$reference"; then
        say "base $reference: cached ($(image_size "$reference"))"
        return
    fi
    tarball="$CACHE/base/$SUITE-$key.tar"
    mkdir -p "$CACHE/base"
    if [ ! -s "$tarball" ]; then
        say "base: mmdebstrap $SUITE with $BASE_PACKAGES (a minute or two)"
        mmdebstrap --quiet "${BASE_RECIPE[@]}" "$SUITE" "$tarball.partial" "${BASE_SOURCES[@]}"
        mv "$tarball.partial" "$tarball"
    fi
    say "base: importing $(du -h "$tarball" | cut -f1) into $DRIVER storage"
    container="$(buildah "${STORAGE[@]}" from scratch)"
    buildah "${STORAGE[@]}" add --quiet "$container" "$tarball" / >/dev/null
    buildah "${STORAGE[@]}" config "${BASE_CONFIG[@]}" "$container"
    buildah "${STORAGE[@]}" commit --quiet --rm "$container" "$reference" >/dev/null
    rm -f "$tarball"
    say "base $reference: built in $((SECONDS - started)) s ($(image_size "$reference"))"
}

# --layers keeps each step's layer, so a change to examples/ alone rebuilds one step. The
# machine's CA bundle is mounted into the RUN steps only (over the file of the same path, so
# nothing of it is committed): where HTTPS goes through an intercepting proxy, pip and apt
# (Debian's pip reads the system bundle) need it.
BUILD_FLAGS=(--layers --isolation chroot
             --volume "${SEGFLOW_IMAGES_CA:-/etc/ssl/certs/ca-certificates.crt}:/etc/ssl/certs/ca-certificates.crt:ro")

# One Dockerfile built on the base: its reference is keyed by the base, the build's flags and
# the build context the Dockerfile copies from.
build_image() {
    local name="$1" key reference started=$SECONDS
    key="$(printf '%s\n' "$BASE" "${BUILD_FLAGS[@]}" "$(hash_inputs "images/$name.Dockerfile" pyproject.toml README.md \
        requirements.lock services operator examples)" | sha256sum | cut -c1-16)"
    reference="localhost/segflow/$name:$key"
    REFERENCE="$reference"
    if image_exists "$reference"; then
        say "$name $reference: cached ($(image_size "$reference"))"
        return
    fi
    say "$name: buildah bud images/$name.Dockerfile on $BASE (several minutes; its steps follow)"
    # --force-rm: a failed step leaves no working container mounted behind (not in the key:
    # it changes nothing in the image).
    (cd "$ROOT" && buildah "${STORAGE[@]}" bud "${BUILD_FLAGS[@]}" --force-rm \
        --build-arg BASE="$BASE" -f "images/$name.Dockerfile" -t "$reference" . 2>&1 \
        | sed -u "s/^/images: $name: /" >&2)
    say "$name $reference: built in $((SECONDS - started)) s ($(image_size "$reference"))"
}

# The image as a runtime bundle: rootfs/ and config.json from umoci, and image.json (the
# image's own config: entrypoint, cmd, env, user, working directory) for the sandbox.
unpack_image() {
    local name="$1" reference="$2" tag bundle layout started=$SECONDS
    tag="${reference##*:}"
    bundle="$CACHE/bundles/$name-$tag"
    BUNDLE="$bundle"
    if [ -f "$bundle/image.json" ]; then
        say "$name bundle $bundle: cached"
        return
    fi
    layout="$CACHE/oci/$name"
    rm -rf "$layout"
    mkdir -p "$CACHE/bundles" "$layout"
    say "$name: pushing to the OCI layout $layout and unpacking"
    buildah "${STORAGE[@]}" push --quiet "$reference" "oci:$layout:$tag" >/dev/null
    rm -rf "$bundle.partial"
    umoci unpack --image "$layout:$tag" "$bundle.partial" >/dev/null
    buildah "${STORAGE[@]}" inspect --type image "$reference" \
        | python3 -c 'import json, sys; json.dump(json.load(sys.stdin)["OCIv1"]["config"], sys.stdout, indent=1)' \
        > "$bundle.partial/image.json"
    # Bundles of earlier inputs: the newest KEEP_BUNDLES stay, since a cluster of another
    # checkout (or of this one, started before an edit) may still run pods from them; older
    # ones go. The layout served only this unpacking (the image stays in buildah's storage).
    find "$CACHE/bundles" -maxdepth 1 -name "$name-*" ! -name "$name-$tag*" ! -name '*.partial' -printf '%T@ %p\n' \
        | sort -rn | tail -n +$((KEEP_BUNDLES + 1)) | cut -d' ' -f2- | xargs -r rm -rf
    rm -rf "$layout"
    mv "$bundle.partial" "$bundle"
    say "$name bundle $bundle: unpacked in $((SECONDS - started)) s ($(du -sh "$bundle/rootfs" | cut -f1))"
}

apt_install mmdebstrap buildah umoci uidmap
mkdir -p "$CACHE"
# One build at a time: pytest-xdist's workers and helpers' shells may all ask for the images.
exec 9>"$CACHE/lock"
if ! flock --nonblock 9; then
    say "waiting for another build ($CACHE/lock)"
    flock 9
fi

build_base
prune_others localhost/segflow/base "$BASE"
entries=()
sizes=""
for name in "${images[@]}"; do
    build_image "$name"
    prune_others "localhost/segflow/$name" "$REFERENCE"
    unpack_image "$name" "$REFERENCE"
    sizes+=", $name $(image_size "$REFERENCE")"
    entries+=("\"$name\": {\"bundle\": \"$BUNDLE\", \"reference\": \"$REFERENCE\"}")
done
if [ -n "$manifest" ]; then
    (IFS=,; echo "{${entries[*]}}") > "$manifest"
fi
say "sizes: base $(image_size "$BASE")${sizes}"
