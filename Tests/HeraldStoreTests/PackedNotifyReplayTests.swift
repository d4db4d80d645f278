import HeraldEvents
@testable import HeraldProjection
@testable import HeraldStore
import HeraldTestSupport
import Testing

/// The rebuild's batches (`ReplayBatch` filled from stored records), which keep a `notify`
/// whose names the run has met as bytes and replay it through `PackedNotify`, and decode any
/// other event whose names it has met with the names it keeps, against applying the events
/// themselves: the same state, and damage reported the same way.
@Suite("Packed notify replay")
struct PackedNotifyReplayTests {
    static let texts: [String?] = [nil, "", "hi", "Alice", "üñî©ødé ✓", "a body long enough to need an allocation of its own"]

    /// Events over accounts and chats that keep appearing (names first seen anywhere in a
    /// batch), mostly notifies with every mix of title and texts, partial ones upgraded by
    /// full ones for the same ids, edits, reads, deletes, settings and revokes (after which
    /// the projection meets known ids of chats it has forgotten).
    static func events(count: Int, seed: UInt64) -> [Event] {
        var rng = SplitMix64(seed: seed)
        var events: [Event] = []
        for i in 0..<count {
            let accounts = min(1 + i / 40, 6)
            let account = "acct:\(Int.random(in: 0..<accounts, using: &rng))"
            let chat = "chat:\(Int.random(in: 0..<min(2 + i / 15, 30), using: &rng))"
            let id = Int64.random(in: 1...60, using: &rng)
            let kind = NotificationKind.allCases.randomElement(using: &rng)!
            let payload: Event.Payload
            switch Int.random(in: 0..<20, using: &rng) {
            case 0..<13:
                payload = .notify(.init(
                    chat: chat, kind: Int.random(in: 0..<3, using: &rng) == 0 ? kind : .message, id: id,
                    date: 1_700_000_000 + Int64(i), silent: Bool.random(using: &rng), partial: Bool.random(using: &rng),
                    title: texts.randomElement(using: &rng)!, body: texts.randomElement(using: &rng)!,
                    sender: texts.randomElement(using: &rng)!, thread: texts.randomElement(using: &rng)!))
            case 13, 14:
                payload = .edit(.init(
                    chat: chat, kind: .message, id: id, title: texts.randomElement(using: &rng)!,
                    body: texts.randomElement(using: &rng)!, partial: Bool.random(using: &rng)))
            case 15: payload = .read(chat: chat, maxId: Int64.random(in: 1...40, using: &rng))
            case 16: payload = .delete(ids: [id], chat: Bool.random(using: &rng) ? chat : nil)
            case 17: payload = .chatSettings(.init(chat: chat, muted: Bool.random(using: &rng)))
            case 18: payload = .dismiss(notificationId: Int64.random(in: 1...50, using: &rng))
            default: payload = Int.random(in: 0..<4, using: &rng) == 0 ? .revoke : .note(source: "test", reason: nil)
            }
            events.append(Event(account: account, payload))
        }
        return events
    }

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

    /// Replays `events` (seqs from 1) through batches of `batchSize` records, as a rebuild
    /// does; also returns how many of them the batches kept as packed notifies.
    static func batchReplay(_ events: [Event], batchSize: Int) throws -> (Projection, packed: Int) {
        var projection = Projection()
        let interner = DecodingInterner()
        var batch = ReplayBatch()
        var packed = 0
        for start in stride(from: 0, to: events.count, by: batchSize) {
            batch.empty(reservingCapacity: batchSize)
            for index in start..<min(start + batchSize, events.count) {
                try Self.record(events[index]).withUnsafeBytes {
                    try batch.add(seq: UInt64(index + 1), record: $0, interner: interner)
                }
            }
            packed += batch.packedCount
            projection.replay(batch)
        }
        projection.settleView()
        return (projection, packed)
    }

    @Test("seeded events: packed batches end byte-identical to applying them one by one, and applying goes on alike",
          arguments: [1, 7, 64, 5_000])
    func sameState(batchSize: Int) throws {
        for seed: UInt64 in [41, 42, 43] {
            let events = Self.events(count: 1_700, seed: seed)
            var expected = Projection()
            for (index, event) in events[..<1_500].enumerated() { _ = expected.apply(event, seq: UInt64(index + 1)) }
            var (replayed, packed) = try Self.batchReplay(Array(events[..<1_500]), batchSize: batchSize)
            #expect(packed > 750, "most notifies take the packed path")
            #expect(replayed == expected)
            #expect(replayed.snapshot() == expected.snapshot())
            #expect(replayed.stateJSON() == expected.stateJSON())
            for (offset, event) in events[1_500...].enumerated() {
                let seq = UInt64(1_501 + offset)
                #expect(replayed.apply(event, seq: seq) == expected.apply(event, seq: seq))
            }
        }
    }

    /// Decodes `bytes` after `seen` into a batch and into an event (`decodeEvent(_:names:)`),
    /// expecting the same damage, or the same state once replayed after `seen`.
    static func expectSameOutcome(_ bytes: [UInt8], seen: Event) {
        let interner = DecodingInterner()
        var batch = ReplayBatch()
        var plain = NameInterner(token: .random(in: 1...UInt64.max))
        var viaBatch = Projection()
        var viaEvent = Projection()
        Self.record(seen).withUnsafeBytes { seenBytes in
            try! batch.add(seq: 1, record: seenBytes, interner: interner)
            _ = try! LogRecord.decodeEvent(seenBytes) { plain.names(account: $0, chat: $1) }
        }
        viaBatch.replay(batch)
        viaEvent.replay(seen, seq: 1)
        batch.empty(reservingCapacity: 1)
        let expected = bytes.withUnsafeBytes { bytes in
            Result { () throws(LogRecord.Damage) in try LogRecord.decodeEvent(bytes) { plain.names(account: $0, chat: $1) }.event }
        }
        let got = bytes.withUnsafeBytes { bytes in
            Result { () throws(LogRecord.Damage) in try batch.add(seq: 2, record: bytes, interner: interner) }
        }
        switch (expected, got) {
        case (.success(let event), .success):
            viaEvent.replay(event, seq: 2)
            viaBatch.replay(batch)
            #expect(viaBatch == viaEvent, "\(bytes)")
            #expect(viaBatch.snapshot() == viaEvent.snapshot(), "\(bytes)")
        case (.failure(let a), .failure(let b)):
            #expect(a == b, "\(bytes)")
        default:
            Issue.record("one way decoded, the other refused: \(expected) / \(got) for \(bytes)")
        }
    }

    @Test("damaged records of every type, resealed or not: the same damage reported, or the same state")
    func damaged() {
        var rng = SplitMix64(seed: 45)
        let notifies = Self.events(count: 200, seed: 46).filter { if case .notify = $0.payload { true } else { false } }
        for event in notifies.prefix(40) + randomEvents(count: 40, seed: 12) {
            let bytes = Self.record(event)
            for length in 6..<bytes.count {
                Self.expectSameOutcome(Self.resealed(Array(bytes[..<length])), seen: event)
            }
            for _ in 0..<40 {
                var damaged = bytes
                damaged[Int.random(in: 0..<(damaged.count - 4), using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                Self.expectSameOutcome(Self.resealed(damaged), seen: event)
                Self.expectSameOutcome(damaged, seen: event)
            }
        }
    }
}
