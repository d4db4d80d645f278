import HeraldEvents
@testable import HeraldProjection
import Testing

/// ``Projection/replay(_:seq:names:)`` (names interned ahead by a ``NameInterner``) reaches
/// the very state ``Projection/replay(_:seq:)`` does: across revokes (which forget an
/// account's chats), removed accounts (which renumber the projection's accounts), a second
/// interner taking over mid-stream, and events without names mixed in.
@Suite struct InternedReplayTests {
    @Test(arguments: Array(UInt64(300)...307))
    func internedReplayMatchesPlainReplay(seed: UInt64) {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 2 + Int(seed % 4)
        profile.chatsPerAccount = 3 + Int(seed % 5)
        profile.revoke = 2
        var generator = WorkloadGenerator(seed: seed, profile: profile)
        var plain = Projection()
        var interned = Projection()
        var interner = NameInterner(token: .random(in: 1...UInt64.max))
        for index in 0..<4_000 {
            let event = generator.next()
            let seq = UInt64(index + 1)
            plain.replay(event, seq: seq)
            switch index {
            case 1_000, 2_500:
                // A new interner: ids of the old one no longer apply.
                interner = NameInterner(token: .random(in: 1...UInt64.max))
            case 1_800:
                // Removing an account renumbers the others.
                let removed = plain.accounts[Int(seed) % plain.accounts.count]
                plain.removeAccount(removed)
                interned.removeAccount(removed)
            default:
                break
            }
            let names = interner.names(of: event)
            if index % 13 == 5 {
                interned.replay(event, seq: seq)
            } else {
                interned.replay(event, seq: seq, names: names)
            }
            if index % 250 == 0 { #expect(interned == plain, "seed \(seed): differs at seq \(seq)") }
        }
        plain.settleView()
        interned.settleView()
        #expect(interned == plain)
        #expect(interned.stateJSON() == plain.stateJSON())
        #expect(interned.snapshot() == plain.snapshot())
    }

    /// ``Projection/apply(_:seq:names:)`` gives the updates and changes, and reaches the state,
    /// of ``Projection/apply(_:seq:)``, under the same interner changes, account removals and
    /// events without names; replays by id mixed in leave it stale as they should.
    @Test(arguments: Array(UInt64(320)...325))
    func internedApplyMatchesPlainApply(seed: UInt64) {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 2 + Int(seed % 4)
        profile.chatsPerAccount = 3 + Int(seed % 5)
        profile.revoke = 2
        var generator = WorkloadGenerator(seed: seed, profile: profile)
        let configuration = Projection.Configuration(recordsChanges: seed % 2 == 0)
        var plain = Projection(configuration: configuration)
        var interned = Projection(configuration: configuration)
        var interner = NameInterner(token: .random(in: 1...UInt64.max))
        for index in 0..<4_000 {
            let event = generator.next()
            let seq = UInt64(index + 1)
            switch index {
            case 1_000, 2_500:
                interner = NameInterner(token: .random(in: 1...UInt64.max))
            case 1_800:
                let removed = plain.accounts[Int(seed) % plain.accounts.count]
                plain.removeAccount(removed)
                interned.removeAccount(removed)
            default:
                break
            }
            let names = interner.names(of: event)
            if index % 17 == 3 {
                plain.replay(event, seq: seq)
                interned.replay(event, seq: seq, names: names)
                continue
            }
            let expected = plain.apply(event, seq: seq)
            let outcome = index % 13 == 5 ? interned.apply(event, seq: seq) : interned.apply(event, seq: seq, names: names)
            #expect(outcome == expected, "seed \(seed): outcome differs at seq \(seq)")
            if index % 250 == 0 { #expect(interned == plain, "seed \(seed): differs at seq \(seq)") }
        }
        #expect(interned == plain)
        #expect(interned.stateJSON() == plain.stateJSON())
        #expect(interned.snapshot() == plain.snapshot())
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
