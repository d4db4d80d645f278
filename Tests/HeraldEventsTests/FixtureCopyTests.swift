import Foundation
import Testing
import HeraldTestSupport

/// The spec, conformance cases and payloads the tests read are kept in the repository
/// (`Fixtures`); where the project's shared folder exists beside it, every copy must equal it,
/// file for file and byte for byte, so that a newer spec there fails until it is taken in.
@Suite("fixtures kept in the repository")
struct FixtureCopyTests {
    @Test("the repository holds the contract, the conformance cases and the sample payloads")
    func present() throws {
        #expect(FileManager.default.fileExists(atPath: Fixtures.repository.appendingPathComponent("schema/spec/SEMANTICS.md").path))
        #expect(FileManager.default.fileExists(atPath: Fixtures.repository.appendingPathComponent("schema/spec/STATE.md").path))
        #expect(Fixtures.conformanceCases.count >= 26, "\(Fixtures.conformanceCases)")
        for name in Fixtures.conformanceCases {
            #expect(FileManager.default.fileExists(atPath: Fixtures.path("conformance/\(name).expected.json")), "\(name)")
        }
        #expect(FileManager.default.fileExists(atPath: Fixtures.path("payloads/telegram/encrypted-push-vector.json")))
    }

    @Test("each copy equals the shared folder beside the repository, where there is one",
          .enabled(if: Fixtures.shared != nil, "no shared folder beside the repository"),
          arguments: Fixtures.copies.map(\.shared))
    func equalsShared(_ sharedPath: String) throws {
        let shared = try #require(Fixtures.shared).appendingPathComponent(sharedPath)
        let copy = Fixtures.repository.appendingPathComponent(try #require(Fixtures.copies.first { $0.shared == sharedPath }).repository)
        let theirs = Fixtures.files(under: shared)
        let ours = Fixtures.files(under: copy)
        #expect(!theirs.isEmpty, "\(shared.path) holds no file")
        #expect(theirs == ours, "files differ: only in \(shared.path): \(Set(theirs).subtracting(ours).sorted()); only in \(copy.path): \(Set(ours).subtracting(theirs).sorted()); copy them with `cp -a`")
        for relative in Set(theirs).intersection(ours).sorted() {
            let a = try Data(contentsOf: relative.isEmpty ? shared : shared.appendingPathComponent(relative))
            let b = try Data(contentsOf: relative.isEmpty ? copy : copy.appendingPathComponent(relative))
            #expect(a == b, "\(copy.appendingPathComponent(relative).path) differs from \(shared.appendingPathComponent(relative).path): copy the shared one in")
        }
    }
}
