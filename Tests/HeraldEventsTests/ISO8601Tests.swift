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

    @Test("seconds read as the same time without milliseconds, to the ends of Int64")
    func seconds() {
        for seconds: Int64 in [0, -1, 59, 1_754_385_290, -2_208_988_800, 253_402_300_799] {
            #expect(ISO8601.string(seconds: seconds) == String(ISO8601.string(milliseconds: seconds * 1000).prefix(19)) + "Z")
        }
        // `muted: true` is mutedUntil 2147483647; a date, `now` or `mutedUntil` may be any Int64 from 0.
        #expect(ISO8601.string(seconds: 2_147_483_647) == "2038-01-19T03:14:07Z")
        #expect(ISO8601.string(seconds: 253_402_300_800) == "10000-01-01T00:00:00Z")
        #expect(ISO8601.string(seconds: .max) == "292277026596-12-04T15:30:07Z")
        #expect(ISO8601.string(seconds: .min).hasSuffix("Z"))
    }
}
