#!/usr/bin/env bash
# Builds quench_VERSION_ARCH.deb, a package that needs no Swift on the machine it goes to: the
# three executables built with the Swift runtime linked in (--static-swift-stdlib; binaries that
# load it from a toolchain are refused), in /usr/bin; every unit in systemd/ under
# /usr/lib/systemd/system (scripts/units.sh says which are enabled); the udev rule in
# /usr/lib/udev/rules.d; /etc/quench/quench.toml as a conffile. Its maintainer scripts do what
# debhelper's would: deb-systemd-helper enables units on the first install only (a disabled
# unit stays disabled; in a chroot with no systemd running, as an image build is, it makes the
# symlinks itself), deb-systemd-invoke starts the timers on the first install and restarts what
# runs on an upgrade. The history in /var/lib/quench stays on remove and goes on purge.
#
#   scripts/build-deb.sh [--arch ARCH] [--version V] [--out DIR] [--fast] [--no-lintian]
#   scripts/build-deb.sh --no-build --bin-dir DIR [--arch ARCH] ...   # pack binaries built already
#
# --arch: the Debian architecture (default: this machine's, `dpkg --print-architecture`); the
# binaries must be built for it (checked). A build happens on that architecture only: the
# release workflow (.github/workflows/release.yml) runs on an amd64 and an arm64 machine.
# --version: the package's version (default: Sources/QuenchCore/Version.swift's).
# --fast: quicker, bigger compression (tests). --dynamic-for-tests: accept binaries that load the
# Swift runtime from the toolchain (a debug build; the package then runs only where that
# toolchain is, so it is for the packaging tests, never for a release).
# Checks the package with `dpkg-deb` and, where installed, `lintian` (unless --no-lintian).
set -euo pipefail
cd "$(dirname "$0")/.."

build=yes
compression=(-Zxz)
bin_dir=.build/release
out=.build/deb
host_arch=$(dpkg --print-architecture)
arch=$host_arch
version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/QuenchCore/Version.swift)
dynamic=no
lintian=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) build=no; shift ;;
        --bin-dir) bin_dir="${2:?--bin-dir needs a directory}"; shift 2 ;;
        --out) out="${2:?--out needs a directory}"; shift 2 ;;
        --arch) arch="${2:?--arch needs a Debian architecture (amd64, arm64, armhf)}"; shift 2 ;;
        --version) version="${2:?--version needs a version}"; shift 2 ;;
        --fast) compression=(-Zgzip -z1); shift ;;
        --dynamic-for-tests) dynamic=yes; shift ;;
        --no-lintian) lintian=no; shift ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "build-deb.sh: unknown option '$1' (see --help)" >&2; exit 64 ;;
    esac
done
fail() { echo "build-deb.sh: $*" >&2; exit 1; }
# The ELF machine readelf names for each architecture Swift builds for on Linux.
case "$arch" in
    amd64) machine='Advanced Micro Devices X86-64' ;;
    arm64) machine='AArch64' ;;
    armhf) machine='ARM' ;;
    *) echo "build-deb.sh: --arch $arch: not one of amd64, arm64, armhf" >&2; exit 64 ;;
esac
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || { echo "build-deb.sh: --version '$version': not a Debian version (a digit, then letters, digits and . + ~)" >&2; exit 64; }

if [ "$build" = yes ]; then
    [ "$arch" = "$host_arch" ] || fail "--arch $arch on an $host_arch machine: Swift builds here for $host_arch only; build on an $arch machine (the release workflow does), or give --no-build --bin-dir with binaries built there"
    scripts/install.sh --build-only
fi

# Each binary: built for --arch, with the Swift runtime inside (not a toolchain's libswiftCore.so).
for b in quench quenchd quench-web; do
    bin="$bin_dir/$b"
    [ -x "$bin" ] || fail "no $bin (build it, or give --bin-dir)"
    header=$(readelf -h "$bin" 2>/dev/null) || fail "$bin: not an ELF executable"
    built_for=$(sed -n 's/^ *Machine: *//p' <<< "$header")
    [ "$built_for" = "$machine" ] || fail "$bin is built for $built_for, not $arch ($machine): give --arch, or the binaries built for it"
    dynamic_section=$(readelf -d "$bin")
    runtime=$(sed -n 's/.*(NEEDED).*\[\(lib\(swift\|_\?Foundation\|dispatch\|BlocksRuntime\)[^]]*\)\]/\1/p' <<< "$dynamic_section" | paste -sd ' ')
    # A library path into a toolchain (a debug build's /opt/swift/usr/lib/swift/linux); $ORIGIN, which
    # a static build keeps, finds nothing beside /usr/bin/quench.
    search=$(sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p' <<< "$dynamic_section" | tr ':' '\n' | grep -v '^\$ORIGIN' | paste -sd : || true)
    if [ -n "$runtime$search" ] && [ "$dynamic" = no ]; then
        fail "$bin loads the Swift runtime from a toolchain (needs: ${runtime:-none}; library path: ${search:-none}): it would not run on a machine without that toolchain. Build it with \`swift build -c release --static-swift-stdlib\` (what this script does without --no-build)"
    fi
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/quench_${version}_${arch}"

DESTDIR="$root" scripts/install.sh --prefix /usr --bin-dir "$bin_dir" --no-build >/dev/null
# Symbols are for debugging a build, not for a Pi's SD card (the strip of the binaries' target).
strip=strip
if [ "$arch" != "$host_arch" ]; then
    strip="$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)-strip"
    command -v "$strip" >/dev/null || fail "no $strip to strip $arch binaries here (apt-get install binutils-${strip%-strip}), or pack them on an $arch machine"
fi
"$strip" --strip-unneeded "$root/usr/bin/quench" "$root/usr/bin/quenchd" "$root/usr/bin/quench-web"
# A package's units and rules live under /usr/lib (Debian's /usr merge; /lib links there);
# /etc is the administrator's, but for the configuration, a conffile: dpkg keeps a person's
# edits on upgrade (asking when the shipped file changed too) and removes it only on purge.
mkdir -p "$root/usr/lib/systemd/system" "$root/usr/lib/udev/rules.d"
mv "$root"/etc/systemd/system/* "$root/usr/lib/systemd/system/"
mv "$root"/etc/udev/rules.d/* "$root/usr/lib/udev/rules.d/"
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
# The manual pages (man/, one per binary: lintian wants one for each), compressed as Debian installs them.
install -d "$root/usr/share/man/man1"
for page in man/*.1; do
    gzip -9n < "$page" > "$root/usr/share/man/man1/$(basename "$page").gz"
done
# A native package: its changelog is changelog.gz.
printf 'quench (%s) unstable; urgency=medium\n\n  * Built from the repository by scripts/build-deb.sh.\n\n -- Quench <quench@users.noreply.github.com>  %s\n' \
    "$version" "$(date -R -u -d @0)" | gzip -9n > "$doc/changelog.gz"

# The libraries the binaries load, with the versions their symbols need (dpkg-shlibdeps reads
# this machine's packages, so for this architecture only); the maintainer scripts' tools after.
if [ "$arch" = "$host_arch" ]; then
    # (a toolchain's Swift libraries belong to no package: with --dynamic-for-tests they are left out)
    missing=(); [ "$dynamic" = yes ] && missing=(--ignore-missing-info)
    shlibs=$(mkdir -p "$stage/src/debian" && printf 'Source: quench\n\nPackage: quench\nArchitecture: any\n' > "$stage/src/debian/control" &&
             cd "$stage/src" && dpkg-shlibdeps -O --warnings=0 "${missing[@]}" \
                 -e"$root/usr/bin/quench" -e"$root/usr/bin/quenchd" -e"$root/usr/bin/quench-web" 2>"$stage/shlibdeps.err") ||
        fail "dpkg-shlibdeps: $(cat "$stage/shlibdeps.err")"
    # libcurl is loaded with dlopen (Sources/CCurl), so dpkg-shlibdeps cannot see it: named here,
    # at the version whose CURLOPT_PROTOCOLS_STR the pushes set.
    libraries="${shlibs#shlibs:Depends=}, libcurl4 (>= 7.85.0)"
else
    # Another architecture's libraries are not installed here: the ones the binaries need by name.
    libraries='libc6 (>= 2.36), libstdc++6, libgcc-s1, libbluetooth3, libsqlite3-0, libmosquitto1, libcurl4 (>= 7.85.0), zlib1g'
fi

source scripts/units.sh
# Unit lists for the maintainer scripts: all of them, the enabled, the optional, the started.
all=$(echo $(units_all)); enabled=$(echo $(units_enabled)); optional=$(echo $(units_optional))
started=$(echo $(units_started))

install -d "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: quench
Version: $version
Architecture: $arch
Maintainer: Quench <quench@users.noreply.github.com>
Installed-Size: $size
Depends: $libraries, adduser, init-system-helpers (>= 1.60)
Section: utils
Priority: optional
Homepage: https://github.com/quench/quench
Description: gateway for smart water bottles and scales over Bluetooth LE
 Quench pairs with a sensor bottle, a HidrateSpark, or a Bluetooth scale the
 bottle stands on, turns its readings into sips, refills and pours in mL, and
 keeps the intake history in SQLite: a command line, reminders, and a
 systemd service that runs for months on a Raspberry Pi.
CONTROL

cat > "$root/DEBIAN/postinst" <<POSTINST
#!/bin/sh
# quench: written by scripts/build-deb.sh from the units in systemd/.
set -e
case "\$1" in
    configure|abort-upgrade|abort-deconfigure|abort-remove) ;;
    *) exit 0 ;;
esac
if ! getent passwd quench >/dev/null; then
    adduser --system --group --no-create-home --home /var/lib/quench --shell /usr/sbin/nologin quench
fi
# The services' StateDirectory= (as they would make it), there before any starts: \`quench pair\`
# writes the database into it before the gateway first runs.
if [ ! -d /var/lib/quench ]; then install -d -o quench -g quench -m 0700 /var/lib/quench; fi
if [ -z "\${DPKG_ROOT:-}" ] && [ -d /run/udev ]; then udevadm control --reload || true; fi
$(declare -f copy_remind_dropins)
copy_remind_dropins "\${DPKG_ROOT:-}"

# Enabled on the first install only; later the links deb-systemd-helper recorded say whether the
# administrator disabled a unit since, and a disabled one stays so. Without a running systemd (a
# chroot, an image build) deb-systemd-helper makes the symlinks itself.
for unit in $enabled; do
    if [ -n "\$2" ] && ! deb-systemd-helper debian-installed "\$unit"; then
        # An upgrade from a package that enabled it with systemctl (0.5.0): keep its state as is.
        deb-systemd-helper update-state "\$unit" >/dev/null || true
    fi
    if deb-systemd-helper --quiet was-enabled "\$unit"; then
        deb-systemd-helper enable "\$unit" >/dev/null || true
    else
        deb-systemd-helper update-state "\$unit" >/dev/null || true
    fi
done
# Installed, not enabled (each needs its settings first): enabled again on upgrade only if the
# administrator had enabled it.
for unit in $optional; do
    if deb-systemd-helper debian-installed "\$unit" && deb-systemd-helper --quiet was-enabled "\$unit"; then
        deb-systemd-helper enable "\$unit" >/dev/null || true
    fi
    deb-systemd-helper update-state "\$unit" >/dev/null || true
done

if [ -z "\${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
    if [ -n "\$2" ]; then
        # An upgrade: what runs restarts on the new binaries; what was stopped stays stopped.
        deb-systemd-invoke try-restart $enabled $optional >/dev/null || true
    else
        # The timers start now; the gateway at the next boot or adapter, or once a device is
        # paired (\`systemctl start quench\`): nothing to listen to before that.
        deb-systemd-invoke start $started >/dev/null || true
    fi
fi
POSTINST

cat > "$root/DEBIAN/prerm" <<PRERM
#!/bin/sh
# quench: written by scripts/build-deb.sh. On an upgrade the services keep running until the
# new package's postinst restarts them.
set -e
if [ -z "\${DPKG_ROOT:-}" ] && [ "\$1" = remove ] && [ -d /run/systemd/system ]; then
    deb-systemd-invoke stop $all >/dev/null || true
fi
PRERM

cat > "$root/DEBIAN/postrm" <<POSTRM
#!/bin/sh
# quench: written by scripts/build-deb.sh. Remove keeps the history and the units' enabled state
# (a reinstall finds them as they were); purge removes both.
set -e
if [ -z "\${DPKG_ROOT:-}" ] && [ "\$1" = remove ] && [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
fi
if [ "\$1" = purge ]; then
    if command -v deb-systemd-helper >/dev/null; then
        deb-systemd-helper purge $all >/dev/null || true
    fi
    # The history, and the web page's access token beside it (a secret).
    rm -rf /var/lib/quench
    if getent passwd quench >/dev/null; then deluser --system quench >/dev/null || true; fi
fi
POSTRM
chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
echo /etc/quench/quench.toml > "$root/DEBIAN/conffiles"

mkdir -p "$out"
deb="$out/quench_${version}_${arch}.deb"
dpkg-deb --root-owner-group "${compression[@]}" --build "$root" "$deb" >/dev/null
dpkg-deb --info "$deb" >/dev/null
echo "build-deb.sh: $deb"
if [ "$lintian" = yes ] && command -v lintian >/dev/null; then
    lintian --tag-display-limit 0 "$deb" || true
fi
