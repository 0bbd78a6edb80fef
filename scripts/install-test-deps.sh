#!/usr/bin/env bash
# Installs the system packages the tests need (Debian): redis-server, chromium,
# chromium-driver and prometheus.
#
# Idempotent: does nothing but check when everything is already there. The tests start
# their own redis-server on a free loopback port, so the Debian service must not be left
# running: if one is running (started by the package install or earlier), it is stopped.
set -euo pipefail

log() { echo "install-test-deps: $*"; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        log "not root and no sudo: cannot install packages" >&2
        exit 1
    fi
fi

# Debian's redis service runs as user "redis"; the tests' own servers never do.
service_pids() {
    if id redis >/dev/null 2>&1; then
        pgrep -u redis -x redis-server || true
    fi
}

redis_version() { redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p'; }

# redis-server for the state store; chromium and chromium-driver for the web view's browser
# test; prometheus for the test that scrapes a running job with the dashboard's queries.
PACKAGES=(redis-server chromium chromium-driver prometheus)

missing=()
for package in "${PACKAGES[@]}"; do
    # Captured before grepping: with pipefail, `cmd | grep -q` can fail on SIGPIPE.
    status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
    [ "$status" = "install ok installed" ] || missing+=("$package")
done

install_missing() {
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [ "${#missing[@]}" -eq 0 ]; then
    log "already installed: ${PACKAGES[*]} (redis $(redis_version))"
else
    policy="$(apt-cache policy "${missing[@]}" 2>/dev/null || true)"
    if [ "$(grep -c 'Candidate: [0-9]' <<<"$policy" || true)" -lt "${#missing[@]}" ]; then
        log "running apt-get update (not all of ${missing[*]} are in the package lists)"
        $SUDO apt-get update -qq
        log "installing ${missing[*]}"
        install_missing
    else
        log "installing ${missing[*]}"
        if ! install_missing; then
            log "install failed with the current package lists: running apt-get update and retrying"
            $SUDO apt-get update -qq
            install_missing
        fi
    fi
    log "installed ${missing[*]} (redis $(redis_version))"
fi

# Debian's prometheus package starts its own service (and node exporter) where an init
# system exists; the tests run their own on free loopback ports.
if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
    for unit in prometheus prometheus-node-exporter; do
        if systemctl is-active --quiet "$unit" 2>/dev/null; then
            log "stopping and disabling the packaged $unit service"
            $SUDO systemctl stop "$unit" || true
            $SUDO systemctl disable "$unit" >/dev/null 2>&1 || true
        fi
    done
fi

# Stop the packaged service if it runs. systemctl/service only where an init system exists.
if [ -n "$(service_pids)" ]; then
    if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1; then
        log "stopping and disabling the redis-server systemd service"
        $SUDO systemctl stop redis-server || true
        $SUDO systemctl disable redis-server >/dev/null 2>&1 || true
    elif command -v service >/dev/null 2>&1; then
        log "stopping the redis-server init service"
        $SUDO service redis-server stop >/dev/null 2>&1 || true
    fi
fi
pids="$(service_pids)"
if [ -n "$pids" ]; then
    for pid in $pids; do
        log "stopping the packaged redis-server process $pid"
        $SUDO kill "$pid" 2>/dev/null || true
    done
    for _ in $(seq 50); do
        alive=""
        for pid in $pids; do
            if kill -0 "$pid" 2>/dev/null; then alive="$alive $pid"; fi
        done
        [ -z "$alive" ] && break
        sleep 0.1
    done
    for pid in $alive; do
        log "redis-server process $pid did not stop: killing it"
        $SUDO kill -9 "$pid" 2>/dev/null || true
    done
else
    log "no packaged redis-server service is running"
fi
log "done"
