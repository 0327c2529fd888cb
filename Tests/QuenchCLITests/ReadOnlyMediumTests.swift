import Foundation
import QuenchTestSupport
import Testing

/// Whether this machine lets a user mount a tmpfs in a namespace of its own (`unshare -rm`): how a
/// test makes a read-only file system without root.
let mountsInANamespace: Bool = (try? runProgram("/usr/bin/unshare", ["-rm", "/bin/sh", "-c", "mount -t tmpfs none /tmp"]).status) == 0

/// A failing SD card is remounted read-only by the kernel. A WAL database there could not even be read
/// ("unable to open database file": SQLite makes a -shm file to read one), so no backup could be taken
/// off it; and a write blamed the file's permissions.
@Suite(.enabled(if: quenchBinary != nil, "SKIPPED: quench is not built (swift build)"),
       .enabled(if: mountsInANamespace, "SKIPPED: unprivileged user namespaces are off here (sysctl kernel.unprivileged_userns_clone=1)"))
struct ReadOnlyMediumTests {
    @Test func aDatabaseOnAReadOnlyCardIsReadBackedUpAndNotWritten() throws {
        let folder = try TemporaryFolder()
        let source = folder.file("quench.sqlite")
        #expect(try runQuench(["add", "250ml", "--db", source]).status == 0)
        // In a mount namespace of its own: a tmpfs with the database, remounted read-only, then the commands.
        let script = """
            set -u
            mkdir -p "$DIR/card" "$DIR/backups" && chmod 700 "$DIR/backups"
            mount -t tmpfs -o size=4m,mode=0700 none "$DIR/card" || exit 90
            cp "$DIR/quench.sqlite" "$DIR/card/" && chmod 600 "$DIR/card/quench.sqlite"
            mount -o remount,ro "$DIR/card" || exit 91
            "$QUENCH" today --json --db "$DIR/card/quench.sqlite"; echo "today=$?"
            "$QUENCH" backup --db "$DIR/card/quench.sqlite" --dir "$DIR/backups" >/dev/null; echo "backup=$?"
            "$QUENCH" add 100ml --db "$DIR/card/quench.sqlite"; echo "add=$?"
            for b in "$DIR"/backups/quench-*.sqlite; do "$QUENCH" today --json --db "$b" | grep -o '"intake_ml":[0-9]*' | sed 's/^/backup /'; done
            # A read-only view of a file system that is not read-only (a bind mount): another process may write
            # through another view, so it is not read as immutable (it would read pages as they change).
            mkdir -p "$DIR/view" && mount --bind "$DIR" "$DIR/view" && mount -o remount,bind,ro "$DIR/view" || exit 92
            "$QUENCH" today --json --db "$DIR/view/quench.sqlite" >/dev/null 2>&1; echo "view=$?"
            """
        let r = try runProgram("/usr/bin/unshare", ["-rm", "/bin/sh", "-c", script],
                               environment: ["QUENCH": quenchBinary!, "DIR": folder.path, "HOME": folder.path])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("\"intake_ml\":250") && r.stdout.contains("today=0"), "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("backup=0"), "a backup taken off the card: \(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("add=1"), "\(r.stdout)")
        #expect(r.stdout.contains("backup \"intake_ml\":250"), "the backup holds the drink: \(r.stdout)")
        #expect(r.stdout.contains("view=1"), "a read-only view of a writable disk is not read as immutable: \(r.stdout)")
        #expect(r.stderr.contains("adding a drink failed: the database \(folder.path)/card/quench.sqlite is on a file system mounted read-only"),
                "\(r.stderr)")
    }
}
