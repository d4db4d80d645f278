import Foundation
import HeraldEvents
import HeraldTestSupport
import Testing

@Suite("ISO 8601 times")
struct ISO8601Tests {
    @Test("matches Foundation's formatter to the millisecond, before and after the epoch, across leap days")
    func matchesFoundation() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var rng = SplitMix64(seed: 8601)
        var samples: [Int64] = [0, -1, 999, -1_000, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, 1_754_385_290_123, -2_208_988_800_000]
        for _ in 0..<2_000 { samples.append(Int64.random(in: -5_000_000_000_000...8_000_000_000_000, using: &rng)) }
        for milliseconds in samples {
            let (seconds, millis) = milliseconds.quotientAndRemainder(dividingBy: 1000)
            let (whole, fraction) = millis < 0 ? (seconds - 1, millis + 1000) : (seconds, millis)
            let foundation = style.format(Date(timeIntervalSince1970: Double(whole)))
            let expected = String(foundation.prefix(19)) + "." + String(format: "%03d", fraction) + "Z"
            #expect(ISO8601.string(milliseconds: milliseconds) == expected, "\(milliseconds)")
        }
        #expect(ISO8601.string(milliseconds: 1_754_385_290_123) == "2025-08-05T09:14:50.123Z")
    }
}
