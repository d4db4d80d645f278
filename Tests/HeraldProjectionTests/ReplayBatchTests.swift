import HeraldEvents
@testable import HeraldProjection
import HeraldTestSupport
import Testing

/// ``Projection/replay(_:)`` of ``ReplayBatch``es reaches the very state applying each event
/// reaches, so that applying can resume after it with identical updates: batches of every
/// size, reused (their interned names kept) or fresh (a new interner taking over), across
/// revokes (which forget an account's chats) and removed accounts (which renumber the
/// projection's accounts).
@Suite struct ReplayBatchTests {
    @Test(arguments: Array(UInt64(300)...307))
    func batchReplayMatchesApply(seed: UInt64) {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 2 + Int(seed % 4)
        profile.chatsPerAccount = 3 + Int(seed % 5)
        profile.revoke = 2
        var generator = WorkloadGenerator(seed: seed, profile: profile)
        var random = SplitMix64(seed: seed)
        let configuration = Projection.Configuration(recordsChanges: seed % 2 == 0)
        var applied = Projection(configuration: configuration)
        var replayed = Projection(configuration: configuration)
        var batch = ReplayBatch()
        var seq: UInt64 = 0
        for round in 0..<40 {
            let size = [1, 7, 100, 250][Int(random.next() % 4)]
            // A fresh batch now and then: ids of another interner arrive.
            if random.next() % 4 == 0 { batch = ReplayBatch() } else { batch.removeAll() }
            for _ in 0..<size {
                let event = generator.next()
                seq += 1
                _ = applied.apply(event, seq: seq)
                batch.append(event, seq: seq)
            }
            #expect(batch.count == size && batch.lastSeq == seq)
            replayed.replay(batch)
            #expect(replayed.seq == seq)
            guard replayed == applied else {
                Issue.record("seed \(seed): batch of \(size) ending at seq \(seq) differs")
                return
            }
            if round == 20, let removed = applied.accounts.first {
                // Removing an account renumbers the others.
                applied.removeAccount(removed)
                replayed.removeAccount(removed)
            }
            if round % 5 == 4 {
                // Applying resumes on the replayed state with the same updates.
                let event = generator.next()
                seq += 1
                #expect(replayed.apply(event, seq: seq) == applied.apply(event, seq: seq), "seed \(seed): seq \(seq)")
            }
        }
        replayed.settleView()
        replayed.checkAllInvariants()
        #expect(replayed == applied)
        #expect(replayed.stateJSON() == applied.stateJSON())
        #expect(replayed.snapshot() == applied.snapshot())
    }

    /// A batch built from pairs equals one built event by event, and an empty batch changes
    /// nothing.
    @Test func batchFromPairs() {
        var generator = WorkloadGenerator(seed: 9)
        let events = (0..<300).map { _ in generator.next() }
        var fromPairs = Projection()
        fromPairs.replay(ReplayBatch(events.enumerated().map { ($0.element, UInt64($0.offset + 1) * 2) }))
        var applied = Projection()
        for (index, event) in events.enumerated() { _ = applied.apply(event, seq: UInt64(index + 1) * 2) }
        #expect(fromPairs == applied)
        fromPairs.replay(ReplayBatch())
        #expect(fromPairs == applied)
        #expect(ReplayBatch().isEmpty && ReplayBatch().lastSeq == nil)
    }

    /// Interning names from an encoded event's bytes (as the store's decoder does) gives the
    /// ids interning them from the event gives.
    @Test(arguments: Array(UInt64(310)...313))
    func namesFromBytesMatchNamesFromEvents(seed: UInt64) throws {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 3 + Int(seed % 3)
        profile.chatsPerAccount = 4 + Int(seed % 4)
        var generator = WorkloadGenerator(seed: seed, profile: profile)
        var fromEvents = NameInterner(token: .random(in: 1...UInt64.max))
        var fromBytes = NameInterner(token: .random(in: 1...UInt64.max))
        for _ in 0..<2_000 {
            let event = generator.next()
            let expected = fromEvents.names(of: event)
            let binary = event.binary
            let names = try binary.withUnsafeBytes { bytes in
                let encoded = try Event.encodedNames(ByteReader(bytes))
                return fromBytes.names(account: encoded.account, chat: encoded.chat)
            }
            #expect(names.account == expected.account && names.chat == expected.chat, "\(event.jsonString)")
        }
    }
}
