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

#endif
