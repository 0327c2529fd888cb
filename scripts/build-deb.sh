#!/usr/bin/env bash
# Builds quench_VERSION_ARCH.deb from the same files scripts/install.sh installs
# (binaries in /usr/bin, units in /lib/systemd/system, the udev rule in
# /lib/udev/rules.d, /etc/quench/quench.toml as a conffile), with maintainer scripts that do what install.sh and
# uninstall.sh do: the `quench` user, enabling the service and the reminder
# timer; the history in /var/lib/quench stays unless the package is purged.
#
#   scripts/build-deb.sh [--no-build] [--bin-dir DIR] [--out DIR] [--fast]
# Checks it with `dpkg-deb` and, where installed, `lintian`.
set -euo pipefail
cd "$(dirname "$0")/.."

build_args=()
compression=(-Zxz)
bin_dir=.build/release
out=.build/deb
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build_args+=(--no-build); shift ;;
        --bin-dir) bin_dir="${2:?}"; shift 2 ;;
        --out) out="${2:?}"; shift 2 ;;
        --fast) compression=(-Zgzip -z1); shift ;;  # for tests: a quicker, bigger package
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "build-deb.sh: unknown option '$1'" >&2; exit 64 ;;
    esac
done

version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/QuenchCore/Version.swift)
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/quench_${version}_${arch}"

DESTDIR="$root" scripts/install.sh --prefix /usr --bin-dir "$bin_dir" "${build_args[@]}" >/dev/null
# Symbols are for debugging a build, not for a Pi's SD card.
strip --strip-unneeded "$root/usr/bin/quench" "$root/usr/bin/quenchd" "$root/usr/bin/quench-web"
# Packages keep units and rules under /lib; /etc is the administrator's, but
# for the configuration, a conffile: dpkg keeps a person's edits on upgrade
# (asking when the shipped file changed too) and removes it only on purge.
mkdir -p "$root/lib/systemd/system" "$root/lib/udev/rules.d"
mv "$root"/etc/systemd/system/* "$root/lib/systemd/system/"
mv "$root"/etc/udev/rules.d/* "$root/lib/udev/rules.d/"
rm -rf "$root/etc/systemd" "$root/etc/udev"

doc="$root/usr/share/doc/quench"
install -d "$doc"
cat > "$doc/copyright" <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: quench
Source: https://github.com/quench/quench

Files: *
Copyright: 2026 The Quench authors
License: Apache-2.0
 On Debian systems, the full text of the Apache License 2.0 is in
 /usr/share/common-licenses/Apache-2.0.
COPYRIGHT
# A native package: its changelog is changelog.gz.
printf 'quench (%s) unstable; urgency=medium\n\n  * Built from the repository by scripts/build-deb.sh.\n\n -- Quench <quench@users.noreply.github.com>  %s\n' \
    "$version" "$(date -R -u -d @0)" | gzip -9n > "$doc/changelog.gz"

install -d "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: quench
Version: $version
Architecture: $arch
Maintainer: Quench <quench@users.noreply.github.com>
Installed-Size: $size
Depends: libc6 (>= 2.36), libstdc++6, libbluetooth3, libsqlite3-0, libmosquitto1, adduser
Section: utils
Priority: optional
Homepage: https://github.com/quench/quench
Description: gateway for smart water bottles and scales over Bluetooth LE
 Quench pairs with a sensor bottle, a HidrateSpark, or a Bluetooth scale the
 bottle stands on, turns its readings into sips, refills and pours in mL, and
 keeps the intake history in SQLite: a command line, reminders, and a
 systemd service that runs for months on a Raspberry Pi.
CONTROL
cat > "$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    if ! getent passwd quench >/dev/null; then
        adduser --system --group --no-create-home --home /var/lib/quench --shell /usr/sbin/nologin quench
    fi
    if [ -d /run/udev ]; then udevadm control --reload || true; fi
    if [ -d /run/systemd/system ]; then
        systemctl daemon-reload
        systemctl enable --now quench.service quench-remind.timer || true
    fi
fi
POSTINST
cat > "$root/DEBIAN/prerm" <<'PRERM'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl disable --now quench.service quench-remind.timer quench-mqtt.service quench-web.service || true
fi
PRERM
cat > "$root/DEBIAN/postrm" <<'POSTRM'
#!/bin/sh
set -e
if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
if [ "$1" = purge ]; then
    # The history, and the web page's access token beside it (a secret).
    rm -rf /var/lib/quench
    if getent passwd quench >/dev/null; then deluser --system quench || true; fi
fi
POSTRM
chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
echo /etc/quench/quench.toml > "$root/DEBIAN/conffiles"

mkdir -p "$out"
deb="$out/quench_${version}_${arch}.deb"
dpkg-deb --root-owner-group "${compression[@]}" --build "$root" "$deb" >/dev/null
dpkg-deb --info "$deb" >/dev/null
echo "build-deb.sh: $deb"
if command -v lintian >/dev/null; then
    lintian --tag-display-limit 0 "$deb" || true
fi
