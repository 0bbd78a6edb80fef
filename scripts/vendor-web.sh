#!/usr/bin/env bash
# Re-fetches the web view's graph library from the npm registry into
# services/segflow/observability/web/vendor/ and checks it is the reviewed build.
# The file is committed (the web view works offline and from a plain pip install);
# run this only to move to another version, then update VERSION and SHA256 here.
set -euo pipefail

VERSION="3.35.0"
SHA256="71fa9ebec21a7ca2c40cff6aacc30d1f6464e363662ad4b2c197e1adc770cd94"
target="$(cd "$(dirname "$0")/.." && pwd)/services/segflow/observability/web/vendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "cytoscape@$VERSION" >/dev/null && tar xzf "cytoscape-$VERSION.tgz")
echo "$SHA256  $work/package/dist/cytoscape.min.js" | sha256sum --check --quiet
cp "$work/package/dist/cytoscape.min.js" "$target/cytoscape.min.js"
cp "$work/package/LICENSE" "$target/cytoscape.LICENSE"
echo "vendor-web: cytoscape $VERSION in $target"
