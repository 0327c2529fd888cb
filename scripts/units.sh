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

# copy_remind_dropins ROOT: quench-carer.service (2026-11-30) runs the carers' alerts that were
# quench-remind.service's first command, so an administrator's drop-ins for that unit (`systemctl
# edit quench-remind`: a hub's QUENCH_DB, PrivateNetwork=) applied to them. They are copied to the
# new unit once, when it has none of its own; not one that changes ExecStart= (it would run the
# reminders there), which is said instead. POSIX sh: the package's postinst carries it too.
copy_remind_dropins() {
    from="$1/etc/systemd/system/quench-remind.service.d"
    to="$1/etc/systemd/system/quench-carer.service.d"
    if [ ! -d "$from" ] || [ -e "$to" ]; then return 0; fi
    if grep -qs '^[[:space:]]*ExecStart' "$from"/*.conf; then
        echo "quench: $from changes ExecStart=; the carers' alerts now run in quench-carer.service: give it the same settings (systemctl edit quench-carer)" >&2
        return 0
    fi
    for f in "$from"/*.conf; do
        [ -f "$f" ] || return 0
    done
    mkdir -p "$to" && cp -p "$from"/*.conf "$to"/ &&
        echo "quench: your drop-ins for quench-remind.service now apply to quench-carer.service too (the carers' alerts run there)" >&2
}
