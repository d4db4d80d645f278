import Foundation
import HeraldTestSupport
import Testing

/// The web console (issue 44) in headless Chromium, against a real `herald serve` and a real
/// `herald console` on loopback ports.
@Suite("console: the web console in a real browser", .serverThreads)
struct ConsoleBrowserTests {
    static let account = "tg:14124122"
    static let accountPath = "/console/accounts/tg:14124122"
    /// Conformance case 02: notification 1 shown, hidden by groupCountMax 2, brought back by
    /// a read, cleared.
    static let case02 = Fixtures.path("conformance/02-count-max-hide-and-bring-back.events.jsonl")
    static let scriptBody = "<script>alert(1)</script>"
    static let attributeBody = #""><img src=x onerror=alert(1)>"#

    /// A store holding conformance case 02.
    static func makeStore(_ directory: TemporaryDirectory) throws -> String {
        let store = directory.child("store")
        let result = try herald(["ingest", "--store", store, "--format", "herald", case02])
        try #require(result.status == 0, "\(result.output)")
        return store
    }

    /// `[[groupId, [notification ids]]]` of one account in the state JSON form.
    static func groups(ofStateJSON text: String) throws -> [[Int]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let accounts = try #require(object["accounts"] as? [[String: Any]])
        let groups = try #require(accounts.first?["groups"] as? [[String: Any]])
        return groups.map { group in
            [group["groupId"] as? Int ?? -1] + ((group["notifications"] as? [[String: Any]]) ?? []).map { $0["id"] as? Int ?? -1 }
        }
    }

    /// The same, read from the shade page's DOM.
    static func shownGroups(_ browser: Browser) async throws -> [[Int]] {
        let value = try await browser.run("""
            return Array.from(document.querySelectorAll('[data-group]')).map(g =>
              [Number(g.dataset.group)].concat(Array.from(g.querySelectorAll('[data-notification]')).map(n => Number(n.dataset.notification))));
            """)
        return (value as? [[Any]] ?? []).map { $0.map { ($0 as? NSNumber)?.intValue ?? -1 } }
    }

    static func notify(id: Int, chat: String, body: String) -> String {
        let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return #"{"type":"notify","account":"tg:14124122","chat":"\#(chat)","kind":"message","id":\#(id),"date":200,"title":"\#(escaped)","body":"\#(escaped)"}"#
    }

    @Test("herald serve: sign-in, the shade as /state has it, live updates across a restart, escaped bodies, screenshots")
    func servedConsole() async throws {
        try #require(Browser.isAvailable, "chromium and chromedriver are missing: run Tools/setup.sh")
        let directory = TemporaryDirectory("console-served")
        let store = try Self.makeStore(directory)
        let token = "console-test-admin"
        var server = try HeraldProcess.serve(store: store, token: token)
        let port = server.port
        try #require(port > 0)
        try await Browser.with(directory) { browser in
            // A page without a token goes to the sign-in page, and back after it.
            try await browser.go(server.base + Self.accountPath)
            #expect(try await browser.url.contains("/console/sign-in"))
            try await browser.screenshot(to: directory.child("console-sign-in.png"))
            try await browser.signIn(token: token)
            #expect(try await browser.url.hasSuffix(Self.accountPath))

            let state = try await Plain.get(server.base + "/v1/accounts/tg:14124122/state", headers: [("Authorization", "Bearer \(token)")])
            let expected = try Self.groups(ofStateJSON: state.body)
            #expect(!expected.isEmpty)
            #expect(try await Self.shownGroups(browser) == expected)
            try await browser.screenshot(to: directory.child("console-shade-before.png"))

            // Live: an event posted appears without a reload, within 2 s.
            try await browser.run("window.__sameDocument = true; window.__alerted = false; window.alert = () => { window.__alerted = true; };")
            let posted = ContinuousClock.now
            #expect(try await Plain.post(server.base + "/v1/events", token: token, Self.notify(id: 500, chat: "user:7", body: Self.scriptBody)).status == 200)
            let appeared = try await browser.wait(
                for: "return Array.from(document.querySelectorAll('p.body')).some(p => p.textContent === \(Self.jsString(Self.scriptBody)))",
                timeout: .seconds(2))
            #expect(appeared, "the posted event did not appear within 2 s")
            print("console: posted event shown after \(ContinuousClock.now - posted)")
            #expect(try await browser.run("return window.__sameDocument === true") as? Bool == true)

            // A restart of the server on the same port: the page reconnects and goes on.
            #expect(server.stop() == 0)
            server = try HeraldProcess.serve(store: store, port: port, token: token)
            try #require(server.port == port)
            #expect(try await Plain.post(server.base + "/v1/events", token: token, Self.notify(id: 501, chat: "user:8", body: Self.attributeBody)).status == 200)
            let resumed = try await browser.wait(
                for: "return Array.from(document.querySelectorAll('p.body')).some(p => p.textContent === \(Self.jsString(Self.attributeBody)))",
                timeout: .seconds(15))
            #expect(resumed, "the shade did not resume after the restart")
            #expect(try await browser.run("return window.__sameDocument === true && window.__alerted === false") as? Bool == true)
            let afterRestart = try await Plain.get(server.base + "/v1/accounts/tg:14124122/state", headers: [("Authorization", "Bearer \(token)")])
            #expect(try await Self.shownGroups(browser) == (try Self.groups(ofStateJSON: afterRestart.body)))
            let shade = directory.child("console-shade.png")
            try await browser.screenshot(to: shade)
            keepScreenshot(shade)

            // A fresh load: no script of the bodies ran, no element came from them.
            try await browser.go(server.base + Self.accountPath)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await browser.alertText() == nil)
            #expect(try await browser.run("return document.querySelectorAll('main script, main img').length") as? Int == 0)
            #expect(try await browser.run("return document.body.textContent.includes(arguments[0])", [Self.scriptBody]) as? Bool == true)

            for (name, path) in [("accounts", "/console/"), ("store", "/console/store"), ("audit", Self.accountPath + "/audit?notification=1")] {
                try await browser.go(server.base + path)
                #expect(try await browser.run("return document.querySelector('main h1') !== null") as? Bool == true, "\(path)")
                let file = directory.child("console-\(name).png")
                try await browser.screenshot(to: file)
                keepScreenshot(file)
                #expect(FileManager.default.fileExists(atPath: file))
            }
            #expect(try await browser.alertText() == nil)
        }
        #expect(server.stop() == 0)
    }

    @Test("herald serve: without a token every console route is refused (pages go to sign-in)")
    func withoutToken() async throws {
        let directory = TemporaryDirectory("console-token")
        let store = try Self.makeStore(directory)
        let server = try HeraldProcess.serve(store: store, token: "console-test-admin")
        try #require(server.port > 0)
        let pages = ["/console/", "/console/store", Self.accountPath, Self.accountPath + "/audit?notification=1", Self.accountPath + "?at=3"]
        let routes = [Self.accountPath + "/updates", "/console/records/1", "/console/records/1?raw=1"]
        for headers in [[], [("Authorization", "Bearer wrong")], [("Cookie", "herald_console=wrong")]] as [[(String, String)]] {
            for page in pages {
                let answer = try await Plain.get(server.base + page, headers: headers)
                #expect(answer.status == 303 && answer.location?.hasPrefix("/console/sign-in?next=") == true, "\(page): \(answer.status)")
                #expect(!answer.body.contains("user:"), "\(page)")
            }
            for route in routes {
                let answer = try await Plain.get(server.base + route, headers: headers)
                #expect(answer.status == 401, "\(route): \(answer.status)")
            }
        }
        // The admin token as a cookie (what sign-in sets) reads them.
        let signedIn = try await Plain.get(server.base + Self.accountPath, headers: [("Cookie", "herald_console=console-test-admin")])
        #expect(signedIn.status == 200 && signedIn.body.contains("data-group="))
        #expect(server.stop() == 0)
    }

    @Test("herald console: a copied store stays byte-identical, lock file too; shade as herald state, timeline with reasons, not-found pages")
    func consoleOnCopy() async throws {
        try #require(Browser.isAvailable, "chromium and chromedriver are missing: run Tools/setup.sh")
        let directory = TemporaryDirectory("console-copy")
        let original = try Self.makeStore(directory)
        let copy = directory.child("copy")
        try FileManager.default.copyItem(atPath: original, toPath: copy)
        let before = try contents(of: copy)
        let console = try HeraldProcess.console(store: copy)
        try #require(console.port > 0)
        try await Browser.with(directory) { browser in
            try await browser.go(console.base + "/console/")
            #expect(try await browser.run("return document.querySelector('table.accounts a').textContent") as? String == Self.account)

            try await browser.go(console.base + Self.accountPath)
            let state = try herald(["state", "--store", original, "--account", Self.account, "--json"])
            #expect(try await Self.shownGroups(browser) == (try Self.groups(ofStateJSON: state.output)))

            // The timeline of notification 1: shown, hidden by groupCountMax, brought back by a
            // read, cleared; with herald audit's reasons, in order.
            try await browser.go(console.base + Self.accountPath + "/audit?notification=1")
            let shown = try await browser.run("return Array.from(document.querySelectorAll('li.effect')).map(e => [e.dataset.kind, e.textContent])") as? [[String]] ?? []
            let audit = try herald(["audit", "--store", original, "--account", Self.account, "--notification", "1", "--json"])
            var expected: [[String]] = []
            for line in audit.output.split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                for effect in object["effects"] as? [[String: Any]] ?? [] { expected.append([effect["kind"] as? String ?? "", effect["text"] as? String ?? ""]) }
            }
            #expect(shown == expected)
            let kinds = shown.map { $0[0] }
            #expect(kinds.contains("hidden") && kinds.contains("shownAgain"), "\(kinds)")
            #expect(try await browser.run("return document.querySelectorAll('li.event.moment-hidden').length > 0 && document.querySelectorAll('li.event.moment-back').length > 0") as? Bool == true)
            let timeline = directory.child("console-timeline.png")
            try await browser.screenshot(to: timeline)
            keepScreenshot(timeline)

            // Each event links to its record in the export form.
            try await browser.run("document.querySelector('li.event a.seq').click();")
            #expect(try await browser.wait(for: "return location.pathname.startsWith('/console/records/') && !!document.querySelector('pre.record')", timeout: .seconds(5)))
            #expect(try await browser.run("return JSON.parse(document.querySelector('pre.record').textContent).account") as? String == Self.account)

            // History: the state at seq 3 is that of herald state --at 3.
            try await browser.go(console.base + Self.accountPath + "?at=3")
            let at3 = try herald(["state", "--store", original, "--account", Self.account, "--at", "3", "--json"])
            #expect(try await Self.shownGroups(browser) == (try Self.groups(ofStateJSON: at3.output)))
            try await browser.run("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}));")
            #expect(try await browser.wait(for: "return location.search === '?at=4'", timeout: .seconds(5)))

            try await browser.go(console.base + "/console/store")
            #expect(try await browser.run("return document.getElementById('last-seq').textContent") as? String == "7")
            #expect(try await browser.run("return document.querySelectorAll('figure.chart svg').length") as? Int ?? 0 >= 1)
        }
        // `at` as a time: after the last record, the state now; before the first, no state yet.
        let future = try await Plain.get(console.base + Self.accountPath + "?at=2100-01-01%2000:00")
        #expect(future.status == 200 && future.body.contains("<span id=\"state-seq\">7</span>"))
        let past = try await Plain.get(console.base + Self.accountPath + "?at=2000-01-01")
        #expect(past.status == 404 && past.body.contains("has no state at seq 0"))
        let nonsense = try await Plain.get(console.base + Self.accountPath + "?at=soon")
        #expect(nonsense.status == 404 && nonsense.body.contains("neither a seq nor a time"))
        // What was not found, said with a link back.
        for (path, says) in [
            ("/console/accounts/nobody", "No event names account"), (Self.accountPath + "/audit?notification=999", "never had notification 999"),
            (Self.accountPath + "?at=99999", "outside the history"), ("/console/records/99999", "No record with seq 99999"),
        ] {
            let answer = try await Plain.get(console.base + path)
            #expect(answer.status == 404 && answer.body.contains(says) && answer.body.contains("<a href="), "\(path): \(answer.status)")
        }
        #expect(console.stop() == 0)
        // Every file as it was, LMDB's lock file too: nobody writes the copy, so the console
        // reads it without taking a slot in LMDB's reader table.
        let after = try contents(of: copy)
        #expect(after.keys.sorted() == before.keys.sorted())
        #expect(after == before, "herald console changed the store")
        #expect(before["lock.mdb"] != nil, "the copy should have a lock file for this check to mean something")
    }

    @Test("herald console: a damaged copy shows the damage on every page, and keeps serving")
    func consoleOnDamagedCopy() async throws {
        try #require(Browser.isAvailable, "chromium and chromedriver are missing: run Tools/setup.sh")
        let directory = TemporaryDirectory("console-damaged")
        let original = try Self.makeStore(directory)
        let copy = directory.child("copy")
        try FileManager.default.copyItem(atPath: original, toPath: copy)
        let handle = try #require(FileHandle(forWritingAtPath: copy + "/data.mdb"))
        try handle.truncate(atOffset: 8_192)
        try handle.close()
        let console = try HeraldProcess.console(store: copy)
        try #require(console.port > 0)
        for path in ["/console/", "/console/store", Self.accountPath, Self.accountPath + "/audit?notification=1"] {
            let answer = try await Plain.get(console.base + path)
            #expect(answer.status == 503 && answer.body.contains("cannot be read") && answer.body.contains("data.mdb"), "\(path): \(answer.status)")
        }
        try await Browser.with(directory) { browser in
            try await browser.go(console.base + "/console/")
            #expect(try await browser.run("return document.querySelector('.damage-message').textContent.length > 0") as? Bool == true)
            let file = directory.child("console-damaged.png")
            try await browser.screenshot(to: file)
            keepScreenshot(file)
        }
        #expect(console.process.isRunning)
        #expect(console.stop() == 0)
    }

    @Test("a big store pages its lists; a read:ACCOUNT token sees that account's pages only")
    func pagingAndAccountTokens() async throws {
        let directory = TemporaryDirectory("console-big")
        let store = directory.child("store")
        // 250 accounts, and one of them with 300 chats.
        var lines: [String] = []
        for index in 0..<250 {
            lines.append(#"{"type":"notify","account":"acct-\#(String(format: "%03d", index))","chat":"c","kind":"message","id":1,"date":\#(1_000 + index)}"#)
        }
        for chat in 0..<300 {
            lines.append(#"{"type":"notify","account":"acct-000","chat":"chat-\#(chat)","kind":"message","id":\#(chat + 10),"date":5000}"#)
        }
        let file = directory.child("big.jsonl")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let ingested = try herald(["ingest", "--store", store, "--format", "herald", file])
        try #require(ingested.status == 0, "\(ingested.output)")
        let token = "console-test-admin"
        let server = try HeraldProcess.serve(store: store, token: token)
        try #require(server.port > 0)
        let admin = [("Authorization", "Bearer \(token)")]
        func rows(_ body: String, _ marker: String) -> Int { body.components(separatedBy: marker).count - 1 }

        let first = try await Plain.get(server.base + "/console/", headers: admin)
        #expect(first.status == 200 && rows(first.body, "<tr><td><a href=\"/console/accounts/") == 100)
        #expect(first.body.contains("page 1 of 3"))
        // Most recent activity first: acct-000 (date 5000), then the others by their dates.
        #expect(first.body.range(of: ">acct-000<")!.lowerBound < first.body.range(of: ">acct-249<")!.lowerBound)
        let last = try await Plain.get(server.base + "/console/?page=3", headers: admin)
        #expect(rows(last.body, "<tr><td><a href=\"/console/accounts/") == 50)
        let filtered = try await Plain.get(server.base + "/console/?q=acct-24", headers: admin)
        #expect(rows(filtered.body, "<tr><td><a href=\"/console/accounts/") == 10)
        let chats = try await Plain.get(server.base + "/console/accounts/acct-000", headers: admin)
        #expect(rows(chats.body, "<tr data-chat=") == 100 && chats.body.contains("page 1 of 4"))

        // A token for one account: its pages, nothing else.
        let created = try await Plain.post(
            server.base + "/v1/admin/tokens", token: token, #"{"name":"one","scopes":["read:acct-001"]}"#)
        let one = try #require((try JSONSerialization.jsonObject(with: Data(created.body.utf8)) as? [String: Any])?["token"] as? String)
        let bearer = [("Authorization", "Bearer \(one)")]
        #expect(try await Plain.get(server.base + "/console/accounts/acct-001", headers: bearer).status == 200)
        #expect(try await Plain.get(server.base + "/console/accounts/acct-001/audit?notification=1", headers: bearer).status == 200)
        for path in ["/console/", "/console/store", "/console/accounts/acct-002"] {
            let answer = try await Plain.get(server.base + path, headers: bearer)
            #expect(answer.status == 403 && answer.body.contains("acct-001") && !answer.body.contains("acct-002<"), "\(path): \(answer.status)")
        }
        #expect(try await Plain.get(server.base + "/console/accounts/acct-002/updates", headers: bearer).status == 401)
        #expect(server.stop() == 0)
    }

    /// `text` as a JavaScript string literal.
    static func jsString(_ text: String) -> String {
        let data = try! JSONSerialization.data(withJSONObject: [text])
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
