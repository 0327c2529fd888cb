#!/usr/bin/env bash
# Removes what scripts/install.sh installed. The intake history in
# /var/lib/quench and the configuration /etc/quench/quench.toml stay unless
# --purge, which also removes the `quench` user and the web page's access token
# (in /var/lib/quench, or wherever `token_file` under [web] puts it).
#
#   sudo scripts/uninstall.sh [--prefix DIR] [--purge]
#   DESTDIR=/tmp/root scripts/uninstall.sh       # from a scratch root
set -euo pipefail
# The units to remove: every one in systemd/ (scripts/units.sh).
source "$(dirname "$0")/units.sh"

prefix=/usr/local
purge=no
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --purge) purge=yes; shift ;;
        -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
        *) echo "uninstall.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done
root="${DESTDIR:-}"

if [ -z "$root" ] && [ -d /run/systemd/system ]; then
    # shellcheck disable=SC2046
    systemctl disable --now $(units_all) 2>/dev/null || true
fi
# The access token is a secret: with --purge it goes, also when [web] token_file
# keeps it outside /var/lib/quench. Asked of quench itself (the file's parser,
# not a guess at TOML), so before the binary goes.
token_file=
if [ "$purge" = yes ] && [ -x "$root$prefix/bin/quench" ] && [ -f "$root/etc/quench/quench.toml" ]; then
    token_file=$(QUENCH_CONFIG="$root/etc/quench/quench.toml" "$root$prefix/bin/quench" config show 2>/dev/null \
        | awk '$1 == "web.token_file" && substr($2, 1, 1) == "/" { print $2 }') || true
fi
rm -f "$root$prefix/bin/quench" "$root$prefix/bin/quenchd" "$root$prefix/bin/quench-web" \
      "$root/etc/udev/rules.d/70-quench.rules" "$root/etc/udev/rules.d/71-quench-rfkill-unblock.rules"
for unit in $(units_all); do rm -f "$root/etc/systemd/system/$unit"; done
if [ -z "$root" ]; then
    [ -d /run/systemd/system ] && systemctl daemon-reload
    command -v udevadm >/dev/null && [ -d /run/udev ] && udevadm control --reload
fi
if [ "$purge" = yes ]; then
    rm -rf "$root/var/lib/quench"
    if [ -n "$token_file" ]; then rm -f "$root$token_file"; fi
    rm -f "$root/etc/quench/quench.toml"
    rmdir "$root/etc/quench" 2>/dev/null || true
    if [ -z "$root" ] && getent passwd quench >/dev/null; then userdel quench; fi
    echo "uninstall.sh: removed, with the history and the web access token in $root/var/lib/quench${token_file:+, $root$token_file} and $root/etc/quench/quench.toml"
else
    echo "uninstall.sh: removed; the history in $root/var/lib/quench and the configuration $root/etc/quench/quench.toml stay (--purge removes them)"
fi
