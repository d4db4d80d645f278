import Foundation
import HeraldEvents
import HTTPTypes
import Hummingbird
import NIOCore

/// HTML text built by the console's pages. Every string from outside (titles, bodies, chat
/// and account names, error messages) goes in through ``text(_:)`` or ``attribute(_:)``,
/// which escape it; ``raw(_:)`` is for the pages' own markup only.
struct HTML: Sendable {
    private(set) var text = ""

    init() {}

    /// Appends the console's own markup, as is.
    mutating func raw(_ markup: String) { text += markup }

    /// Appends `value` escaped for element content.
    mutating func text(_ value: String) { text += Self.escape(value) }

    /// `&`, `<`, `>`, `"` and `'` as character references: safe in element content and in
    /// quoted attribute values.
    static func escape(_ value: String) -> String {
        var out = ""
        out.reserveCapacity(value.utf8.count)
        for character in value.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// `value` percent-encoded for one path segment or query value of a URL.
    static func component(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~:@")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// The console URL of an account's page (`suffix` after it: `/audit?…`).
    static func accountURL(_ account: String, _ suffix: String = "") -> String {
        "/console/accounts/" + component(account) + suffix
    }

    /// A UTC time of milliseconds since the epoch, as the CLI prints it.
    static func time(milliseconds: Int64) -> String { ISO8601.string(milliseconds: milliseconds) }

    /// A UTC time of Unix seconds; `-` for 0 (never set).
    static func time(seconds: Int64) -> String { seconds == 0 ? "–" : ISO8601.string(seconds: seconds) }

    /// Bytes in binary units.
    static func bytes(_ count: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count), unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f", value) + " " + units[unit]
    }
}

/// A whole console page: the layout around a page's content.
struct Page: Sendable {
    var title: String
    /// The navigation entry to mark current: `accounts` or `store`.
    var section: String = "accounts"
    var status: HTTPResponse.Status = .ok
    var body = HTML()
    /// `data-` attributes of `<body>` the script reads (`live` URL, `seq`, …): name → value.
    var data: [(String, String)] = []

    init(title: String, section: String = "accounts") {
        self.title = title
        self.section = section
    }

    /// The page as a response, with headers that keep it from being framed or scripted by
    /// anything but the console's own script.
    func response(signedIn: Bool, local: Bool) -> Response {
        var html = HTML()
        html.raw("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
        html.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
        html.raw("<title>")
        html.text(title)
        html.raw(" · Herald console</title><link rel=\"stylesheet\" href=\"/console/assets/console.css\">")
        html.raw("<script src=\"/console/assets/console.js\" defer></script></head>")
        html.raw("<body data-mode=\"\(local ? "local" : "served")\"")
        for (name, value) in data { html.raw(" data-\(name)=\""); html.text(value); html.raw("\"") }
        html.raw("><header class=\"top\"><a class=\"brand\" href=\"/console/\">Herald</a><nav>")
        for (name, label, href) in [("accounts", "Accounts", "/console/"), ("store", "Store", "/console/store")] {
            html.raw("<a href=\"\(href)\"\(section == name ? " aria-current=\"page\"" : "")>\(label)</a>")
        }
        html.raw("</nav>")
        if local {
            html.raw("<span class=\"mode\">read-only copy</span>")
        } else if signedIn {
            html.raw("<a class=\"signout\" href=\"/console/sign-out\">Sign out</a>")
        }
        html.raw("</header><main id=\"main\">")
        html.raw(body.text)
        html.raw("</main></body></html>\n")
        return Self.htmlResponse(html.text, status: status)
    }

    /// `text` as `text/html`, with the console's security headers.
    static func htmlResponse(_ text: String, status: HTTPResponse.Status = .ok, headers extra: HTTPFields = [:]) -> Response {
        var headers: HTTPFields = [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            .consolePolicy: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",
        ]
        headers.append(contentsOf: extra)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// A page saying what was not found, with a link back.
    static func notFound(_ message: String, back: (href: String, label: String)) -> Page {
        var page = Page(title: "Not found")
        page.status = .notFound
        page.body.raw("<section class=\"notice\"><h1>Not found</h1><p class=\"missing\">")
        page.body.text(message)
        page.body.raw("</p><p><a href=\"")
        page.body.text(back.href)
        page.body.raw("\">")
        page.body.text(back.label)
        page.body.raw("</a></p></section>")
        return page
    }

    /// A page for a store that cannot be read (a damaged copy): the error, no crash.
    static func damaged(_ message: String, path: String) -> Page {
        var page = Page(title: "Store unreadable", section: "store")
        page.status = .serviceUnavailable
        page.body.raw("<section class=\"notice damage\"><h1>The store cannot be read</h1><p>Store <code>")
        page.body.text(path)
        page.body.raw("</code>:</p><pre class=\"damage-message\">")
        page.body.text(message)
        page.body.raw("</pre><p>Nothing was written to it. <code>herald verify</code> and <code>herald salvage</code> say more.</p></section>")
        return page
    }
}

extension HTTPField.Name {
    static let consolePolicy = HTTPField.Name("Content-Security-Policy")!
}
