#!/usr/bin/env bash
# Re-fetches a vendored JavaScript library from the npm registry and checks it is the
# reviewed build. The files are committed so that nothing is loaded from outside: the web
# view works offline and from a plain pip install, and the documentation site renders its
# diagrams without a CDN. Run this only to move a library to another version, then update
# its line in the table below (version and the SHA-256 of its dist file).
#
#   scripts/vendor-js.sh mermaid|cytoscape
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
# name        version   sha256 of dist/<name>.min.js                                       target
table="
mermaid     11.17.2   581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8   docs/assets/javascripts
cytoscape   3.35.0    71fa9ebec21a7ca2c40cff6aacc30d1f6464e363662ad4b2c197e1adc770cd94   services/segflow/observability/web/vendor
"
name="${1:?usage: scripts/vendor-js.sh mermaid|cytoscape}"
read -r _ version sha256 target < <(awk -v n="$name" '$1 == n' <<<"$table") \
    || { echo "vendor-js: unknown library '$name' (known: mermaid, cytoscape)" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "$name@$version" >/dev/null && tar xzf "$name-$version.tgz")
echo "$sha256  $work/package/dist/$name.min.js" | sha256sum --check --quiet
cp "$work/package/dist/$name.min.js" "$root/$target/$name.min.js"
cp "$work/package/LICENSE" "$root/$target/$name.LICENSE"
echo "vendor-js: $name $version in $root/$target"
