import Foundation
import HeraldIngest
import HeraldTestSupport
import Testing

@testable import herald

/// Issue #23 at the command line: what compact, purge and keys add keep, ask and refuse.
@Suite("herald compact, purge and keys keep history and ask first", .processThreads)
struct HistoryCommandTests {
    static func notify(_ account: String, _ id: Int) -> String {
        #"{"type":"notify","account":"\#(account)","chat":"c","kind":"message","id":\#(id),"date":\#(100 + id),"title":"t\#(id)"}"# + "\n"
    }

    @Test("compact archives by default; --discard-history needs --yes off a terminal; --dry-run changes nothing")
    func compactKeepsHistory() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.notify("a", 1) + Self.notify("a", 2)).status == 0)
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        let dry = try CLI.run(["compact", "--store", store, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.contains("moved into the archive: 2 log records (seqs 1…2"), "\(dry.stdout)")
        #expect(try CLI.run(["export", "--store", store]).stdout.split(separator: "\n").count == 2)
        // Discarding off a terminal without --yes is refused, and nothing changes.
        let refused = try CLI.run(["compact", "--store", store, "--discard-history"])
        #expect(refused.status == 1 && refused.stderr.contains("pass --yes"), "\(refused.stderr)")
        let compact = try CLI.run(["compact", "--store", store])
        #expect(compact.status == 0 && compact.stdout.contains("2 records archived"), "\(compact.stdout)\(compact.stderr)")
        // The history is all there: the object audits, export lists both seqs, no note.
        let audit = try CLI.run(["audit", "--store", store, "--account", "a", "--chat", "c", "--object", "1"])
        #expect(audit.status == 0 && audit.stdout.contains("created as notification 1"), "\(audit.stdout)")
        let export = try CLI.run(["export", "--store", store])
        #expect(export.stdout.split(separator: "\n").count == 2 && export.stderr.isEmpty, "\(export.stdout)\(export.stderr)")
        // Then an explicit discard, after a dry run that names the archived records too.
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.notify("a", 3)).status == 0)
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        let discardPlan = try CLI.run(["compact", "--store", store, "--discard-history", "--dry-run"])
        #expect(discardPlan.stdout.contains("discarded for good: 1 log records (seqs 3…3"), "\(discardPlan.stdout)")
        #expect(discardPlan.stdout.contains("discarded for good: 2 archived records"), "\(discardPlan.stdout)")
        let discard = try CLI.run(["compact", "--store", store, "--discard-history", "--yes"])
        #expect(discard.status == 0 && discard.stdout.contains("1 records discarded with 2 archived records"), "\(discard.stdout)\(discard.stderr)")
        #expect(try CLI.run(["export", "--store", store]).stdout.isEmpty)
    }

    @Test("purge: an account no record names exits 1 listing the accounts; names are bytes; --dry-run; --yes")
    func purgeAsksAndMatchesBytes() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let input = Self.notify(precomposed, 1) + Self.notify(decomposed, 1) + Self.notify("b", 2)
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: input).status == 0)
        let typo = try CLI.run(["purge", "--store", store, "--account", "acct-9", "--yes"])
        #expect(typo.status == 1 && typo.stderr.contains("names account 'acct-9'") && typo.stderr.contains("b,"), "\(typo.stderr)")
        let dry = try CLI.run(["purge", "--store", store, "--account", precomposed, "--dry-run"])
        #expect(dry.status == 0 && dry.stdout.contains("would erase 1 log records"), "\(dry.stdout)\(dry.stderr)")
        let unconfirmed = try CLI.run(["purge", "--store", store, "--account", precomposed])
        #expect(unconfirmed.status == 1 && unconfirmed.stderr.contains("pass --yes"), "\(unconfirmed.stderr)")
        #expect(try CLI.run(["purge", "--store", store, "--account", precomposed, "--yes"]).status == 0)
        // The decomposed account is another account: still there, in state and export alike.
        let state = try CLI.run(["state", "--store", store, "--account", decomposed, "--json"])
        #expect(state.status == 0 && state.stdout.contains("\"account\":\"\(decomposed)\""), "\(state.stdout)\(state.stderr)")
        let export = try CLI.run(["export", "--store", store, "--account", decomposed])
        #expect(export.stdout.split(separator: "\n").count == 1, "\(export.stdout)")
        let gone = try CLI.run(["export", "--store", store, "--account", precomposed])
        #expect(gone.stdout.isEmpty, "\(gone.stdout)")
    }

    @Test("keys add refuses to move a key bound to another account unless --rebind")
    func keysRebind() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let key = DemoPayloads.telegramKey
        #expect(try CLI.run(["keys", "add", "--store", store, "--account", "tg:1", key]).status == 0)
        let again = try CLI.run(["keys", "add", "--store", store, "--account", "tg:1", key])
        #expect(again.status == 0 && again.stderr.contains("already bound"), "\(again.stderr)")
        let other = try CLI.run(["keys", "add", "--store", store, "--account", "tg:2", key])
        #expect(other.status == 1 && other.stderr.contains("is bound to account 'tg:1'") && other.stderr.contains("--rebind"), "\(other.stderr)")
        #expect(try CLI.run(["keys", "list", "--store", store]).stdout.contains("tg:1"))
        #expect(try CLI.run(["keys", "add", "--store", store, "--account", "tg:2", "--rebind", key]).status == 0)
        let listed = try CLI.run(["keys", "list", "--store", store]).stdout
        #expect(listed.contains("tg:2") && !listed.contains("tg:1"), "\(listed)")
    }

    @Test("audit lists what changed the target (--all adds the rest), starts from the base after a discard, and refuses ids never given out")
    func auditAnswersTheQuestion() throws {
        let dir = TemporaryDirectory()
        let store = dir.child("s")
        let read = #"{"type":"read","account":"a","chat":"c","maxId":1}"# + "\n"
        #expect(try CLI.run(["ingest", "--store", store, "-"], input: Self.notify("a", 1) + Self.notify("a", 2) + read + read).status == 0)
        let audit = { (arguments: [String]) in try CLI.run(["audit", "--store", store, "--account", "a"] + arguments) }
        let changed = try audit(["--chat", "c", "--object", "1"])
        #expect(changed.stdout.contains("seq 3") && !changed.stdout.contains("seq 4"), "\(changed.stdout)")
        #expect(changed.stdout.contains("events that named it without changing it are not shown"), "\(changed.stdout)")
        #expect(try audit(["--chat", "c", "--object", "1", "--no-index"]).stdout.contains("1 event that named it without changing it not shown"))
        #expect(changed.stdout.contains("sent 1970-01-01T00:01:41Z"), "times carry their zone: \(changed.stdout)")
        let everything = try audit(["--chat", "c", "--object", "1", "--all"])
        #expect(everything.stdout.contains("seq 4") && everything.stdout.contains("no effect on the target"), "\(everything.stdout)")
        let never = try audit(["--chat", "c", "--object", "77"])
        #expect(never.status == 0 && never.stdout.contains("never received: no event named object #77 of chat c"), "\(never.stdout)")
        let unknown = try audit(["--notification", "40"])
        #expect(unknown.status == 1 && unknown.stderr.contains("never had notification 40 (nearest it had: 1, 2)"), "\(unknown.stderr)")
        // After a discard, the audit starts with the object as the base snapshot holds it.
        #expect(try CLI.run(["snapshot", "--store", store]).status == 0)
        #expect(try CLI.run(["compact", "--store", store, "--discard-history", "--yes"]).status == 0)
        let based = try audit(["--chat", "c", "--object", "2"])
        #expect(based.status == 0, "\(based.stderr)")
        #expect(based.stdout.contains("present at the base (seq 4) as notification 2 (message #2 of chat c) in group 1, shown"), "\(based.stdout)")
        #expect(!based.stdout.contains("never received") && !based.stdout.contains("no event touched it"), "\(based.stdout)")
        #expect(try audit(["--notification", "2"]).status == 0)
    }
}
