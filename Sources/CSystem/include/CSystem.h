#ifndef CSYSTEM_H
#define CSYSTEM_H
/* GNU extensions of glibc that Swift's Glibc module does not import
   (they are declared only under _GNU_SOURCE). */
#include <stddef.h>
#include <pthread.h>
#include <time.h>

/* getrandom(2): fills the buffer from the kernel CSPRNG; 0 or -1 (errno). */
int csystem_random_bytes(void *buffer, size_t length);
/* mkostemp(3) with O_CLOEXEC. */
int csystem_mkstemp_cloexec(char *path_template);
/* pthread_timedjoin_np(3): 0 when joined, ETIMEDOUT otherwise. */
int csystem_timed_join(pthread_t thread, const struct timespec *deadline);
/* memmem(3): the offset of needle in haystack, or -1. */
long csystem_find(const void *haystack, size_t haystack_length, const void *needle, size_t needle_length);

/* Sequentially consistent operations on 64-bit words in memory shared
   between processes (the worker scoreboard, the shared state). */
static inline long long csystem_load(const long long *word) { return __atomic_load_n(word, __ATOMIC_SEQ_CST); }
static inline void csystem_store(long long *word, long long value) { __atomic_store_n(word, value, __ATOMIC_SEQ_CST); }
static inline long long csystem_add(long long *word, long long delta) { return __atomic_add_fetch(word, delta, __ATOMIC_SEQ_CST); }
/* Sets *word to desired if it still holds expected; 1 if it did. */
static inline int csystem_compare_exchange(long long *word, long long expected, long long desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* prctl(PR_SET_PDEATHSIG): signal_number is sent to this process when the
   parent that forked it dies. Returns 0, or -1 when the parent is already
   gone (parent_pid is no longer our parent). */
int csystem_die_with_parent(int signal_number, int parent_pid);

/* prctl(PR_SET_NAME): this process's name in /proc/PID/comm and ps (at
   most 15 bytes kept), which tells a helper process from the workers. */
void csystem_set_process_name(const char *name);

/* mallopt(M_MMAP_THRESHOLD, bytes): blocks at least this big come from mmap
   and go back to the system when freed (malloc.h is not imported). */
void csystem_mmap_large_blocks(int bytes);

/* mallopt(M_TRIM_THRESHOLD, bytes): free memory at the top of the heap is
   given back to the system (brk) only beyond this much. */
void csystem_keep_free_heap(int bytes);

/* Signal flags for worker processes: the handler only records the signal
   (async-signal-safe) and, installed without SA_RESTART, makes a blocking
   poll() return so the worker can look at the flags. */
void csystem_install_flag_handler(int signal_number);
/* Returns and clears whether signal_number arrived since the last call. */
int csystem_take_signal(int signal_number);
/* Whether signal_number arrived (not cleared). */
int csystem_signal_seen(int signal_number);

/* An open-file-description lock (F_OFD_SETLK, or F_OFD_SETLKW when wait)
   on the byte at offset: type is F_RDLCK, F_WRLCK or F_UNLCK. It belongs to
   the open file (shared with forked children) and goes when its last
   descriptor is closed, however the holders end. 0, or -1 with errno. */
int csystem_lock_byte(int fd, long offset, int type, int wait);

/* A write lock on the whole file that belongs to this process alone
   (F_SETLK): not inherited by forked children, released when the process
   ends however it ends. Never waits. 0, or -1 with errno. */
int csystem_lock_for_this_process(int fd);

/* open(2) for reading without updating the file's access time (O_NOATIME,
   for the file's owner), or plainly when not the owner. */
int csystem_open_noatime(const char *path, int flags);

/* Sets the open file's access time to the Epoch and leaves its modification
   time (UTIME_OMIT, a macro Swift does not import): "not read since made". */
int csystem_mark_unread(int fd);

/* Starts writing the file's dirty pages to disk and returns without waiting
   (sync_file_range's SYNC_FILE_RANGE_WRITE, a GNU call Swift does not
   import). No durability of its own: a hint that lets the fsyncs that
   follow find the data written. 0, or -1 with errno. */
int csystem_start_writeback(int fd);
/* rename(2) that never replaces `to` (-1 with EEXIST when it exists):
   renameat2's RENAME_NOREPLACE, or a link and an unlink where the file
   system has no such rename (NFS). */
int csystem_rename_noreplace(const char *from, const char *to);

#endif
