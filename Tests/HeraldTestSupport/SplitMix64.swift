// HeraldTestSupport: what every test target shares, so no suite carries its own copy.
// Benchmarks' HeraldWorkload compiles this file too, by symlink.

/// A small, fast, seeded generator (SplitMix64): random workloads and fuzz cases replay
/// exactly from their seed, so a failure reproduces.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64

    /// Starts the sequence of `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// True with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
