import ArgumentParser
import Foundation
import HeraldEvents
import HeraldStore

/// `herald demo`: a guided tour on a temporary store.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Build a temporary store from sample events and show what Herald does with them.",
        discussion: "Example:\n  herald demo"
    )

    @Flag(name: .long, help: "Keep the temporary store and print its path.")
    var keep = false

    func run() throws {
        let directory = NSTemporaryDirectory() + "herald-demo-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        defer { if !keep { try? FileManager.default.removeItem(atPath: directory) } }
        let store = try Store(path: directory)
        let account = "tg:14124122"
        let events: [Event] = [
            Event(account: account, .notify(.init(chat: "user:62814", kind: .message, id: 590047, date: 1_754_385_290, partial: true, title: "Arseny Smirnov", body: "abcdefg"))),
            Event(account: account, .notify(.init(chat: "chat:241233", kind: .message, id: 123, date: 1_754_385_300, title: "John Doe @ My magical group", body: "Contact Exchange"))),
            Event(account: account, .read(chat: "user:62814", maxId: 590047)),
        ]
        for event in events {
            let seq = try store.append(event, source: Source(format: "herald", payload: Array(event.jsonString.utf8)))
            Terminal.line("#\(seq.seq)  \(event.jsonString)")
        }
        Terminal.line("store: \(directory) (\(store.lastSeq) events)")
    }
}
