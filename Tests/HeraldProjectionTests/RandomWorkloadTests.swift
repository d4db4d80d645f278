import HeraldEvents
@testable import HeraldProjection
import Testing
import HeraldTestSupport

/// The fast projection checked event by event against ``ReferenceProjection`` on seeded
/// random workloads: the same updates and the same state JSON after every event.
@Suite struct RandomWorkloadTests {
    static let seeds: [UInt64] = Array(1...40)

    @Test(arguments: seeds)
    func matchesReference(seed: UInt64) throws {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 1 + Int(seed % 4)
        profile.chatsPerAccount = 2 + Int(seed % 7)
        var generator = WorkloadGenerator(seed: seed, profile: profile)
        let configuration: Projection.Configuration =
            seed % 10 == 7 ? .init(groupCountMaxOverride: 3, groupSizeMaxOverride: 2) : .init(recordsChanges: seed % 2 == 0)
        var fast = Projection(configuration: configuration)
        var reference = ReferenceProjection(configuration: configuration)
        for seq in UInt64(1)...2_600 {
            let event = generator.next()
            try event.validate()
            let updates = fast.apply(event, seq: seq).updates
            let expected = reference.apply(event, seq: seq)
            let name = event.account
            guard updates == expected else {
                Issue.record("""
                    seed \(seed) seq \(seq): \(event.jsonString)
                      fast:      \(Projection.updatesJSON(seq: seq, account: name, updates: updates))
                      reference: \(Projection.updatesJSON(seq: seq, account: name, updates: expected))
                    """)
                return
            }
            if seq % 16 == 0 {
                let state = fast.stateJSON(accounts: name)
                let expectedState = "{\"seq\":\(seq),\"accounts\":[\(reference.accountJSON(name))]}"
                guard state == expectedState else {
                    Issue.record("seed \(seed) seq \(seq): \(event.jsonString)\n  fast:      \(state)\n  reference: \(expectedState)")
                    return
                }
            }
            if seq % 500 == 0 { fast.checkAllInvariants() }
        }
        fast.checkAllInvariants()
    }

    /// `replay` (no updates) reaches the very state `apply` does, so applying can resume
    /// after it with identical updates.
    @Test(arguments: Array(UInt64(100)...107))
    func replayMatchesApply(seed: UInt64) {
        var generator = WorkloadGenerator(seed: seed)
        let events = (0..<2_000).map { _ in generator.next() }
        let configuration = Projection.Configuration(recordsChanges: seed % 2 == 0)
        var applied = Projection(configuration: configuration)
        var replayed = Projection(configuration: configuration)
        let switchOver = 500 + Int(seed % 7) * 150
        for (index, event) in events.enumerated() {
            let seq = UInt64(index + 1)
            let outcome = applied.apply(event, seq: seq)
            if index < switchOver {
                replayed.replay(event, seq: seq)
                if index % 50 == 0 { #expect(replayed == applied, "seed \(seed): replay differs at seq \(seq)") }
            } else {
                #expect(replayed.apply(event, seq: seq) == outcome, "seed \(seed): updates differ at seq \(seq)")
            }
        }
        #expect(replayed == applied)
    }

    /// Replays leave the view stale until it is read, applied to or settled: runs of replays
    /// alternating with applies (each taking over a stale view), reads of the unsettled view
    /// and explicit settles all see what applying every event shows, in a tight view
    /// (3 groups of 2) that replays push groups in and out of.
    @Test(arguments: Array(UInt64(200)...205))
    func staleViewsReadLikeApplied(seed: UInt64) {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 1 + Int(seed % 3)
        var generator = WorkloadGenerator(seed: seed, profile: profile)
        var random = SplitMix64(seed: seed)
        let configuration = Projection.Configuration(groupCountMaxOverride: seed % 2 == 0 ? 3 : nil, groupSizeMaxOverride: 2)
        var applied = Projection(configuration: configuration)
        var mixed = Projection(configuration: configuration)
        var seq: UInt64 = 0
        while seq < 3_000 {
            let replays = Int(random.next() % 40)
            for _ in 0..<replays {
                seq += 1
                let event = generator.next()
                _ = applied.apply(event, seq: seq)
                mixed.replay(event, seq: seq)
            }
            // Read without settling: a settled copy answers.
            for name in applied.accounts {
                guard mixed.activeNotifications(account: name) == applied.activeNotifications(account: name),
                    mixed.account(name) == applied.account(name)
                else {
                    Issue.record("seed \(seed): unsettled view of \(name) differs at seq \(seq)")
                    return
                }
            }
            switch random.next() % 3 {
            case 0: mixed.settleView()
            case 1:
                // Apply on top of the stale view: the same updates.
                seq += 1
                let event = generator.next()
                guard mixed.apply(event, seq: seq) == applied.apply(event, seq: seq) else {
                    Issue.record("seed \(seed): updates after replays differ at seq \(seq)")
                    return
                }
            default: break
            }
        }
        #expect(mixed == applied)
        mixed.settleView()
        mixed.checkAllInvariants()
        #expect(mixed.snapshot() == applied.snapshot())
        // Removing an account renumbers the others: their stale views must survive it.
        seq += 1
        let event = generator.next()
        _ = applied.apply(event, seq: seq)
        mixed.replay(event, seq: seq)
        if let first = applied.accounts.first {
            applied.removeAccount(first)
            mixed.removeAccount(first)
        }
        #expect(mixed == applied)
        mixed.checkAllInvariants()
    }
}
