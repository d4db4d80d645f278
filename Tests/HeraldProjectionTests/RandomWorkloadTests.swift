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
}
