import HeraldEvents
@testable import HeraldProjection
@testable import HeraldStore
import HeraldTestSupport
import Testing

/// The rebuild's decoder (`LogRecord.decodeEvent(_:interner:)`), which decodes an event
/// whose names its interner has met with the names it keeps, against
/// `decodeEvent(_:names:)`: the same events and ids, and damage reported the same way.
@Suite("Decoding with interned names")
struct InternedDecodingTests {
    /// The stored bytes of `event` with a valid checksum.
    static func record(_ event: Event) -> [UInt8] {
        LogRecord(seq: 1, recordedAt: 1_700_000_000_000, source: .library, event: event).encoded
    }

    /// `bytes` with its checksum recomputed, so that only the event's own checks can refuse it.
    static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 6 else { return bytes }
        var body = Array(bytes[..<(bytes.count - 4)])
        let crc = body.withUnsafeBytes { CRC32C.checksum($0) }
        body += [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
        return body
    }

    /// Decodes `bytes` both ways, each with an interner that has already interned `seen`'s
    /// names; expects the same event and ids, or the same damage.
    static func expectSameOutcome(_ bytes: [UInt8], seen: [Event]) {
        let fast = DecodingInterner()
        var plain = NameInterner(token: .random(in: 1...UInt64.max))
        for event in seen {
            let seenBytes = record(event)
            _ = seenBytes.withUnsafeBytes { try? LogRecord.decodeEvent($0, interner: fast) }
            _ = seenBytes.withUnsafeBytes { try? LogRecord.decodeEvent($0) { plain.names(account: $0, chat: $1) } }
        }
        let expected = Self.outcome { try bytes.withUnsafeBytes { try LogRecord.decodeEvent($0) { plain.names(account: $0, chat: $1) } } }
        let got = Self.outcome { try bytes.withUnsafeBytes { try LogRecord.decodeEvent($0, interner: fast) } }
        switch (expected, got) {
        case (.success(let a), .success(let b)):
            #expect(a.event == b.event, "\(bytes)")
            #expect(a.names.account == b.names.account && a.names.chat == b.names.chat, "\(bytes)")
        case (.failure(let a), .failure(let b)):
            #expect(a == b, "\(bytes)")
        default:
            Issue.record("one way decoded, the other refused: \(expected) / \(got) for \(bytes)")
        }
    }

    /// What `decode` returned, or the damage it threw.
    static func outcome(
        _ decode: () throws -> (event: Event, names: InternedNames)
    ) -> Result<(event: Event, names: InternedNames), LogRecord.Damage> {
        do {
            return .success(try decode())
        } catch let damage as LogRecord.Damage {
            return .failure(damage)
        } catch {
            preconditionFailure("a decoder threw something else than Damage: \(error)")
        }
    }

    @Test("seeded events decode to the same events and ids, names met or not")
    func seededEvents() {
        let events = randomEvents(count: 300, seed: 11)
        for (index, event) in events.enumerated() {
            Self.expectSameOutcome(Self.record(event), seen: Array(events[..<index]))
        }
    }

    @Test("damaged records with a valid checksum: the same damage reported")
    func damaged() {
        var rng = SystemRandomNumberGenerator()
        let events = randomEvents(count: 60, seed: 12)
        for event in events {
            let bytes = Self.record(event)
            for length in 6..<bytes.count { Self.expectSameOutcome(Self.resealed(Array(bytes[..<length])), seen: [event]) }
            for _ in 0..<40 {
                var damaged = bytes
                damaged[Int.random(in: 0..<(damaged.count - 4), using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                Self.expectSameOutcome(Self.resealed(damaged), seen: [event])
                Self.expectSameOutcome(damaged, seen: [event])
            }
        }
    }
}
