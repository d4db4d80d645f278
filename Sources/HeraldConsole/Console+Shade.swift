import Foundation
import HeraldEvents
import HeraldProjection
import HeraldStore
import Hummingbird

extension Console {
    /// What the shade page shows: the account at a seq, and the bounds of the history.
    struct Shade: Sendable {
        var account: AccountState?
        var seq: UInt64
        var firstSeq: UInt64
        var lastSeq: UInt64
    }

    /// `GET /console/accounts/{account}[?at=SEQ|TIME][&page=N]`: the notification shade, the
    /// visible groups in the device's order with their notifications, the counts and chats;
    /// now (live under `herald serve`) or right after seq `at` as `herald state --at` has it.
    func shadePage(_ request: Request, account name: String) async throws -> Page {
        let atText = request.uri.queryParameters.get("at").flatMap { $0.isEmpty ? nil : $0 }
        let pageNumber = max(1, request.uri.queryParameters.get("page").flatMap { Int($0) } ?? 1)
        let back = ("/console/", "Accounts")
        let time = atText.flatMap { UInt64($0) == nil ? Self.parseTime($0) : nil }
        if let atText, UInt64(atText) == nil, time == nil {
            return Page.notFound(
                "“\(atText)” is neither a seq nor a time (2026-11-21T10:00:00Z, 2026-11-21 10:00).", back: (HTML.accountURL(name), name))
        }
        let shade = try await store.run { store -> Shade? in
            let bounds = try store.history.bounds()
            let last = bounds.highWaterSeq
            guard let atText else {
                return Shade(account: store.account(name), seq: store.lastSeq, firstSeq: bounds.droppedThrough ?? 0, lastSeq: last)
            }
            var seq: UInt64
            if let number = UInt64(atText) {
                seq = number
            } else {
                seq = try store.history.lastSeq(recordedAtOrBefore: time ?? 0) ?? 0
            }
            guard seq <= last, seq >= (bounds.droppedThrough ?? 0) else { return nil }
            seq = max(seq, bounds.droppedThrough ?? 0)
            let projection = try store.projection(at: seq, account: name)
            return Shade(account: projection.account(name), seq: seq, firstSeq: bounds.droppedThrough ?? 0, lastSeq: last)
        }
        guard let shade else {
            return Page.notFound("Seq \(atText ?? "") is outside the history of this store.", back: (HTML.accountURL(name), name))
        }
        guard let account = shade.account else {
            if atText != nil {
                return Page.notFound("Account “\(name)” has no state at seq \(shade.seq).", back: (HTML.accountURL(name), "\(name) now"))
            }
            return Page.notFound("No event names account “\(name)”.", back: back)
        }
        var page = Page(title: name)
        let live = atText == nil
        page.data = [("account", name), ("seq", String(shade.seq))]
        if live { page.data.append(("live", HTML.accountURL(name, "/updates"))) }
        page.body.raw("<nav class=\"crumbs\"><a href=\"/console/\">Accounts</a> / </nav><h1 class=\"account-name\">")
        page.body.text(name)
        page.body.raw("</h1>")
        // The stepper is inside the part live updates replace, so that it follows the last seq.
        page.body.raw("<div id=\"shade-root\" data-seq=\"\(shade.seq)\">")
        page.body.raw(Self.stepper(shade, account: name, live: live))
        Self.renderShade(account, seq: shade.seq, page: pageNumber, atText: atText, into: &page.body)
        page.body.raw("</div>")
        return page
    }

    /// The part of the page the live updates replace.
    static func renderShade(_ account: AccountState, seq: UInt64, page pageNumber: Int, atText: String?, into html: inout HTML) {
        let unread = account.unread
        html.raw("<section class=\"totals\" aria-label=\"totals\"><dl>")
        for (label, value, id) in [("Unread", unread.unread, "unread"), ("Badge", unread.badge, "badge"), ("Mentions", unread.unreadMentions, "mentions")] {
            html.raw("<div><dt>\(label)</dt><dd id=\"total-\(id)\">\(value)</dd></div>")
        }
        html.raw("<div><dt>Groups shown</dt><dd id=\"total-groups\">\(account.groups.count)</dd></div>")
        html.raw("<div><dt>Clock</dt><dd><time>\(HTML.time(seconds: account.clock))</time></dd></div>")
        html.raw("<div><dt>Limits</dt><dd>\(account.groupCountMax) groups × \(account.groupSizeMax)</dd></div>")
        html.raw("</dl><p class=\"meta\">State after seq <span id=\"state-seq\">\(seq)</span>.</p></section>")

        html.raw("<section aria-label=\"shade\"><h2>Shade</h2>")
        if account.groups.isEmpty { html.raw("<p class=\"empty\">No notification is shown.</p>") }
        let start = (pageNumber - 1) * pageSize
        let shown = start < account.groups.count ? account.groups[start..<min(account.groups.count, start + pageSize)] : []
        html.raw("<ol class=\"shade\" id=\"shade\" start=\"\(start + 1)\">")
        for group in shown {
            html.raw("<li class=\"group\" data-group=\"\(group.groupId)\"><div class=\"group-head\">")
            html.raw("<a class=\"group-id\" href=\"\(HTML.accountURL(account.name, "/audit?group=\(group.groupId)"))\">group \(group.groupId)</a>")
            html.raw("<span class=\"type\">\(group.type.rawValue)</span><span class=\"chat\">")
            html.text(group.chat)
            html.raw("</span><span class=\"count\">\(group.totalCount) in total</span></div><ul class=\"notifications\">")
            for notification in group.notifications { renderNotification(notification, account: account.name, into: &html) }
            html.raw("</ul></li>")
        }
        html.raw("</ol>")
        var base = "?"
        if let atText { base += "at=\(HTML.component(atText))&" }
        html.raw(pager(page: pageNumber, total: account.groups.count, base: HTML.accountURL(account.name, base)))
        html.raw("</section>")

        html.raw("<section aria-label=\"chats\"><h2>Chats</h2>")
        if account.chats.isEmpty { html.raw("<p class=\"empty\">No chat.</p>") }
        let chatStart = (pageNumber - 1) * pageSize
        let chats = chatStart < account.chats.count ? account.chats[chatStart..<min(account.chats.count, chatStart + pageSize)] : []
        if !chats.isEmpty {
            html.raw("<table class=\"chats\"><thead><tr><th>Chat</th><th class=\"n\">Unread</th><th class=\"n\">Mentions</th>")
            html.raw("<th class=\"n\">Read up to</th><th>Muted until</th></tr></thead><tbody>")
            for chat in chats {
                html.raw("<tr data-chat=\"")
                html.text(chat.chat)
                html.raw("\"><td><a href=\"")
                html.text(HTML.accountURL(account.name, "/audit?chat=\(HTML.component(chat.chat))"))
                html.raw("\">")
                html.text(chat.chat)
                html.raw("</a></td><td class=\"n\">\(chat.unread)</td><td class=\"n\">\(chat.unreadMentions)</td><td class=\"n\">\(chat.readMaxId)</td><td>")
                html.raw(mute(chat))
                html.raw("</td></tr>")
            }
            html.raw("</tbody></table>")
            html.raw(pager(page: pageNumber, total: account.chats.count, base: HTML.accountURL(account.name, base)))
        }
        html.raw("</section>")
    }

    static func renderNotification(_ n: HeraldNotification, account: String, into html: inout HTML) {
        html.raw("<li class=\"notification\" data-notification=\"\(n.id)\"><div class=\"n-head\">")
        html.raw("<span class=\"kind kind-\(n.kind.rawValue)\">\(n.kind.rawValue)</span>")
        if let title = n.title {
            html.raw("<strong class=\"title\">")
            html.text(title)
            html.raw("</strong>")
        }
        html.raw("<time>\(HTML.time(seconds: n.date))</time>")
        if n.silent { html.raw("<span class=\"flag\">silent</span>") }
        if n.partial { html.raw("<span class=\"flag\" title=\"push content only\">partial</span>") }
        html.raw("<a class=\"audit-link\" href=\"\(HTML.accountURL(account, "/audit?notification=\(n.id)"))\">#\(n.id) timeline</a></div>")
        if let body = n.body {
            html.raw("<p class=\"body\">")
            html.text(body)
            html.raw("</p>")
        }
        html.raw("</li>")
    }

    /// A chat's mute, as `herald state` words it.
    static func mute(_ chat: ChatState) -> String {
        switch chat.mutedUntil {
        case 0: "–"
        case Event.ChatSettings.mutedForever where chat.muted: "muted"
        case let until: chat.muted ? "<time>\(HTML.time(seconds: until))</time>" : "ran out <time>\(HTML.time(seconds: until))</time>"
        }
    }

    /// The history stepper: the seq shown, one event back or forward, a slider over the whole
    /// history, a field for a seq or time, and the way back to now.
    static func stepper(_ shade: Shade, account: String, live: Bool) -> String {
        let url = HTML.accountURL(account)
        let low = shade.firstSeq, high = shade.lastSeq
        var html = "<form class=\"stepper\" method=\"get\" action=\"\(url)\" aria-label=\"history\">"
        if live {
            html += "<span class=\"live\" id=\"live-status\" role=\"status\">live</span>"
        } else {
            html += "<a class=\"now\" href=\"\(url)\">now</a>"
        }
        if shade.seq > low { html += "<a id=\"step-back\" data-key=\"ArrowLeft\" href=\"\(url)?at=\(shade.seq - 1)\" title=\"one event back (←)\">◀ \(shade.seq - 1)</a>" }
        html += "<input type=\"range\" id=\"at-slider\" min=\"\(low)\" max=\"\(high)\" value=\"\(shade.seq)\" aria-label=\"seq\">"
        if shade.seq < high { html += "<a id=\"step-forward\" data-key=\"ArrowRight\" href=\"\(url)?at=\(shade.seq + 1)\" title=\"one event forward (→)\">\(shade.seq + 1) ▶</a>" }
        html += "<label for=\"at\">at</label><input id=\"at\" name=\"at\" value=\"\(live ? "" : String(shade.seq))\" placeholder=\"seq or 2026-11-21 14:02\" size=\"18\">"
        html += "<button type=\"submit\">Show</button></form>"
        return html
    }

    /// `2026-11-21T10:00:00Z`, `2026-11-21T10:00:00`, `2026-11-21 10:00` or `2026-11-21`, UTC:
    /// milliseconds since the epoch.
    static func parseTime(_ text: String) -> Int64? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        let trimmed = text.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "T", with: " ")
            .replacingOccurrences(of: "Z", with: "")
        for format in ["yyyy-MM-dd HH:mm:ss.SSS", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        }
        return nil
    }
}
