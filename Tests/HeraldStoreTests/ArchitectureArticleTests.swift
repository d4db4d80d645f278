import Foundation
import HeraldTestSupport
import Testing

/// The Architecture article (`Sources/HeraldStore/HeraldStore.docc/Architecture.md`) traces
/// an append, a rebuild and an audit by the names of files, types and functions: each must
/// still be in the sources, so that the article cannot drift from the code unnoticed.
@Suite("Architecture article names what the code has")
struct ArchitectureArticleTests {
    static let article = Fixtures.repository.appendingPathComponent("Sources/HeraldStore/HeraldStore.docc/Architecture.md")

    /// Every `.swift` file of `Sources/` and `Tests/`, by file name, with its text.
    static func sources() throws -> [String: String] {
        var files: [String: String] = [:]
        for folder in ["Sources", "Tests"] {
            let root = Fixtures.repository.appendingPathComponent(folder)
            let walk = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let url = walk?.nextObject() as? URL {
                guard url.pathExtension == "swift" else { continue }
                files[url.lastPathComponent] = try String(contentsOf: url, encoding: .utf8)
            }
        }
        return files
    }

    /// The code spans of the article: the text between each pair of backticks.
    static func codeSpans(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    /// The parameter labels a declaration `func name(` (or `init(`) at `start` in `text`
    /// gives its callers: the first word of each parameter, up to the matching parenthesis.
    static func labels(in text: Substring) -> [String] {
        var depth = 0
        var current = ""
        var parameters: [String] = []
        for character in text {
            switch character {
            case "(", "[", "<": depth += 1; if depth > 1 { current.append(character) }
            case ")", "]", ">":
                depth -= 1
                if depth == 0 {
                    if !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { parameters.append(current) }
                    return parameters.map { String($0.trimmingCharacters(in: .whitespacesAndNewlines).prefix { $0 != " " && $0 != ":" }) }
                }
                current.append(character)
            case "," where depth == 1: parameters.append(current); current = ""
            default: if depth >= 1 { current.append(character) }
            }
        }
        return []
    }

    /// Whether `sources` declare a function (or initialiser) `name` with exactly `labels`.
    static func declares(_ name: String, labels wanted: [String], in sources: [String: String]) -> Bool {
        let keyword = name == "init" ? "init" : "func \(name)"
        for text in sources.values {
            var rest = text[...]
            while let found = rest.range(of: keyword + "(") ?? rest.range(of: keyword + "<") {
                let declaration = rest[found.lowerBound...]
                let open = declaration.firstIndex(of: "(")!
                if labels(in: declaration[open...]) == wanted { return true }
                rest = rest[found.upperBound...]
            }
        }
        return false
    }

    @Test("each file, type, function and name the article mentions is in the sources")
    func namesExist() throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        let sources = try Self.sources()
        let all = sources.values.joined(separator: "\n")
        let spans = Self.codeSpans(text)
        #expect(spans.count > 40, "the article traces the code by name")
        var checked = 0
        for span in spans where !span.contains(" ") {
            checked += 1
            if span.hasSuffix(".swift") {
                let exists = sources[span] != nil
                #expect(exists, "the article names \(span), which is not in Sources/ or Tests/")
            } else if let open = span.firstIndex(of: "("), span.hasSuffix(")") {
                // `Type.name(label:label:)` or `name(_:)`: a declaration with those labels.
                let name = String(span[..<open].split(separator: ".").last ?? "")
                let inside = span[span.index(after: open)..<span.index(before: span.endIndex)]
                let labels = inside.split(separator: ":").map(String.init)
                let declared = Self.declares(name, labels: labels, in: sources)
                #expect(declared, "the article names \(span), which no declaration matches")
            } else {
                // A type, a member or a value: each dotted part is a word of the sources.
                for part in span.split(separator: ".") {
                    let word = try Regex("\\b\(part)\\b")
                    let found = all.contains(word)
                    #expect(found, "the article names \(span), and \(part) is not in the sources")
                }
            }
        }
        #expect(checked > 40)
    }

    @Test("the article's checker notices a name that is not in the sources")
    func checkerFailsOnRenames() throws {
        let sources = try Self.sources()
        #expect(Self.declares("auditReport", labels: ["account", "target", "listingUnchanged"], in: sources))
        #expect(!Self.declares("auditReport", labels: ["account", "target", "listing"], in: sources))
        #expect(!Self.declares("appendEverything", labels: ["_"], in: sources))
        #expect(Self.labels(in: "(_ batch: [(Event, Source)], through seq: UInt64 = .max) -> X"[...]) == ["_", "through"])
    }
}
