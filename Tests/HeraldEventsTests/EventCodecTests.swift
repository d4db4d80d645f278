import HeraldEvents
import Testing

@Suite("Binary codec")
struct EventCodecTests {
    @Test("every sample covers every event type")
    func coversEveryType() {
        #expect(Set(Samples.everyType.map(\.type)) == Set(EventType.allCases))
    }

    @Test("binary round-trip", arguments: Samples.everyType)
    func binaryRoundTrip(event: Event) throws {
        #expect(try Event(binary: event.binary) == event)
    }

    @Test("JSON round-trip", arguments: Samples.everyType)
    func jsonRoundTrip(event: Event) throws {
        #expect(try Event(json: event.jsonString) == event)
    }

    @Test("every truncation of an encoding is rejected, never a crash", arguments: Samples.everyType)
    func truncations(event: Event) {
        let bytes = event.binary
        for length in 0..<bytes.count {
            #expect(throws: ByteReader.Malformed.self) { try Event(binary: Array(bytes[..<length])) }
        }
        #expect(throws: ByteReader.Malformed.self) { try Event(binary: bytes + [0]) }
    }

    @Test("flipped bytes never crash the decoder")
    func flippedBytes() {
        var rng = SystemRandomNumberGenerator()
        for event in Samples.everyType {
            let bytes = event.binary
            for _ in 0..<200 {
                var damaged = bytes
                let index = Int.random(in: 0..<damaged.count, using: &rng)
                damaged[index] ^= UInt8.random(in: 1...255, using: &rng)
                // Either rejected or decoded into some valid event: never a trap.
                if let decoded = try? Event(binary: damaged) { #expect(throws: Never.self) { try decoded.validate() } }
            }
        }
    }

    @Test("varints round-trip at their edges")
    func varints() throws {
        let values: [UInt64] = [0, 1, 127, 128, 255, 16_383, 16_384, UInt64(Int64.max), .max]
        let signed: [Int64] = [0, -1, 1, .min, .max, -64, 64]
        var writer = ByteWriter()
        for v in values { writer.varint(v) }
        for v in signed { writer.signedVarint(v) }
        try writer.bytes.withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            for v in values { #expect(try reader.varint() == v) }
            for v in signed { #expect(try reader.signedVarint() == v) }
            #expect(reader.isAtEnd)
        }
    }

    @Test("an over-long varint is rejected")
    func overlongVarint() {
        let bytes = [UInt8](repeating: 0xFF, count: 11)
        bytes.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            #expect(throws: ByteReader.Malformed.self) { try reader.varint() }
        }
    }
}
