import Foundation
import HeraldProjection
import HeraldStore
import Hummingbird
import Synchronization

extension Console {
    /// One row of the accounts list.
    struct AccountRow: Sendable {
        var name: String
        var unread: UnreadCounts
        var groups: Int
        /// The account's clock: its newest `notify` date or `tick` (Unix seconds).
        var clock: Int64
    }

    /// `GET /console/?q=TEXT&page=N`: the accounts, most recently active first, filtered by
    /// name, a page of ``pageSize`` at a time.
    func accountsPage(_ request: Request) async throws -> Page {
        let filter = (request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespaces)
        let pageNumber = max(1, request.uri.queryParameters.get("page").flatMap { Int($0) } ?? 1)
        let cache = accountsCache
        let (seq, all) = try await store.run { store -> (UInt64, [AccountRow]) in
            let projection = store.projection
            if let cached = cache.rows(at: projection.seq) { return (projection.seq, cached) }
            var rows: [AccountRow] = []
            for name in projection.accounts {
                guard let account = projection.account(name) else { continue }
                rows.append(AccountRow(name: name, unread: account.unread, groups: account.groups.count, clock: account.clock))
            }
            rows.sort { $0.clock != $1.clock ? $0.clock > $1.clock : $0.name < $1.name }
            cache.keep(rows, at: projection.seq)
            return (projection.seq, rows)
        }
        let matching = filter.isEmpty ? all : all.filter { $0.name.localizedCaseInsensitiveContains(filter) }
        let total = matching.count
        let start = (pageNumber - 1) * Self.pageSize
        let rows = start < matching.count ? Array(matching[start..<min(matching.count, start + Self.pageSize)]) : []
        var page = Page(title: "Accounts")
        page.body.raw("<h1>Accounts</h1><form class=\"filter\" method=\"get\" action=\"/console/\" role=\"search\">")
        page.body.raw("<label for=\"q\">Filter by name <kbd>/</kbd></label><input id=\"q\" name=\"q\" type=\"search\" value=\"")
        page.body.text(filter)
        page.body.raw("\" data-shortcut=\"/\"><button type=\"submit\">Filter</button></form>")
        page.body.raw("<p class=\"meta\">\(total) account\(total == 1 ? "" : "s")")
        if !filter.isEmpty {
            page.body.raw(" matching “")
            page.body.text(filter)
            page.body.raw("”")
        }
        page.body.raw(", state after seq \(seq); most recently active first.</p>")
        if rows.isEmpty {
            page.body.raw("<p class=\"empty\">No account\(filter.isEmpty ? " yet" : " matches").</p>")
        } else {
            page.body.raw("<table class=\"accounts\"><thead><tr><th>Account</th><th class=\"n\">Unread</th><th class=\"n\">Badge</th>")
            page.body.raw("<th class=\"n\">Mentions</th><th class=\"n\">Groups shown</th><th>Newest event</th></tr></thead><tbody>")
            for row in rows {
                page.body.raw("<tr><td><a href=\"\(HTML.accountURL(row.name))\">")
                page.body.text(row.name)
                page.body.raw("</a></td><td class=\"n\">\(row.unread.unread)</td><td class=\"n\">\(row.unread.badge)</td>")
                page.body.raw("<td class=\"n\">\(row.unread.unreadMentions)</td><td class=\"n\">\(row.groups)</td>")
                page.body.raw("<td><time>\(HTML.time(seconds: row.clock))</time></td></tr>")
            }
            page.body.raw("</tbody></table>")
        }
        let query = filter.isEmpty ? "" : "q=\(HTML.component(filter))&"
        page.body.raw(Self.pager(page: pageNumber, total: total, base: "/console/?\(query)"))
        return page
    }

    /// The rows of every account, sorted, for the state at one seq: a store on disk never
    /// changes, and a server's list is read again only after new events.
    final class AccountsCache: Sendable {
        private let cached = Mutex<(seq: UInt64, rows: [AccountRow])?>(nil)

        func rows(at seq: UInt64) -> [AccountRow]? {
            cached.withLock { $0?.seq == seq ? $0?.rows : nil }
        }

        func keep(_ rows: [AccountRow], at seq: UInt64) {
            cached.withLock { $0 = (seq, rows) }
        }
    }

    /// "previous / page N of M / next" links; `base` ends in `?` or `&`.
    static func pager(page: Int, total: Int, base: String) -> String {
        let pages = max(1, (total + pageSize - 1) / pageSize)
        guard pages > 1 else { return "" }
        var html = "<nav class=\"pager\" aria-label=\"pages\">"
        if page > 1 { html += "<a rel=\"prev\" href=\"\(HTML.escape(base))page=\(page - 1)\">← previous</a>" }
        html += "<span>page \(page) of \(pages)</span>"
        if page < pages { html += "<a rel=\"next\" href=\"\(HTML.escape(base))page=\(page + 1)\">next →</a>" }
        return html + "</nav>"
    }
}
