#!/usr/bin/env bash
# Installs Quench as a service from a source checkout: the release binaries (static Swift
# runtime), every unit in systemd/, the udev rule, the configuration file
# /etc/quench/quench.toml (only when there is none: an edited one is kept); on a real system
# also the `quench` user. Units are enabled when first installed only (an administrator's
# `systemctl disable` stays on a second run), and what runs is restarted on the new binaries.
# The Debian package (scripts/build-deb.sh) is the other way, and needs no Swift on the Pi.
#
#   sudo scripts/install.sh                      # build (as you, not root), install under /usr/local
#   DESTDIR=/tmp/root scripts/install.sh --no-build --bin-dir .build/release
#                                                # into a scratch root: files only
#
# Options: --prefix DIR (default /usr/local), --no-build (use --bin-dir's binaries,
# default .build/release), --build-only (build, install nothing), --jobs N (compiler processes
# side by side: fewer need less memory, docs/service.md), --bin-dir DIR, --rfkill-unblock (also the opt-in rule
# that lifts a soft rfkill block on Bluetooth adapters), --no-enable.
# DESTDIR (environment): install into that root; no user, no systemctl, no udevadm.
# Under sudo the build runs as $SUDO_USER with their login PATH (where swiftly puts `swift`),
# so .build stays theirs.
set -euo pipefail
cd "$(dirname "$0")/.."

prefix=/usr/local
build=yes
bin_dir=.build/release
rfkill=no
enable=yes
jobs=
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --no-build) build=no; shift ;;
        --build-only) build=only; shift ;;
        --jobs) jobs="${2:?--jobs needs a number}"; [[ "$jobs" =~ ^[1-9][0-9]?$ ]] || { echo "install.sh: --jobs $jobs: not a number from 1 to 99" >&2; exit 64; }; shift 2 ;;
        --bin-dir) bin_dir="${2:?--bin-dir needs a directory}"; shift 2 ;;
        --rfkill-unblock) rfkill=yes; shift ;;
        --no-enable) enable=no; shift ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done
root="${DESTDIR:-}"

if [ "$build" != no ]; then
    # The three executables with the Swift runtime linked in: nothing to install on the target.
    # swiftly's default place and the toolchain image's come after the PATH's own `swift`.
    build_command='export PATH="$PATH:$HOME/.local/share/swiftly/bin:/opt/swift/usr/bin"
        command -v swift >/dev/null || { echo "install.sh: no swift on the PATH of $(id -un): install it (swiftly, docs/service.md), or build elsewhere and give --no-build --bin-dir" >&2; exit 1; }
        for p in quench quenchd quench-web; do swift build -c release --static-swift-stdlib '"${jobs:+-j $jobs}"' --product "$p" || exit; done'
    if [ "$(id -u)" = 0 ] && [ -n "${SUDO_USER:-}" ] && [ "$SUDO_USER" != root ]; then
        # Not as root in someone's checkout: root-owned files in .build would stop their next build.
        runuser -l "$SUDO_USER" -c "cd $(printf '%q' "$PWD") && $build_command"
    else
        bash -c "$build_command"
    fi
    [ "$build" = only ] && exit 0
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

# Every unit in systemd/ (scripts/units.sh), naming the binaries where they were installed.
source scripts/units.sh
units=$(mktemp -d)
trap 'rm -rf "$units"' EXIT
new_units=()
for unit in $(units_all); do
    [ -e "$root/etc/systemd/system/$unit" ] || new_units+=("$unit")
    sed "s#/usr/local/bin/#$prefix/bin/#g" "systemd/$unit" > "$units/$unit"
    put 644 "$units/$unit" "/etc/systemd/system/$unit"
done
copy_remind_dropins "$root"
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
# The services' StateDirectory= (as they would make it), there before any starts: `quench pair`
# writes the database into it before the gateway first runs.
[ -d /var/lib/quench ] || install -d -o quench -g quench -m 0700 /var/lib/quench
if command -v udevadm >/dev/null && [ -d /run/udev ]; then
    udevadm control --reload
    udevadm trigger --action=add --subsystem-match=bluetooth || true
fi
if [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    # What runs now runs the new binaries (try-restart starts nothing that is stopped).
    # shellcheck disable=SC2046
    systemctl try-restart $(units_enabled) $(units_optional) ||
        echo "install.sh: a service did not restart on the new binaries: see systemctl status quench" >&2
    if [ "$enable" = yes ]; then
        # Enabled when first installed only: a unit someone disabled stays disabled. The timers
        # start now; the gateway at the next boot or adapter, or once paired: `systemctl start quench`.
        for unit in "${new_units[@]}"; do
            case " $(echo $(units_enabled)) " in *" $unit "*) ;; *) continue ;; esac
            case " $(echo $(units_started)) " in
                *" $unit "*) systemctl enable --now "$unit" ;;
                *) systemctl enable "$unit" ;;
            esac
        done
    fi
fi
echo "install.sh: installed; \`sudo quench doctor --db /var/lib/quench/quench.sqlite\` checks it"
