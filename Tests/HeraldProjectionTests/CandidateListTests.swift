import HeraldEvents
import HeraldTestSupport
import Testing

@testable import HeraldProjection

/// ``CandidateList`` leaves a group's old candidate key in place, stale: with many groups per
/// account (so that stale keys pile up past the compaction threshold), the updates still
/// match ``ReferenceProjection`` event by event, and every invariant holds, stale keys
/// counted.
///
/// Serialized: its cases are CPU-bound, seconds each in a debug build, so one at a time holds
/// a thread of the cooperative pool (see `ExecutorTrait`).
@Suite(.serialized) struct CandidateListTests {
    @Test(arguments: Array(UInt64(1)...4))
    func staleKeysKeepTheUpdatesOfTheReference(seed: UInt64) throws {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 1
        profile.chatsPerAccount = 30 + Int(seed) * 5
        profile.smallOptions = seed % 2 == 0
        var generator = WorkloadGenerator(seed: seed, profile: profile)
        var fast = Projection()
        var reference = ReferenceProjection()
        var mostStale = 0
        for seq in UInt64(1)...3_000 {
            let event = generator.next()
            let updates = fast.apply(event, seq: seq).updates
            let expected = reference.apply(event, seq: seq)
            guard updates == expected else {
                Issue.record("seed \(seed) seq \(seq): \(event.jsonString)")
                return
            }
            for account in fast.accountsByName.values { mostStale = max(mostStale, account.candidateList.stale) }
            if seq % 100 == 0 { fast.checkAllInvariants() }
        }
        #expect(mostStale > 16, "the workload left too few stale keys to test their compaction")
    }
}
