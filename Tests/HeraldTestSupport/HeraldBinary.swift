import Foundation

/// The built `herald` executable, for tests that run it as a process.
public enum HeraldBinary {
    /// Next to the test bundle (`swift build` puts both in one folder), else
    /// `.build/debug/herald` of this package.
    public static let path: String = {
        var candidates: [URL] = []
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("herald"))
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug/herald"))
        for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
            return candidate.path
        }
        fatalError("the herald binary was not found (looked in \(candidates.map(\.path))); run `swift build` first")
    }()
}
