#!/usr/bin/env bash
# Re-fetches the documentation site's diagram library (Mermaid) from the npm registry into
# docs/assets/javascripts/ and checks it is the reviewed build.
# The file is committed: the site builds and renders its diagrams offline (mkdocs-material
# would otherwise load Mermaid from a CDN). Run this only to move to another version, then
# update VERSION and SHA256 here.
set -euo pipefail

VERSION="11.17.2"
SHA256="581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8"
target="$(cd "$(dirname "$0")/.." && pwd)/docs/assets/javascripts"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "mermaid@$VERSION" >/dev/null && tar xzf "mermaid-$VERSION.tgz")
echo "$SHA256  $work/package/dist/mermaid.min.js" | sha256sum --check --quiet
cp "$work/package/dist/mermaid.min.js" "$target/mermaid.min.js"
cp "$work/package/LICENSE" "$target/mermaid.LICENSE"
echo "vendor-docs: mermaid $VERSION in $target"
