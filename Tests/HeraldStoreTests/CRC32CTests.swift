import HeraldTestSupport
import Testing

@testable import HeraldStore

@Suite("CRC-32C")
struct CRC32CTests {
    /// RFC 3720 B.4 (iSCSI) test vectors, and the usual check value.
    static let vectors: [([UInt8], UInt32)] = [
        (Array("123456789".utf8), 0xE306_9283),
        ([], 0),
        (Array(repeating: 0x00, count: 32), 0x8A91_36AA),
        (Array(repeating: 0xFF, count: 32), 0x62A8_AB43),
        ((0..<32).map { UInt8($0) }, 0x46DD_794E),
        ((0..<32).reversed().map { UInt8($0) }, 0x113F_DB5C),
    ]

    @Test("published test vectors, through both implementations")
    func vectors() {
        for (bytes, expected) in Self.vectors {
            #expect(CRC32C.checksum(bytes) == expected, "\(bytes.count) bytes")
            #expect(bytes.withUnsafeBytes { CRC32C.softwareChecksum($0) } == expected, "\(bytes.count) bytes")
        }
    }

    @Test("the processor's instruction agrees with the tables on every length and alignment")
    func hardwareMatchesTables() {
        #if arch(x86_64)
        // Every x86-64 processor of the last fifteen years has SSE 4.2: without this, the
        // comparison below would pit the tables against themselves.
        #expect(CRC32C.usesHardware)
        #endif
        var rng = SplitMix64(seed: 0xC4C)
        let buffer = (0..<4096).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        buffer.withUnsafeBytes { all in
            for start in 0..<9 {
                for length in Array(0..<70) + [255, 256, 1000, 4000] {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<(start + length)])
                    #expect(CRC32C.checksum(slice) == CRC32C.softwareChecksum(slice), "start \(start), length \(length)")
                }
            }
        }
        // A single flipped bit changes the checksum.
        var damaged = buffer
        damaged[1234] ^= 0x10
        #expect(CRC32C.checksum(damaged) != CRC32C.checksum(buffer))
    }
}
