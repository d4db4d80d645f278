import Foundation
import HeraldTestSupport
import Testing

/// The Swift snippets a user reads (README, DocC articles, doc comments of HeraldStore and
/// HeraldIngest) are in `DocSnippets.swift` (the README's embedding example in
/// `ReadmeExampleTests.swift`), which the test build type-checks: a snippet that changes
/// without them, or one added without them, fails here.
@Suite("Documentation snippets")
struct DocSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The ```swift blocks of a Markdown text (or of doc comments, `///` removed), each as its
    /// lines. A block starting `// Package.swift` is a manifest fragment, not compiled.
    static func swiftBlocks(_ text: String, docComments: Bool) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = Substring(rawLine)
            if docComments {
                let trimmed = line.drop { $0 == " " }
                guard trimmed.hasPrefix("///") else {
                    current = nil
                    continue
                }
                line = trimmed.dropFirst(3)
                if line.hasPrefix(" ") { line = line.dropFirst() }
            }
            let marker = line.trimmingCharacters(in: .whitespaces)
            if current == nil {
                if marker == "```swift" { current = [] }
            } else if marker == "```" {
                if let block = current, block.first?.hasPrefix("// Package.swift") != true { blocks.append(block) }
                current = nil
            } else {
                current?.append(String(line))
            }
        }
        return blocks
    }

    /// Lines without their indentation, blank ones dropped, joined.
    static func normalized(_ lines: [String]) -> String {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "\n")
    }

    func read(_ relative: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(relative), encoding: .utf8)
    }

    /// Every snippet, by where it is.
    func snippets() throws -> [(place: String, lines: [String])] {
        let fileManager = FileManager.default
        var found: [(String, [String])] = []
        func add(_ relative: String, docComments: Bool) throws {
            for block in Self.swiftBlocks(try read(relative), docComments: docComments) { found.append((relative, block)) }
        }
        try add("README.md", docComments: false)
        for module in ["HeraldEvents", "HeraldProjection", "HeraldStore", "HeraldIngest"] {
            let catalogue = "Sources/\(module)/\(module).docc"
            for name in try fileManager.contentsOfDirectory(atPath: Self.root.appendingPathComponent(catalogue).path).sorted()
            where name.hasSuffix(".md") {
                try add(catalogue + "/" + name, docComments: false)
            }
        }
        for module in ["HeraldStore", "HeraldIngest"] {
            for name in try fileManager.contentsOfDirectory(atPath: Self.root.appendingPathComponent("Sources/\(module)").path).sorted()
            where name.hasSuffix(".swift") {
                try add("Sources/\(module)/\(name)", docComments: true)
            }
        }
        return found
    }

    @Test("every Swift snippet of the README, the articles and the doc comments is compiled in DocSnippets.swift")
    func snippetsAreCompiled() throws {
        let source = try read("Tests/HeraldIngestTests/DocSnippets.swift")
        let sourceLines = source.split(separator: "\n").map(String.init)
        let imports = Set(sourceLines.filter { $0.hasPrefix("import ") })
        // The README's embedding example runs in ReadmeExampleTests, on a temporary directory.
        let readmeExample = try read("Tests/HeraldStoreTests/ReadmeExampleTests.swift")
            .replacingOccurrences(of: "dir.path", with: #""/path/to/herald.db""#)
        let body = Self.normalized(sourceLines.filter { !$0.hasPrefix("import ") })
            + "\n" + Self.normalized(readmeExample.split(separator: "\n").map(String.init))
        let found = try snippets()
        #expect(found.count >= 15, "\(found.count) snippets found")
        #expect(found.contains { $0.place == "README.md" })
        for (place, lines) in found {
            let code = lines.filter { !$0.hasPrefix("import ") }
            for line in lines where line.hasPrefix("import ") {
                #expect(imports.contains(line), "\(place): `\(line)` is not among DocSnippets.swift's imports")
            }
            let wanted = Self.normalized(code)
            #expect(wanted.isEmpty || body.contains(wanted), "\(place): this snippet is not in DocSnippets.swift:\n\(lines.joined(separator: "\n"))")
        }
    }

    @Test("the snippet reader finds blocks in Markdown and in doc comments, and skips manifest fragments")
    func reader() {
        let markdown = "text\n```swift\nlet a = 1\n  let b = 2\n```\n```json\n{}\n```\n```swift\n// Package.swift\n.package(url: \"x\")\n```\n"
        #expect(Self.swiftBlocks(markdown, docComments: false) == [["let a = 1", "  let b = 2"]])
        let comments = "/// Doc.\n///\n/// ```swift\n/// let c = 3\n/// ```\nstruct S {}\n    /// ```swift\n    /// f()\n    /// ```\n"
        #expect(Self.swiftBlocks(comments, docComments: true) == [["let c = 3"], ["f()"]])
    }
}
