import Hummingbird
import Prometheus
import Synchronization

/// Counts every request and times it, by route, around the whole router (so that requests
/// no route matched are counted too, as route `NotFound`):
/// `herald_http_requests_total{route,method,status}` and the histogram
/// `herald_http_request_duration_seconds{route}`.
///
/// The route is the pattern the router matched (`/v1/accounts/{account}/state`), never the
/// path a client sent, and unusual methods count as `OTHER`, so a scan of random URLs adds
/// no series. The duration runs until the response's last byte is written: for an update
/// stream (`/updates`), until it ends.
struct RequestMetricsResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context: RequestContext {
    typealias Context = Inner.Context
    let inner: Inner
    let metrics: ServerMetrics

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        let method = Self.methods.contains(request.method) ? request.method.rawValue : "OTHER"
        do {
            var response = try await inner.respond(to: request, context: context)
            let status = response.status.code
            // The router stores the matched pattern in a box the context copies share.
            let route = context.endpointPath ?? "NotFound"
            let body = response.body
            // Recorded once the body is written, or its writing failed (the client went away).
            response.body = ResponseBody(contentLength: body.contentLength) { [metrics] writer in
                defer { metrics.request(route: route, method: method, status: status, duration: ContinuousClock.now - started) }
                try await body.write(writer)
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.request(
                route: context.endpointPath ?? "NotFound", method: method, status: status, duration: ContinuousClock.now - started)
            throw error
        }
    }

    /// The methods counted by name.
    static var methods: Set<HTTPRequest.Method> { [.get, .head, .post, .put, .delete, .patch, .options] }
}

extension ServerMetrics {
    /// The request counters and duration histograms made so far, by their labels.
    final class RequestSeries: Sendable {
        let counters = Mutex<[String: Counter]>([:])
        let durations = Mutex<[String: DurationHistogram]>([:])
    }

    /// The buckets of `herald_http_request_duration_seconds`: 1 ms to 10 s.
    static let requestDurationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2_500), .seconds(5), .seconds(10),
    ]

    /// Counts one answered request and records its duration.
    func request(route: String, method: String, status: Int, duration: Duration) {
        let key = route + "\u{0}" + method + "\u{0}" + String(status)
        let counter = requestSeries.counters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = registry.makeCounter(
                descriptor: Self.name("http_requests", "total", "HTTP requests answered, by route pattern, method and status"),
                labels: [("route", route), ("method", method), ("status", String(status))])
            counters[key] = counter
            return counter
        }
        counter.increment()
        let histogram = requestSeries.durations.withLock { durations in
            if let histogram = durations[route] { return histogram }
            let histogram = registry.makeDurationHistogram(
                descriptor: Self.name("http_request_duration", "seconds", "Time from a request to its response's last byte, by route pattern"),
                labels: [("route", route)], buckets: Self.requestDurationBuckets)
            durations[route] = histogram
            return histogram
        }
        histogram.record(duration)
        // The console's latency chart leaves out update streams, which last as long as a client stays.
        if !route.hasSuffix("/updates") {
            activity.request(seconds: Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
    }
}
