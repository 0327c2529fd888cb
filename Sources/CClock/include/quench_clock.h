// The kernel's clock state for Threading's SystemClock: sys/timex.h is not in
// Swift's Glibc module.
#pragma once

/// adjtimex(2) with modes 0 (reads only; needs no capability): TIME_OK (0) …
/// TIME_WAIT (4) when the kernel considers the wall clock synchronised,
/// TIME_ERROR (5) when not (STA_UNSYNC), -1 with errno set when the call fails
/// (EPERM under a seccomp filter such as systemd's ProtectClock=).
int quench_clock_state(void);

/// CLOCK_BOOTTIME in seconds: monotonic, counts suspend, shared by every process of a boot.
double quench_seconds_since_boot(void);

/// pidfd_open(2) (Linux 5.3; glibc has no wrapper before 2.36, and syscall(2) is variadic, which
/// Swift cannot call): a descriptor that polls readable when the child exits. -1 with errno set
/// (ENOSYS on an older kernel).
int quench_pidfd_open(int pid);

/// mallopt(M_ARENA_MAX, arenas) (malloc.h is not in Swift's Glibc module): glibc's malloc gives each
/// thread that allocates an arena of its own, and each keeps the memory freed in it; a server whose
/// work hops between a few threads holds several such arenas. 1 on success, 0 on failure.
int quench_malloc_arenas(int arenas);
