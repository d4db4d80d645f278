import Foundation
import HeraldTestSupport
import Testing

/// `herald_http_requests_total` and `herald_http_request_duration_seconds` on `/metrics`.
@Suite("serve: request metrics", .serverThreads)
struct RequestMetricsTests {
    /// One sample of the text exposition format.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Parses the exposition: samples, and the `# TYPE` of each family. Fails the test on a
    /// line that is neither a comment nor `name{label="value",…} number`.
    static func parse(_ text: String) -> (samples: [Sample], types: [String: String]) {
        var samples: [Sample] = []
        var types: [String: String] = [:]
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                Issue.record("not a sample: \(line)")
                continue
            }
            let series = line[..<space]
            var labels: [String: String] = [:]
            var name = String(series)
            if let brace = series.firstIndex(of: "{"), series.last == "}" {
                name = String(series[..<brace])
                let body = series[series.index(after: brace)..<series.index(before: series.endIndex)]
                for pair in body.split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, parts[1].hasPrefix("\""), parts[1].hasSuffix("\"") else {
                        Issue.record("bad label in \(line)")
                        continue
                    }
                    labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
                }
            }
            samples.append(Sample(name: name, labels: labels, value: value))
        }
        return (samples, types)
    }

    @Test("requests are counted by route pattern, method and status, and timed by route")
    func requestsCountedAndTimed() async throws {
        let directory = TemporaryDirectory("serve")
        let server = try await LiveServer(path: directory.path)
        #expect(try await server.request(.GET, "/healthz", token: nil).status == 200)
        #expect(try await server.request(.GET, "/healthz", token: nil).status == 200)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1), token: nil).status == 401)
        #expect(try await server.request(.POST, "/v1/events", body: notifyLine(id: 1)).status == 200)
        #expect(try await server.request(.GET, "/v1/accounts/tg:1/state").status == 200)
        #expect(try await server.request(.GET, "/no/such/route/x9", token: nil).status == 404)

        func count(_ samples: [Sample], route: String, method: String, status: String) -> Double? {
            samples.first {
                $0.name == "herald_http_requests_total" && $0.labels == ["route": route, "method": method, "status": status]
            }?.value
        }
        // Counted once the response is written: scrape until the last request shows.
        var scraped: (samples: [Sample], types: [String: String]) = ([], [:])
        for _ in 0..<50 {
            let metrics = try await server.request(.GET, "/metrics", token: nil)
            #expect(metrics.status == 200)
            scraped = Self.parse(metrics.body)
            if count(scraped.samples, route: "NotFound", method: "GET", status: "404") != nil { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        await server.stop()
        let samples = scraped.samples

        #expect(scraped.types["herald_http_requests_total"] == "counter")
        #expect(scraped.types["herald_http_request_duration_seconds"] == "histogram")
        #expect(count(samples, route: "/healthz", method: "GET", status: "200") == 2)
        #expect(count(samples, route: "/v1/events", method: "POST", status: "401") == 1)
        #expect(count(samples, route: "/v1/events", method: "POST", status: "200") == 1)
        #expect(count(samples, route: "NotFound", method: "GET", status: "404") == 1)
        // The route is the pattern, never the path sent: no account name, no random path.
        let routes = Set(samples.compactMap { $0.labels["route"] })
        #expect(routes.contains { $0.hasPrefix("/v1/accounts/") && $0.hasSuffix("/state") && !$0.contains("tg:1") }, "\(routes)")
        #expect(!routes.contains { $0.contains("tg:1") || $0.contains("x9") }, "\(routes)")

        // The histogram of /healthz: cumulative buckets ending in +Inf = count = 2, and a sum.
        let buckets = samples.filter { $0.name == "herald_http_request_duration_seconds_bucket" && $0.labels["route"] == "/healthz" }
        #expect(buckets.count == 14)
        #expect(buckets.last?.labels["le"] == "+Inf" && buckets.last?.value == 2)
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.value <= $1.value })
        let histogramCount = samples.first { $0.name == "herald_http_request_duration_seconds_count" && $0.labels == ["route": "/healthz"] }
        #expect(histogramCount?.value == 2)
        let sum = samples.first { $0.name == "herald_http_request_duration_seconds_sum" && $0.labels == ["route": "/healthz"] }
        #expect((sum?.value ?? -1) >= 0 && (sum?.value ?? 99) < 10)
        // The process's own figures, under the usual names.
        #expect(scraped.types["process_resident_memory_bytes"] == "gauge")
        #expect(scraped.types["process_open_fds"] == "gauge")
        #expect(scraped.types["process_cpu_seconds_total"] == "counter")
        let value = { (name: String) in samples.first { $0.name == name }?.value ?? -1 }
        #expect(value("process_resident_memory_bytes") > 1_000_000)
        #expect(value("process_open_fds") >= 3)
        #expect(value("process_cpu_seconds_total") > 0)
        // Every sample belongs to a family with a declared type.
        for sample in samples {
            let family = ["_bucket", "_count", "_sum"].reduce(sample.name) { name, suffix in
                scraped.types[name] == nil && name.hasSuffix(suffix) ? String(name.dropLast(suffix.count)) : name
            }
            #expect(scraped.types[family] != nil, "\(sample.name) has no # TYPE")
        }
    }
}
