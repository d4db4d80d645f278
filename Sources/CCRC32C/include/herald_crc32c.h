// CRC-32C with the processor's own instruction (SSE 4.2 `crc32`), for HeraldStore's
// checksums over log records and snapshots. Swift cannot reach that instruction; this file
// is the whole module.
#ifndef HERALD_CRC32C_H
#define HERALD_CRC32C_H

#include <stddef.h>
#include <stdint.h>

// Declared on x86-64 only; elsewhere the module is empty and Swift uses its tables.
#if defined(__x86_64__)

/// Whether `herald_crc32c_update` can run on this processor (x86-64 with SSE 4.2).
int herald_crc32c_hardware_available(void);

/// Continues the CRC-32C register `crc` (not inverted: start with 0xFFFFFFFF and invert the
/// result) over `count` bytes at `bytes`. Call only when
/// `herald_crc32c_hardware_available()` is nonzero.
uint32_t herald_crc32c_update(uint32_t crc, const void *bytes, size_t count);

#endif  // __x86_64__
#endif
