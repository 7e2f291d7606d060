/* A heap-allocation counter for tests/test_step_allocations.py, preloaded (LD_PRELOAD) into a
 * Python subprocess: malloc, calloc, realloc, memalign, posix_memalign, aligned_alloc, valloc and
 * pvalloc are counted while counting is on, then passed to glibc's own (__libc_*). C++'s operator
 * new goes through malloc in libstdc++, so Eigen's, Pinocchio's and coal's allocations count too.
 *
 * Python reads it through ctypes.CDLL(None): reljac_alloc_counting(1) / (0) switches counting on
 * and off; reljac_alloc_count() is the number counted so far, except the messages of
 * std::logic_error objects (and so std::invalid_argument's...), counted apart by
 * reljac_alloc_exception_messages(): see exception_message(). With RELJAC_ALLOC_TRACE=1 in the
 * environment each counted allocation also writes its call stack to stderr (to find it; build
 * the extension with -g for line numbers through addr2line).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);

static volatile long count = 0, messages = 0;
static volatile int counting = 0;
static int trace = -1;
static __thread int inside = 0; /* backtrace() and dladdr() may allocate: do not count or trace that */

long reljac_alloc_count(void) { return count; }
long reljac_alloc_exception_messages(void) { return messages; }
void reljac_alloc_counting(int on) { counting = on; }

/* Whether the allocation is a std::logic_error's message (std::logic_error(const char*) copies it
 * into a new string): coal 3.0's COAL_ASSERT builds its exception, message and all, even when the
 * check passes (fwd.hh, COAL_UNUSED_VARIABLE(exception(message))), at every GJK call on shapes. */
static int exception_message(void) {
  void* frames[8];
  const int n = backtrace(frames, 8);
  for (int i = 0; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_sname && strncmp(info.dli_sname, "_ZNSt11logic_errorC", 19) == 0)
      return 1;
  }
  return 0;
}

static void counted(void) {
  if (!counting || inside) return;
  inside = 1;
  if (exception_message()) {
    __atomic_add_fetch(&messages, 1, __ATOMIC_RELAXED);
    inside = 0;
    return;
  }
  __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
  if (trace < 0) {
    const char* t = getenv("RELJAC_ALLOC_TRACE");
    trace = t && strcmp(t, "1") == 0;
  }
  if (trace) {
    void* frames[40];
    const int n = backtrace(frames, 40);
    backtrace_symbols_fd(frames, n, 2);
    static const char line[] = "----\n";
    (void)!write(2, line, sizeof line - 1);
  }
  inside = 0;
}

void* malloc(size_t size) {
  counted();
  return __libc_malloc(size);
}

void* calloc(size_t n, size_t size) {
  counted();
  return __libc_calloc(n, size);
}

void* realloc(void* p, size_t size) {
  counted();
  return __libc_realloc(p, size);
}

void* memalign(size_t alignment, size_t size) {
  counted();
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(size_t alignment, size_t size) {
  counted();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  counted();
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(alignment, size);
  if (!p && size) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t size) {
  counted();
  return __libc_memalign(4096, size);
}

void* pvalloc(size_t size) {
  counted();
  return __libc_memalign(4096, (size + 4095) & ~(size_t)4095);
}
