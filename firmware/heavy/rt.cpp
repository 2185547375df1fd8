/*
 * The run-time glue newlib and libstdc++ need on a bare board, for the
 * heavy workload:
 *  - _sbrk over a static heap (newlib's malloc: std::string, std::map,
 *    and the big-number buffers of dtoa/strtod);
 *  - the system calls newlib's stdio refers to (the workload only formats
 *    into memory; these fail with EBADF / ENOSYS and are never reached);
 *  - operator new/delete on malloc/free and the std::__throw_* helpers
 *    that libstdc++'s headers call under -fno-exceptions, all stopping the
 *    board through codeplace_on_fault() instead of throwing (so no
 *    unwinder, no exception tables).
 */
extern "C" {
#include "codeplace.h"
}

#include <errno.h>
#include <new>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#undef errno
extern "C" int errno;

namespace {
/* 48 KiB: the workload's peak is a few KiB; the rest is slack. */
constexpr size_t kHeap = 48 * 1024;
alignas(8) unsigned char heap[kHeap];
size_t heap_used;

[[noreturn]] void stop(uint32_t code)
{
    for (;;)
        codeplace_on_fault(code);
}
}

extern "C" {

void *_sbrk(ptrdiff_t incr);
int _write(int fd, const void *buf, size_t len);
int _read(int fd, void *buf, size_t len);
int _close(int fd);
long _lseek(int fd, long off, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
int _getpid(void);
int _kill(int pid, int sig);
void _exit(int status);

void *_sbrk(ptrdiff_t incr)
{
    if (incr < 0 ? (size_t)-incr > heap_used : (size_t)incr > kHeap - heap_used) {
        errno = ENOMEM;
        return (void *)-1;
    }
    void *p = heap + heap_used;
    heap_used += (size_t)incr;
    return p;
}

int _write(int, const void *, size_t) { errno = EBADF; return -1; }
int _read(int, void *, size_t) { errno = EBADF; return -1; }
int _close(int) { errno = EBADF; return -1; }
long _lseek(int, long, int) { errno = EBADF; return -1; }
int _fstat(int, struct stat *st) { st->st_mode = S_IFCHR; return 0; }
int _isatty(int) { return 0; }
int _getpid(void) { return 1; }
int _kill(int, int) { errno = ENOSYS; return -1; }
void _exit(int status) { stop(0x100u | (uint32_t)(status & 0xff)); }

/* What libstdc++'s exception globals register their destructor with; no
 * static destructor ever runs on the board. */
void *__dso_handle = &__dso_handle;

} // extern "C"

void *operator new(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        stop(0x200u);
    return p;
}

void *operator new[](size_t n) { return operator new(n); }
void operator delete(void *p) noexcept { free(p); }
void operator delete[](void *p) noexcept { free(p); }
void operator delete(void *p, size_t) noexcept { free(p); }
void operator delete[](void *p, size_t) noexcept { free(p); }

namespace std {
void __throw_length_error(const char *) { stop(0x301u); }
void __throw_logic_error(const char *) { stop(0x302u); }
void __throw_out_of_range(const char *) { stop(0x303u); }
void __throw_out_of_range_fmt(const char *, ...) { stop(0x304u); }
void __throw_bad_alloc() { stop(0x305u); }
void __throw_invalid_argument(const char *) { stop(0x306u); }
void __throw_bad_array_new_length() { stop(0x307u); }
} // namespace std
