import Foundation

/// The files tests read, kept in the repository so that `swift test` passes on a clone with
/// nothing beside it: the conformance cases and sample payloads under `Tests/Fixtures/`, and
/// the contract (`SEMANTICS.md`, `STATE.md`) under `schema/spec/`; and the benchmarks' C
/// baselines under `Benchmarks/Baselines/`.
///
/// They are copies of the project's shared folder (`../shared/` beside the repository, where
/// it exists); `FixtureCopyTests` fails while a copy differs from it, so a newer spec there
/// fails CI until it is taken in here.
public enum Fixtures {
    /// The repository's root: two levels above this file's folder.
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .standardizedFileURL

    /// The path of `relative` (say `payloads/telegram/doc-sample.json`) under `Tests/Fixtures/`.
    public static func path(_ relative: String) -> String {
        repository.appendingPathComponent("Tests/Fixtures").appendingPathComponent(relative).path
    }

    /// The conformance cases' folder.
    public static var conformance: URL { URL(fileURLWithPath: path("conformance")) }

    /// The names of the conformance cases (each `NAME.events.jsonl`), sorted.
    public static var conformanceCases: [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: conformance.path)) ?? []
        return files.filter { $0.hasSuffix(".events.jsonl") }.map { String($0.dropLast(".events.jsonl".count)) }.sorted()
    }

    /// Where each folder of the shared folder is kept in the repository: shared path → path
    /// under the repository's root.
    public static let copies: [(shared: String, repository: String)] = [
        ("spec/SEMANTICS.md", "schema/spec/SEMANTICS.md"),
        ("spec/STATE.md", "schema/spec/STATE.md"),
        ("spec/conformance", "Tests/Fixtures/conformance"),
        ("payloads", "Tests/Fixtures/payloads"),
        ("bench", "Benchmarks/Baselines"),
    ]

    /// The project's shared folder beside the repository, or nil on a clone with nothing
    /// beside it (`HERALD_SHARED` names another place).
    public static var shared: URL? {
        let url = ProcessInfo.processInfo.environment["HERALD_SHARED"].map { URL(fileURLWithPath: $0) }
            ?? repository.appendingPathComponent("../shared").standardizedFileURL
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue ? url : nil
    }

    /// Every regular file under `url` (itself, when it is a file), as paths relative to it, sorted.
    public static func files(under url: URL) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [""] }
        let enumerator = FileManager.default.enumerator(atPath: url.path)
        var found: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            var child: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.appendingPathComponent(relative).path, isDirectory: &child), !child.boolValue {
                found.append(relative)
            }
        }
        return found.sorted()
    }
}
