import Foundation
import HeraldEvents
import Logging

/// A swift-log handler writing one JSON object per line to stderr: `ts`, `level`, `label`,
/// `message` and the metadata. The service never puts payload texts or keys in metadata.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String

    /// A handler for loggers labelled `label`.
    public init(label: String) { self.label = label }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var document: [String: JSONValue] = [
            "ts": .string(ISO8601DateFormatter().string(from: Date())),
            "level": .string(event.level.rawValue),
            "label": .string(label),
            "message": .string(event.message.description),
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) { document[key] = .string("\(value)") }
        FileHandle.standardError.write(Data(JSONValue.object(document).bytes + [0x0A]))
    }
}
