#!/usr/bin/env bash
# Installs Quench as a service: the release binaries (static Swift runtime),
# the systemd units, the udev rule, the configuration file
# /etc/quench/quench.toml (only when there is none: an edited one is kept);
# on a real system also the `quench` user, and enables the service.
# Idempotent: a second run changes nothing.
#
#   sudo scripts/install.sh                      # build, install under /usr/local, enable
#   DESTDIR=/tmp/root scripts/install.sh --no-build --bin-dir .build/release
#                                                # into a scratch root: files only
#
# Options: --prefix DIR (default /usr/local), --no-build (use --bin-dir's binaries,
# default .build/release), --bin-dir DIR, --rfkill-unblock (also the opt-in rule
# that lifts a soft rfkill block on Bluetooth adapters), --no-enable.
# DESTDIR (environment): install into that root; no user, no systemctl, no udevadm.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
build=yes
bin_dir=.build/release
rfkill=no
enable=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --no-build) build=no; shift ;;
        --bin-dir) bin_dir="${2:?--bin-dir needs a directory}"; shift 2 ;;
        --rfkill-unblock) rfkill=yes; shift ;;
        --no-enable) enable=no; shift ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done
root="${DESTDIR:-}"

if [ "$build" = yes ]; then
    export PATH="/opt/swift/usr/bin:$PATH"
    swift build -c release --static-swift-stdlib --product quench
    swift build -c release --static-swift-stdlib --product quenchd
    swift build -c release --static-swift-stdlib --product quench-web
fi
for b in quench quenchd quench-web; do
    [ -x "$bin_dir/$b" ] || { echo "install.sh: no $bin_dir/$b (build it, or give --bin-dir)" >&2; exit 1; }
done

# install(1) rewrites a file only to put the same bytes and mode back: idempotent.
put() { # mode source target
    install -D -m "$1" "$2" "$root$3"
}
put 755 "$bin_dir/quench" "$prefix/bin/quench"
put 755 "$bin_dir/quenchd" "$prefix/bin/quenchd"
put 755 "$bin_dir/quench-web" "$prefix/bin/quench-web"

# The units name the binaries where they were installed.
units=$(mktemp -d)
trap 'rm -rf "$units"' EXIT
# quench-mqtt and quench-web are installed, not enabled: each needs its [mqtt] or [web] settings first.
for unit in quench.service quench-remind.service quench-remind.timer quench-mqtt.service quench-web.service; do
    sed "s#/usr/local/bin/#$prefix/bin/#g" "systemd/$unit" > "$units/$unit"
    put 644 "$units/$unit" "/etc/systemd/system/$unit"
done
put 644 udev/70-quench.rules /etc/udev/rules.d/70-quench.rules
if [ "$rfkill" = yes ]; then
    put 644 udev/71-quench-rfkill-unblock.rules /etc/udev/rules.d/71-quench-rfkill-unblock.rules
fi
# The configuration is the administrator's once it is there: never replaced.
if [ -e "$root/etc/quench/quench.toml" ]; then
    echo "install.sh: kept $root/etc/quench/quench.toml as it is"
else
    put 644 config/quench.toml /etc/quench/quench.toml
fi

if [ -n "$root" ]; then
    echo "install.sh: installed into $root$prefix and $root/etc (DESTDIR: no user, no systemctl, no udevadm)"
    exit 0
fi
if ! getent passwd quench >/dev/null; then
    useradd --system --user-group --no-create-home --home-dir /var/lib/quench --shell /usr/sbin/nologin quench
fi
if command -v udevadm >/dev/null && [ -d /run/udev ]; then
    udevadm control --reload
    udevadm trigger --action=add --subsystem-match=bluetooth || true
fi
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    if [ "$enable" = yes ]; then
        systemctl enable --now quench.service quench-remind.timer
    fi
fi
echo "install.sh: installed; \`sudo quench doctor --db /var/lib/quench/quench.sqlite\` checks it"
