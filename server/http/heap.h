/* Giving freed heap back to the kernel. */
#ifndef RF_HTTP_HEAP_H
#define RF_HTTP_HEAP_H

#include <malloc.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RF_HEAP_NOT_GLIBC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RF_HEAP_NOT_GLIBC 1
#endif
#endif

/** malloc_trim(0): the pages of freed heap back to the kernel. Nothing under ASan or TSan: their
 * allocators are not glibc's, and glibc's malloc_trim then walks arenas nothing initialised
 * (two reflectors trimming at once after their lists crashed an ASan build in mtrim). */
static inline void
rf_heap_trim(void)
{
#ifndef RF_HEAP_NOT_GLIBC
	malloc_trim(0);
#endif
}

#endif
