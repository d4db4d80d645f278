import HeraldEvents

/// Why a payload was rejected: which format, which field, and what was wrong.
///
/// `field` is a path into the payload as its ecosystem names it (`custom.msg_id`,
/// `notification.room_id`, `p`), or `""` when the whole payload is at fault; `reason` is a
/// few words. At least one of the two is non-empty.
public struct IngestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The format being decoded, or `nil` when detection failed.
    public var format: PayloadFormat?
    /// The field at fault, or `""` for the whole payload.
    public var field: String
    /// What was wrong, in a few words.
    public var reason: String

    /// Creates an error for `field` of a `format` payload.
    public init(format: PayloadFormat?, field: String, reason: String) {
        self.format = format
        self.field = field
        self.reason = reason
    }

    /// `format: field: reason`, leaving out the parts that are absent.
    public var description: String {
        var text = ""
        if let format { text += "\(format.rawValue): " }
        if !field.isEmpty { text += "\(field): " }
        return text + reason
    }

    /// Wraps an event-model error (validation or canonical JSON) for `format`.
    init(format: PayloadFormat, _ error: EventError) {
        self.init(format: format, field: error.field, reason: error.reason)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension IngestError: LocalizedError {
    /// The same message as ``description``: the field and why.
    public var errorDescription: String? { description }
}
