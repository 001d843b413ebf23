#define _GNU_SOURCE
#include "CSystem.h"
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int csystem_random_bytes(void *buffer, size_t length) {
    size_t filled = 0;
    while (filled < length) {
        ssize_t got = getrandom((char *)buffer + filled, length - filled, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        filled += (size_t)got;
    }
    return 0;
}

int csystem_mkstemp_cloexec(char *path_template) {
    return mkostemp(path_template, O_CLOEXEC);
}

int csystem_timed_join(pthread_t thread, const struct timespec *deadline) {
    return pthread_timedjoin_np(thread, NULL, deadline);
}

long csystem_find(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length) {
    const void *hit = memmem(haystack, haystack_length, needle, needle_length);
    return hit ? (long)((const char *)hit - (const char *)haystack) : -1;
}

static volatile sig_atomic_t received_signals[65];

static void record_signal(int signal_number) {
    if (signal_number > 0 && signal_number < 65) received_signals[signal_number] = 1;
}

void csystem_install_flag_handler(int signal_number) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = record_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0; /* no SA_RESTART */
    sigaction(signal_number, &action, NULL);
}

int csystem_take_signal(int signal_number) {
    if (signal_number <= 0 || signal_number >= 65 || !received_signals[signal_number]) return 0;
    received_signals[signal_number] = 0;
    return 1;
}

int csystem_signal_seen(int signal_number) {
    return signal_number > 0 && signal_number < 65 && received_signals[signal_number];
}

int csystem_die_with_parent(int signal_number, int parent_pid) {
    if (prctl(PR_SET_PDEATHSIG, signal_number) != 0) return -1;
    return getppid() == parent_pid ? 0 : -1;
}

void csystem_set_process_name(const char *name) {
    prctl(PR_SET_NAME, name, 0, 0, 0);
}

void csystem_mmap_large_blocks(int bytes) {
    mallopt(M_MMAP_THRESHOLD, bytes);
}

void csystem_keep_free_heap(int bytes) {
    mallopt(M_TRIM_THRESHOLD, bytes);
}

int csystem_lock_byte(int fd, long offset, int type, int wait) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = (short)type;
    lock.l_whence = SEEK_SET;
    lock.l_start = offset;
    lock.l_len = 1;
    int result;
    do {
        result = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
    } while (result != 0 && errno == EINTR);
    return result;
}

int csystem_lock_for_this_process(int fd) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    return fcntl(fd, F_SETLK, &lock);
}

int csystem_mark_unread(int fd) {
    const struct timespec times[2] = {{.tv_sec = 0, .tv_nsec = 0}, {.tv_sec = 0, .tv_nsec = UTIME_OMIT}};
    return futimens(fd, times);
}

int csystem_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

int csystem_rename_noreplace(const char *from, const char *to) {
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
    if (link(from, to) != 0) return -1;
    unlink(from);
    return 0;
}

int csystem_open_noatime(const char *path, int flags) {
    int fd = open(path, flags | O_NOATIME);
    if (fd < 0 && errno == EPERM) fd = open(path, flags);
    return fd;
}
