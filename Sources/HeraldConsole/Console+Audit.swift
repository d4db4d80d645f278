import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import Hummingbird

extension Console {
    /// The outcome of an audit, or what was not found.
    enum AuditOutcome: Sendable {
        case report(Store.AuditReport)
        case unknownAccount
        case unknownChat(chats: [String])
    }

    /// `GET /console/accounts/{account}/audit?notification=N | group=G | chat=C[&object=ID]`:
    /// the timeline of one notification, group or object, every event that changed it with
    /// the reasons `herald audit` gives, each linking to its raw record.
    func auditPage(_ request: Request, account: String) async throws -> Page {
        let query = request.uri.queryParameters
        let back = (HTML.accountURL(account), account)
        let target: AuditTrail.Target
        if let chat = query.get("chat"), !chat.isEmpty {
            var object: Int64? = nil
            if let text = query.get("object"), !text.isEmpty {
                guard let id = Int64(text) else { return Page.notFound("Object “\(text)” is not an integer id.", back: back) }
                object = id
            }
            target = .object(chat: String(chat), objectId: object)
        } else if let text = query.get("notification") {
            guard let id = Int64(text) else { return Page.notFound("Notification “\(text)” is not an integer id.", back: back) }
            target = .notification(id)
        } else if let text = query.get("group") {
            guard let id = Int64(text) else { return Page.notFound("Group “\(text)” is not an integer id.", back: back) }
            target = .group(id)
        } else {
            return Page.notFound("Name a notification, a group or a chat (notification=N, group=G, chat=C[&object=ID]).", back: back)
        }
        let outcome = try await store.run { store -> AuditOutcome in
            do {
                return .report(try store.auditReport(account: account, target: target, listingUnchanged: false))
            } catch let error as StoreError where error.code == .unknownAccount {
                return .unknownAccount
            } catch let error as StoreError where error.code == .unknownChat {
                return .unknownChat(chats: error.chats ?? [])
            }
        }
        let what = target.description
        let report: Store.AuditReport
        switch outcome {
        case .unknownAccount:
            return Page.notFound("No event names account “\(account)”.", back: ("/console/", "Accounts"))
        case .unknownChat(let chats):
            return Page.notFound(
                "No event of account “\(account)” names \(what). Its chats: \(chats.prefix(20).joined(separator: ", "))\(chats.count > 20 ? ", …" : "").",
                back: back)
        case .report(let found):
            report = found
        }
        switch target {
        case .notification(let id): if let nearest = report.nearestKnownIds { return Self.unknownId("notification", id, account: account, nearest: nearest) }
        case .group(let id): if let nearest = report.nearestKnownIds { return Self.unknownId("group", id, account: account, nearest: nearest) }
        case .object: break
        }
        var page = Page(title: "\(what) of \(account)")
        page.body.raw("<nav class=\"crumbs\"><a href=\"/console/\">Accounts</a> / <a href=\"\(HTML.accountURL(account))\">")
        page.body.text(account)
        page.body.raw("</a> /</nav><h1>Timeline of ")
        page.body.text(what)
        page.body.raw("</h1><p class=\"legend\">")
        for (moment, label) in Self.moments { page.body.raw("<span class=\"moment moment-\(moment)\">\(label)</span>") }
        page.body.raw("</p><ol class=\"timeline\" id=\"timeline\">")
        if !report.atBase.isEmpty {
            page.body.raw("<li class=\"event base\"><div class=\"event-head\"><span class=\"seq\">seq \(report.baseSeq)</span> the snapshot the kept history starts from</div><ul class=\"effects\">")
            for effect in report.atBase { Self.renderEffect(effect, into: &page.body) }
            page.body.raw("</ul></li>")
        }
        let lines = report.lines.filter(\.changesTarget)
        for line in lines {
            let record = line.record
            let moment = line.effects.lazy.compactMap { Self.moment(of: $0.kind) }.first ?? "other"
            page.body.raw("<li class=\"event moment-\(moment)\" data-seq=\"\(record.seq)\"><div class=\"event-head\">")
            page.body.raw("<a class=\"seq\" href=\"/console/records/\(record.seq)\">seq \(record.seq)</a>")
            page.body.raw("<time>\(HTML.time(milliseconds: record.recordedAt))</time><span class=\"format\">")
            page.body.text(record.source.format)
            page.body.raw("</span><span class=\"type\">\(record.event.type.rawValue)</span></div><code class=\"event-json\">")
            page.body.text(Self.clip(record.event.jsonString, 240))
            page.body.raw("</code><ul class=\"effects\">")
            for effect in line.effects { Self.renderEffect(effect, into: &page.body) }
            page.body.raw("</ul></li>")
        }
        page.body.raw("</ol>")
        if lines.isEmpty && report.atBase.isEmpty { page.body.raw("<p class=\"empty\">No event changed it.</p>") }
        return page
    }

    /// The moments the timeline marks apart, by the effect kinds of `herald audit`.
    static let moments = [
        ("shown", "shown"), ("hidden", "hidden"), ("back", "brought back"), ("dismissed", "dismissed"), ("cleared", "cleared"),
    ]

    static func moment(of kind: String) -> String? {
        switch kind {
        case "shown", "created", "shownAfterBase": "shown"
        case "hidden", "notShown": "hidden"
        case "shownAgain": "back"
        case "dismissed": "dismissed"
        case "cleared", "wiped": "cleared"
        default: nil
        }
    }

    static func renderEffect(_ effect: AuditTrail.Effect, into html: inout HTML) {
        let moment = moment(of: effect.kind) ?? "other"
        html.raw("<li class=\"effect moment-\(moment)\" data-kind=\"")
        html.text(effect.kind)
        html.raw("\">")
        html.text(effect.text)
        html.raw("</li>")
    }

    static func unknownId(_ what: String, _ id: Int64, account: String, nearest: [Int64]) -> Page {
        let listed = nearest.isEmpty ? "it has none" : "nearest it had: " + nearest.map(String.init).joined(separator: ", ")
        var page = Page.notFound("Account “\(account)” never had \(what) \(id) (\(listed)).", back: (HTML.accountURL(account), account))
        if !nearest.isEmpty {
            page.body.raw("<ul class=\"nearest\">")
            for other in nearest {
                page.body.raw("<li><a href=\"\(HTML.accountURL(account, "/audit?\(what)=\(other)"))\">\(what) \(other)</a></li>")
            }
            page.body.raw("</ul>")
        }
        return page
    }


    static func clip(_ text: String, _ count: Int) -> String {
        text.count <= count ? text : String(text.prefix(count - 1)) + "…"
    }
}
