# Sourced by the build scripts: apt_install PACKAGE... installs the Debian packages that are
# missing and refreshes the package lists only if the install fails.
# The sourcing script defines `say` (its log line) and SUDO ("" as root, else "sudo").
apt_install() {
    local missing=() package status
    for package in "$@"; do
        status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
        [ "$status" = "install ok installed" ] || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; then
        say "install failed with the current package lists: running apt-get update and retrying"
        $SUDO apt-get update -qq
        $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
}
