import HeraldEvents
@testable import HeraldProjection
import HeraldTestSupport
import Testing

/// Byte-identical outputs across rewrites of the projection's internals (issue #27): seeded
/// workloads applied and replayed, their every update stream, state JSON and snapshot bytes
/// folded into one FNV-1a digest per workload. The expected digests were recorded from the
/// projection when it followed SEMANTICS 1.2 (they replaced those of 1.1, recorded at commit
/// `ec1051e`: every one changed, because the state form gained `clock` and `mutedUntil`, the
/// snapshot format became 3, group totals follow 1.2 §7, and the non-realistic workloads
/// now hold 1.2's events); any change of an update, a state or a snapshot byte changes them.
///
/// Serialized: its cases are CPU-bound, seconds each in a debug build, so one at a time holds
/// a thread of the cooperative pool (see `ExecutorTrait`).
@Suite(.serialized) struct GoldenDigestTests {
    /// A workload: its seed, its shape and the digest the original projection produced.
    struct Case: Sendable, CustomTestStringConvertible {
        var seed: UInt64
        var accounts: Int
        var chats: Int
        var realistic: Bool
        var events: Int
        var digest: UInt64
        var testDescription: String { "seed \(seed), \(accounts)×\(chats), \(events) events" }
    }

    static let cases: [Case] = [
        Case(seed: 11, accounts: 3, chats: 6, realistic: false, events: 6_000, digest: 0x3897_656a_8738_b5c8),
        Case(seed: 12, accounts: 1, chats: 3, realistic: false, events: 6_000, digest: 0x488c_e2ba_3c9e_9d69),
        Case(seed: 13, accounts: 20, chats: 30, realistic: true, events: 20_000, digest: 0x6408_07a6_0c1d_e605),
        Case(seed: 14, accounts: 5, chats: 40, realistic: false, events: 10_000, digest: 0x480a_4a19_bd2b_8fa1),
    ]

    /// FNV-1a over bytes, folded into a running digest.
    struct Digest {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        mutating func add<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
            for byte in bytes {
                value ^= UInt64(byte)
                value &*= 0x0000_0100_0000_01b3
            }
        }
    }

    /// The digest of one workload: apply (every update and, every 97 events, the state JSON),
    /// replay (the final state JSON and snapshot), and the snapshot of the applied projection.
    static func digest(of testCase: Case) -> UInt64 {
        var profile = testCase.realistic ? WorkloadGenerator.Profile.realistic : WorkloadGenerator.Profile()
        profile.accounts = testCase.accounts
        profile.chatsPerAccount = testCase.chats
        var generator = WorkloadGenerator(seed: testCase.seed, profile: profile)
        let events = (0..<testCase.events).map { _ in generator.next() }
        var digest = Digest()
        var applied = Projection()
        var replayed = Projection()
        for (index, event) in events.enumerated() {
            let seq = UInt64(index + 1)
            let updates = applied.apply(event, seq: seq).updates
            digest.add(Projection.updatesJSON(seq: seq, account: event.account, updates: updates).utf8)
            replayed.replay(event, seq: seq)
            if index % 97 == 0 {
                digest.add(applied.stateJSON().utf8)
                digest.add(replayed.stateJSON().utf8)
            }
        }
        replayed.settleView()
        digest.add(applied.stateJSON().utf8)
        digest.add(replayed.stateJSON().utf8)
        digest.add(applied.snapshot())
        digest.add(replayed.snapshot())
        return digest.value
    }

    @Test(arguments: cases)
    func outputsMatchTheOriginalProjection(testCase: Case) {
        let digest = Self.digest(of: testCase)
        #expect(digest == testCase.digest, "digest \(String(digest, radix: 16))")
    }
}
