import Synchronization

/// Token buckets by key, for rate limits: each key may spend `rate` requests per second on
/// average and `burst` at once. Used per bearer token (`herald.rate.limit`) and per
/// unauthenticated endpoint (`herald.ratelimit.endpoint.*`: a Web Push subscription, a
/// Matrix pushkey). Keys should be bounded by what the server knows (registered endpoints,
/// stored tokens), never taken from requests unchecked; buckets that have refilled are
/// dropped once there are ``pruneAbove`` of them.
final class TokenBuckets: Sendable {
    /// Requests per second; 0: no limit.
    let rate: Double
    /// The most requests a key may make at once.
    let burst: Double
    private let buckets = Mutex<[String: (tokens: Double, at: ContinuousClock.Instant)]>([:])
    /// How many buckets are kept before the full ones are dropped.
    static let pruneAbove = 10_000

    init(rate: Int, burst: Int) {
        self.rate = Double(max(0, rate))
        self.burst = Double(max(1, burst))
    }

    /// Whether it limits anything.
    var isLimiting: Bool { rate > 0 }

    /// Takes one request from `key`'s bucket: `nil` when it was there, else the seconds
    /// (at least 1) until one will be, for `Retry-After`.
    func take(_ key: String, now: ContinuousClock.Instant = .now) -> Int? {
        guard rate > 0 else { return nil }
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? (tokens: burst, at: now)
            let elapsed = now - bucket.at
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.at = now
            defer { buckets[key] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))) }
            bucket.tokens -= 1
            if buckets.count > Self.pruneAbove { prune(&buckets, now: now) }
            return nil
        }
    }

    /// Drops the buckets that would be full by `now` (as good as absent).
    private func prune(_ buckets: inout [String: (tokens: Double, at: ContinuousClock.Instant)], now: ContinuousClock.Instant) {
        let refill = Duration.seconds(burst / rate)
        buckets = buckets.filter { now - $0.value.at < refill }
    }
}
