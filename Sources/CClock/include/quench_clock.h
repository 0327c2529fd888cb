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
