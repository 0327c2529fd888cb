#include "quench_clock.h"
#include <sys/timex.h>
#include <time.h>
#include <errno.h>

int quench_clock_state(void) {
    struct timex t = {0};
    return adjtimex(&t);
}

double quench_seconds_since_boot(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_BOOTTIME, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#include <sys/syscall.h>
#include <unistd.h>

int quench_pidfd_open(int pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

#include <malloc.h>

int quench_malloc_arenas(int arenas) {
    return mallopt(M_ARENA_MAX, arenas);
}
