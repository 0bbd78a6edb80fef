#!/usr/bin/env bash
# Screenshots of the documentation site for the README and reviews: builds it (strict),
# serves site/ on 127.0.0.1 and has headless chromium take the start page and one guide
# page into docs/images/site-home.png and docs/images/site-guide.png. Chromium runs with
# everything that would reach the network turned off, so the pictures show what the site
# renders offline.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${BIN:-.venv/bin}"

if ! command -v chromium >/dev/null; then
    apt-get install -y chromium
fi

NO_MKDOCS_2_WARNING=1 "$BIN/mkdocs" build --strict --quiet -d site
port="$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$BIN/python" -m http.server "$port" --bind 127.0.0.1 --directory site >/dev/null 2>&1 &
server=$!
profile="$(mktemp -d)"
trap 'kill "$server"; rm -rf "$profile"' EXIT
for _ in $(seq 50); do
    "$BIN/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
    sleep 0.1
done

shot() {   # URL path, output file
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --virtual-time-budget=3000 --hide-scrollbars \
        --screenshot="$2" --window-size=1280,900 "http://127.0.0.1:$port/$1" 2>/dev/null
    echo "docs-shots: $2"
}
shot "" docs/images/site-home.png
shot "guides/disaster-recovery/" docs/images/site-guide.png
