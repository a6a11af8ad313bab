/* The CRC32 of the compiled modules (binlog/_cbytes.pxd `event_crc32`): the checksum of binlog events
 * (zlib's polynomial, reflected, initial value 0: what zlib.crc32 and the server's my_checksum give).
 *
 * setup.py defines BINLOG_SPEC_ISAL where Intel's ISA-L library (Debian: libisal-dev) compiles and links:
 * its crc32_gzip_refl is the same function computed with carry-less multiplication (PCLMULQDQ, VPCLMULQDQ
 * where the CPU has them, chosen at run time), about six times as fast as zlib 1.2's on binlog events.
 * Elsewhere zlib's crc32 runs. The pure-Python reference uses zlib.crc32; the tests compare all three. */
#ifndef BINLOG_SPEC_CRC32_H
#define BINLOG_SPEC_CRC32_H

#include <stddef.h>
#include <stdint.h>

#ifdef BINLOG_SPEC_ISAL
#include <isa-l/crc.h>
#define BINLOG_SPEC_CRC32_IMPL "ISA-L"
static inline uint32_t binlog_spec_crc32(const unsigned char *p, size_t n) {
    return crc32_gzip_refl(0, p, (uint64_t)n);
}
#else
#include <zlib.h>
#define BINLOG_SPEC_CRC32_IMPL "zlib"
static inline uint32_t binlog_spec_crc32(const unsigned char *p, size_t n) {
    uLong crc = 0;
    while (n > 0x40000000u) {       /* zlib's length is an unsigned int */
        crc = crc32(crc, p, 0x40000000u);
        p += 0x40000000u;
        n -= 0x40000000u;
    }
    return (uint32_t)crc32(crc, p, (uInt)n);
}
#endif

#endif
