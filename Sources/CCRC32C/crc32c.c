#include "herald_crc32c.h"

#if defined(__x86_64__)
#include <string.h>
#include <nmmintrin.h>

int herald_crc32c_hardware_available(void) {
    return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2")))
uint32_t herald_crc32c_update(uint32_t crc, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t wide = crc;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);  // unaligned load
        wide = _mm_crc32_u64(wide, word);
        p += 8;
        count -= 8;
    }
    crc = (uint32_t)wide;
    while (count > 0) {
        crc = _mm_crc32_u8(crc, *p);
        p += 1;
        count -= 1;
    }
    return crc;
}

#endif
