/// Checks, record by record, that the keys a reader meets are the seqs the history says are
/// there: strictly increasing, and contiguous but where a recorded purge (`gaps`) or the
/// compaction base explains the gap. A record's checksum covers its value, not its key, so
/// without this a bit flipped in a key, or a record lost with a damaged page, would go
/// unnoticed: a seq read twice, or a shorter history read as if whole.
struct SeqContinuity {
    /// Seqs at most this may be absent, or linger (records an interrupted compaction left).
    let floor: UInt64
    let gaps: [ClosedRange<UInt64>]
    /// The next seq that must be present.
    private(set) var expected: UInt64
    private var gapIndex = 0
    private var last: UInt64?

    /// A checker for a read that starts at `from`.
    init(from: UInt64, floor: UInt64, gaps: [ClosedRange<UInt64>]) {
        self.floor = floor
        self.gaps = gaps
        expected = 0
        expected = skippingGaps(max(from, floor &+ 1))
    }

    /// The first seq at or after `seq` that no gap covers.
    private mutating func skippingGaps(_ seq: UInt64) -> UInt64 {
        var seq = seq
        while gapIndex < gaps.count {
            let gap = gaps[gapIndex]
            if gap.upperBound < seq {
                gapIndex += 1
            } else if gap.lowerBound <= seq {
                seq = gap.upperBound &+ 1
                gapIndex += 1
            } else {
                break
            }
        }
        return seq
    }

    /// What is wrong with meeting key `seq` next, or `nil` when it is the one expected.
    mutating func accept(_ seq: UInt64) -> (seq: UInt64, reason: String)? {
        defer { last = seq }
        if let last, seq <= last {
            return (seq, "the key after seq \(last) is seq \(seq): keys repeated or out of order (a damaged key)")
        }
        guard seq > floor, seq >= expected else { return nil }
        if seq > expected {
            let missing = expected == seq - 1 ? "seq \(expected) is missing" : "seqs \(expected)…\(seq - 1) are missing"
            return (expected, "\(missing) (the next key is seq \(seq)) and no purge or compaction recorded the gap")
        }
        expected = skippingGaps(seq &+ 1)
        return nil
    }

    /// What is missing when the read ends having asked for seqs through `through`, which
    /// should all be present (but the gaps), or `nil`.
    mutating func finish(through: UInt64) -> (seq: UInt64, reason: String)? {
        guard expected <= through else { return nil }
        let missing = expected == through ? "seq \(expected) is missing" : "seqs \(expected)…\(through) are missing"
        return (expected, "\(missing) and no purge recorded the gap")
    }
}
