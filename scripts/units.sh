# Sourced by install.sh, uninstall.sh and build-deb.sh: which units systemd/ holds and what
# installing them does, read from the unit files themselves (a new unit there is packaged,
# installed and removed without a list to update).
#
#   units_all          every unit file in systemd/ (timers first: stopped before what they start)
#   units_enabled      those enabled on the first install: an [Install] section and no
#                      `X-Quench-Enable=no` (systemd ignores X- keys)
#   units_optional     an [Install] section and `X-Quench-Enable=no`: installed, not enabled
#                      (each needs settings first); an administrator's enabling is kept
#   units_started      started on the first install: the enabled timers (a service waits for
#                      the boot, a pairing or its settings: docs/service.md)
# Units without [Install] (a timer's service) are started by their timer only.

units_dir="$(dirname "${BASH_SOURCE[0]}")/../systemd"

units_all() {
    local f LC_ALL=C  # the same order everywhere: quench-*.service before quench.service
    for f in "$units_dir"/*.timer "$units_dir"/*.path "$units_dir"/*.socket "$units_dir"/*.service; do
        [ -f "$f" ] && basename "$f"
    done
    return 0
}

# unit_kind NAME: "enabled", "optional" or "static".
unit_kind() {
    awk '
        /^[ \t]*\[/ { section = $0; gsub(/[ \t\[\]]/, "", section); if (section == "Install") install = 1; next }
        section == "Install" && /^[ \t]*X-Quench-Enable[ \t]*=[ \t]*no[ \t]*$/ { optout = 1 }
        END { print install ? (optout ? "optional" : "enabled") : "static" }
    ' "$units_dir/$1"
}

units_of_kind() {
    local u
    for u in $(units_all); do
        [ "$(unit_kind "$u")" = "$1" ] && echo "$u"
    done
    return 0
}
units_enabled() { units_of_kind enabled; }
units_optional() { units_of_kind optional; }
units_started() { units_enabled | grep '\.timer$' || true; }
