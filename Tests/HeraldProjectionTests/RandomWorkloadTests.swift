import HeraldEvents
@testable import HeraldProjection
import Testing

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
}
