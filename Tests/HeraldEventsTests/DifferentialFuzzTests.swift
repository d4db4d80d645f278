import Foundation
import HeraldEvents
import Testing
import HeraldTestSupport

/// The canonical decoder against Foundation's `JSONSerialization` on random and mutated lines:
/// what `JSONSerialization` rejects must be rejected, and an accepted line must decode to the
/// event a reference reading of `JSONSerialization`'s objects gives.
@Suite("Differential fuzz against JSONSerialization")
struct DifferentialFuzzTests {
    static let cases = ProcessInfo.processInfo.environment["HERALD_FUZZ_CASES"].flatMap(Int.init) ?? 20_000

    @Test func agreesWithJSONSerialization() {
        var random = SplitMix64(seed: 0x4A53_4F4E)
        var failures: [String] = []
        var tally = (accepted: 0, rejectedByBoth: 0, stricter: 0)
        for index in 0..<Self.cases {
            let line = index % 3 == 0 ? Generator.line(&random) : Generator.mutant(&random)
            let ours = Result { () throws(EventError) in try Event(json: line) }
            let object = try? JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed])
            let reference = object.map { Reference.event(from: $0) }
            switch (ours, reference) {
            case (.success(let event), .some(.success(let expected))):
                if event != expected { failures.append("\(preview(line)): \(event) != \(expected)") }
                tally.accepted += 1
            case (.success(let event), _):
                failures.append("\(preview(line)): accepted as \(event), but JSONSerialization/reference rejects it")
            case (.failure, nil), (.failure, .some(.failure)):
                tally.rejectedByBoth += 1
            case (.failure(let error), .some(.success)):
                // Stricter than JSONSerialization only where documented: it takes trailing
                // commas, repeated keys (last wins) and a byte order mark.
                let documented =
                    ["duplicate key", "nesting deeper", "lone surrogate", "trailing comma"].contains { error.reason.contains($0) }
                    || line.starts(with: [0xEF, 0xBB, 0xBF])
                if !documented { failures.append("\(preview(line)): rejected (\(error)) but JSONSerialization accepts it") }
                tally.stricter += 1
            }
            if failures.count > 10 { break }
        }
        #expect(failures.isEmpty, "\(failures.count) failures: \(failures.prefix(5))")
        // Both outcomes must be reached, or the fuzz says little.
        #expect(tally.accepted > Self.cases / 10 && tally.rejectedByBoth > Self.cases / 10, "\(tally)")
    }

    func preview(_ line: [UInt8]) -> String {
        String(decoding: line.prefix(160), as: UTF8.self).debugDescription
    }
}

/// A reading of `JSONSerialization`'s objects into events, as SEMANTICS §1 describes them.
enum Reference {
    struct Rejected: Error {}

    static func event(from object: Any) -> Result<Event, Rejected> {
        Result { try decode(object) }.mapError { _ in Rejected() }
    }

    private static func decode(_ object: Any) throws -> Event {
        guard let members = object as? [String: Any] else { throw Rejected() }
        func value(_ key: String) -> Any? {
            guard let value = members[key], !(value is NSNull) else { return nil }
            return value
        }
        func string(_ key: String) throws -> String? {
            guard let value = value(key) else { return nil }
            guard let text = value as? String else { throw Rejected() }
            return text
        }
        func integer(_ value: Any) throws -> Int64 {
            guard !(value is String), let number = value as? NSNumber else { throw Rejected() }
            // "c" is a boolean; "d" a number written with a fraction or exponent, or out of range.
            guard ["i", "q", "l", "s"].contains(String(cString: number.objCType)) else { throw Rejected() }
            return number.int64Value
        }
        func integer(_ key: String) throws -> Int64? { try value(key).map(integer) }
        func bool(_ key: String) throws -> Bool? {
            guard let value = value(key) else { return nil }
            guard !(value is String), let number = value as? NSNumber, String(cString: number.objCType) == "c" else { throw Rejected() }
            return number.boolValue
        }
        func need<T>(_ value: T?) throws -> T {
            guard let value else { throw Rejected() }
            return value
        }
        func kind() throws -> NotificationKind { try need(NotificationKind(rawValue: try need(try string("kind")))) }
        func ids() throws -> [Int64] {
            guard let array = value("ids") as? [Any] else { throw Rejected() }
            return try array.map(integer)
        }
        let type = try need(EventType(rawValue: try need(try string("type"))))
        let account = try need(try string("account"))
        let payload: Event.Payload
        switch type {
        case .notify:
            payload = .notify(
                .init(
                    chat: try need(try string("chat")), kind: try kind(), id: try need(try integer("id")),
                    date: try need(try integer("date")), silent: try bool("silent") ?? false, partial: try bool("partial") ?? false,
                    unreadOnly: try bool("unreadOnly") ?? false,
                    title: try string("title"), body: try string("body"), sender: try string("sender"), thread: try string("thread")))
        case .edit:
            payload = .edit(
                .init(
                    chat: try need(try string("chat")), kind: try kind(), id: try need(try integer("id")),
                    title: try string("title"), body: try string("body"), partial: try bool("partial") ?? false))
        case .read: payload = .read(chat: try need(try string("chat")), maxId: try need(try integer("maxId")))
        case .delete:
            if let maxId = try integer("maxId") {
                guard value("ids") == nil else { throw Rejected() }
                payload = .clearHistory(chat: try need(try string("chat")), maxId: maxId)
            } else {
                payload = .delete(ids: try ids(), chat: try string("chat"))
            }
        case .readAll: payload = .readAll(chat: try string("chat"))
        case .readMentions: payload = .readMentions(chat: try need(try string("chat")), ids: value("ids") == nil ? nil : try ids())
        case .tick: payload = .tick(now: try need(try integer("now")))
        case .readReactions: payload = .readReactions(chat: try need(try string("chat")), ids: try ids())
        case .endCall: payload = .endCall(chat: try need(try string("chat")), id: try need(try integer("id")))
        case .dismiss: payload = .dismiss(notificationId: try need(try integer("notificationId")))
        case .dismissGroup:
            payload = .dismissGroup(groupId: try need(try integer("groupId")), maxNotificationId: try integer("maxNotificationId"))
        case .options:
            payload = .options(
                groupCountMax: try integer("groupCountMax").map(Int.init), groupSizeMax: try integer("groupSizeMax").map(Int.init))
        case .chatSettings:
            // `muted` is an alias of two `mutedUntil` dates; naming both is an error.
            let chat = try need(try string("chat"))
            let mutedUntil = try integer("mutedUntil")
            let muted = try bool("muted")
            guard mutedUntil == nil || muted == nil else { throw Rejected() }
            payload = .chatSettings(
                .init(
                    chat: chat, mutedUntil: mutedUntil ?? muted.map { $0 ? 2_147_483_647 : 0 },
                    disableMentions: try bool("disableMentions"), disablePinned: try bool("disablePinned")))
        case .revoke: payload = .revoke
        case .note: payload = .note(source: try string("source"), reason: try string("reason"))
        }
        let event = Event(account: account, payload)
        try event.validate()
        return event
    }
}
