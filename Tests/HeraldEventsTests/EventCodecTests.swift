import HeraldEvents
import HeraldTestSupport
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

    /// A notify's body, sender and thread are kept packed: every combination of absent and
    /// tricky texts reads back as given, through both codecs and after setting each one.
    @Test("notify texts read back as given, in every combination")
    func notifyTexts() throws {
        let texts: [String?] = [nil, "", "3:", "é🎉", String(repeating: "long text ", count: 5)]
        for body in texts {
            for sender in texts {
                for thread in texts {
                    var notify = Event.Notify(chat: "c", kind: .message, id: 1, date: 0, title: "t", body: body, sender: sender, thread: thread)
                    #expect(notify.body == body && notify.sender == sender && notify.thread == thread)
                    let event = Event(account: "a", .notify(notify))
                    #expect(try Event(binary: event.binary) == event)
                    #expect(try Event(json: event.jsonString) == event)
                    notify.sender = "x"
                    #expect(notify.body == body && notify.sender == "x" && notify.thread == thread)
                    #expect(notify == Event.Notify(chat: "c", kind: .message, id: 1, date: 0, title: "t", body: body, sender: "x", thread: thread))
                }
            }
        }
    }

    @Test("a record whose body is not UTF-8 is rejected at the body's offset")
    func invalidUTF8Body() throws {
        let event = Event(account: "a", .notify(.init(chat: "c", kind: .message, id: 1, date: 0, body: "ok")))
        var bytes = event.binary
        // The body is the last field: its length byte, then "ok".
        #expect(Array(bytes.suffix(3)) == [2, UInt8(ascii: "o"), UInt8(ascii: "k")])
        bytes[bytes.count - 2] = 0xFF
        do {
            _ = try Event(binary: bytes)
            Issue.record("invalid UTF-8 accepted")
        } catch {
            // `Event(binary:)` throws only `ByteReader.Malformed`.
            #expect(error.reason == "invalid UTF-8")
            #expect(error.offset == bytes.count - 3)
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

    @Test("varints of every length round-trip back to back, and every cut one is rejected")
    func varintLengths() throws {
        // One value of each encoded length, 1 to 10 bytes, and the largest of each length.
        var values: [UInt64] = []
        for bits in stride(from: 0, through: 63, by: 7) {
            values.append(1 << UInt64(bits))
            values.append(bits + 7 >= 64 ? .max : (1 << UInt64(bits + 7)) - 1)
        }
        var writer = ByteWriter()
        for v in values { writer.varint(v) }
        try writer.bytes.withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            for v in values { #expect(try reader.varint() == v) }
            #expect(reader.isAtEnd)
        }
        for v in values {
            var one = ByteWriter()
            one.varint(v)
            for cut in 0..<one.bytes.count {
                try Array(one.bytes[..<cut]).withUnsafeBytes { buffer throws in
                    var reader = ByteReader(buffer)
                    let error = #expect(throws: ByteReader.Malformed.self) { try reader.varint() }
                    #expect(error?.reason == "unexpected end")
                    #expect(error?.offset == cut)
                }
            }
        }
    }

    @Test("a ten-byte varint above 64 bits is rejected, naming where it starts")
    func varintOverflow() throws {
        let bytes: [UInt8] = [0x05] + [UInt8](repeating: 0xFF, count: 9) + [0x02]
        try bytes.withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            #expect(try reader.varint() == 5)
            let error = #expect(throws: ByteReader.Malformed.self) { try reader.varint() }
            #expect(error?.reason == "varint overflows 64 bits")
            #expect(error?.offset == 1)
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
