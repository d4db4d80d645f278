import Configuration
import Crypto
import Foundation
import HeraldServer
import HeraldTestSupport
import Synchronization
import Testing

/// `herald.public.url`, the configuration keys as `Tools/SERVE.md` documents them, and the
/// JSON forms of `herald serve pushkeys` and `subscriptions`.
@Suite("serve: public URL, documented keys, registration listings", .serverThreads)
struct PublicURLTests {
    @Test("a public URL is an http(s) URL with a host and no query or fragment; endpoints go under it, prefix kept")
    func parsing() throws {
        let plain = try PublicURL("https://push.example.com")
        #expect(plain.endpoint(token: "T") == "https://push.example.com/push/T" && plain.origin == "https://push.example.com")
        let prefixed = try PublicURL("HTTPS://Example.com:443/herald//")
        #expect(prefixed.endpoint(token: "T") == "https://example.com/herald/push/T" && prefixed.origin == "https://example.com")
        #expect(try PublicURL("http://10.0.0.1:8080/").origin == "http://10.0.0.1:8080")
        #expect(try PublicURL("http://[::1]:8080").endpoint(token: "T") == "http://[::1]:8080/push/T")
        for bad in ["ftp://example.com", "https://", "push.example.com", "https://example.com/?a=1", "https://example.com/#x",
                    "https://user@example.com", "https://example.com:99999", ""] {
            #expect(throws: ServerError.self, "\(bad)") { try PublicURL(bad) }
            do { _ = try PublicURL(bad) } catch let error as ServerError { #expect(error.field == "herald.public.url" && error.status == .badRequest) }
        }
        let read = try ServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: ["herald.public.url": "https://p.example/x/"])))
        #expect(read.publicURL?.base == "https://p.example/x")
        #expect(try ServerConfiguration(reading: ConfigReader(provider: InMemoryProvider(values: [:]))).publicURL == nil)
    }

    /// Records every key a reader is asked for, with the value it answered (the default when
    /// no provider has one).
    final class Recorder: AccessReporter {
        let reads = Mutex<[String: ConfigValue?]>([:])
        func report(_ event: AccessEvent) {
            reads.withLock { $0.updateValue(try? event.result.get(), forKey: event.metadata.key.description) }  // a key read without a value is kept, as nil
        }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Records whether `line` has every member `schema/NAME` requires and none it does not list.
    static func expectConforms(_ line: [String: Any], to name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let schema = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: root.appendingPathComponent("schema/" + name))) as? [String: Any])
        let required = Set(schema["required"] as? [String] ?? [])
        let allowed = Set((schema["properties"] as? [String: Any] ?? [:]).keys)
        let keys = Set(line.keys)
        #expect(required.isSubset(of: keys) && keys.isSubset(of: allowed), "\(line) against \(name)", sourceLocation: sourceLocation)
    }

    /// The rows of `Tools/SERVE.md`'s configuration table: key → cells.
    static func documentedKeys() throws -> [String: [String]] {
        let text = try String(contentsOf: root.appendingPathComponent("Tools/SERVE.md"), encoding: .utf8)
        var rows: [String: [String]] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `herald.") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            rows[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = cells
        }
        return rows
    }

    @Test("Tools/SERVE.md lists every key the configuration reader reads, with the default it applies")
    func everyKeyDocumented() throws {
        let recorder = Recorder()
        // Nothing set: every key reports its default. Then a retention limit, so that the
        // keys read only with retention on are read as well.
        _ = try ServerConfiguration(reading: ConfigReader(providers: [InMemoryProvider(values: [:])], accessReporter: recorder))
        let retention = Recorder()
        _ = try ServerConfiguration(
            reading: ConfigReader(providers: [InMemoryProvider(values: ["herald.retention.max.bytes": 1])], accessReporter: retention))
        let reads = recorder.reads.withLock { $0 }.merging(retention.reads.withLock { $0 }) { first, _ in first }
        #expect(reads.count >= 14, "\(reads.keys.sorted())")
        let documented = try Self.documentedKeys()
        for (key, value) in reads.sorted(by: { $0.key < $1.key }) {
            guard let cells = documented[key] else {
                Issue.record("Tools/SERVE.md has no row for \(key)")
                continue
            }
            // The default cell: the value the reader applies (STORE for the store's path), or "none".
            let defaultCell = cells[cells.count - 2]
            let expected: String
            switch value?.content {
            case .int(let number)?: expected = "`\(number)`"
            case .string(let text)?: expected = "`" + text.replacingOccurrences(of: "./herald.db/", with: "STORE/") + "`"
            default: expected = "none"
            }
            #expect(defaultCell.hasPrefix(expected), "\(key): SERVE.md says \(defaultCell), the reader applies \(expected)")
            #expect(cells.contains { $0.contains("HERALD_" + key.dropFirst("herald.".count).uppercased().replacingOccurrences(of: ".", with: "_")) }, "\(key)")
        }
        for key in documented.keys where reads[key] == nil {
            Issue.record("Tools/SERVE.md lists \(key), which the reader does not read")
        }
    }

    @Test("herald serve refuses a bad public URL naming the key; subscriptions print absolute endpoints from the flag or the environment")
    func cli() throws {
        let directory = TemporaryDirectory("serve")
        let herald = ServeProcessTests.executable
        let refused = try shell("timeout 20 \(quoted(herald)) serve --store \(quoted(directory.child("s"))) --listen 127.0.0.1:0 --public-url ftp://push.example.com")
        #expect(refused.status != 0 && refused.status != 124, "\(refused)")
        #expect(refused.stderr.contains("herald.public.url") && refused.stderr.contains("http or https"), "\(refused.stderr)")

        let added = try run(herald, ["serve", "subscriptions", "add", "--store", directory.path, "--account", "tg:4", "--json", "--public-url", "https://push.example.com/h/"])
        #expect(added.status == 0, "\(added.output)")
        let token = try #require(object(added.output)["token"] as? String)
        #expect(object(added.output)["endpoint"] as? String == "https://push.example.com/h/push/\(token)")
        try Self.expectConforms(object(added.output), to: "subscription-line.schema.json")
        let vapidKey = VAPIDTests.base64url(P256.Signing.PrivateKey().publicKey.x963Representation)
        let bound = try run(herald, ["serve", "subscriptions", "add", "--store", directory.path, "--account", "tg:5", "--json", "--vapid-key", vapidKey])
        #expect(object(bound.output)["vapid_key"] as? String == vapidKey && object(bound.output)["endpoint"] as? String == "/push/\(object(bound.output)["token"] as? String ?? "")", "\(bound.output)")
        try Self.expectConforms(object(bound.output), to: "subscription-line.schema.json")
        let listed = try shell("HERALD_PUBLIC_URL=http://10.1.2.3:8080 \(quoted(herald)) serve subscriptions list --store \(quoted(directory.path)) --account tg:4")
        #expect(listed.status == 0 && listed.stdout.hasPrefix("http://10.1.2.3:8080/push/\(token)\ttg:4\therald\t"), "\(listed)")
        let badEnvironment = try shell("HERALD_PUBLIC_URL='https://x.example/?q' \(quoted(herald)) serve subscriptions list --store \(quoted(directory.path))")
        #expect(badEnvironment.status != 0 && badEnvironment.stderr.contains("herald.public.url"), "\(badEnvironment)")
        let badKey = try run(herald, ["serve", "subscriptions", "add", "--store", directory.path, "--account", "tg:4", "--vapid-key", "AAAA"])
        #expect(badKey.status != 0 && badKey.output.contains("vapid_key"), "\(badKey.output)")
    }

    @Test("herald serve pushkeys list --json prints one object per line, as GET /v1/admin/pushkeys lists them")
    func pushkeysJSON() throws {
        let directory = TemporaryDirectory("serve")
        let herald = ServeProcessTests.executable
        let added = try run(herald, ["serve", "pushkeys", "add", "--store", directory.path, "--pushkey", "pk1", "--account", "mx:@a:x", "--app-id", "org.app", "--json"])
        #expect(added.status == 0 && object(added.output)["pushkey"] as? String == "pk1", "\(added.output)")
        #expect(try run(herald, ["serve", "pushkeys", "add", "--store", directory.path, "--pushkey", "pk2", "--account", "mx:@b:x"]).status == 0)
        let listed = try run(herald, ["serve", "pushkeys", "list", "--store", directory.path, "--json"])
        let lines = listed.output.split(separator: "\n").map { object(String($0)) }
        #expect(lines.count == 2, "\(listed.output)")
        for line in lines { try Self.expectConforms(line, to: "pushkey-line.schema.json") }
        #expect(lines.first?["pushkey"] as? String == "pk1" && lines.first?["account"] as? String == "mx:@a:x" && lines.first?["app_id"] as? String == "org.app")
        #expect(lines.last?["pushkey"] as? String == "pk2" && lines.last?["app_id"] == nil && lines.last?.count == 2)
        let removed = try run(herald, ["serve", "pushkeys", "remove", "--store", directory.path, "--pushkey", "pk2", "--json"])
        #expect(object(removed.output)["removed"] as? String == "pk2", "\(removed.output)")
        #expect(try run(herald, ["serve", "pushkeys", "list", "--store", directory.path]).output == "pk1\tmx:@a:x\torg.app\n")
    }
}
