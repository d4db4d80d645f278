/// Why an event was rejected: which field, and what was wrong with it.
///
/// A rejected event changes nothing: validation runs before anything is appended.
public struct EventError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The field at fault, as named in the JSON form (`"id"`, `"ids[2]"`, `"type"`),
    /// or `""` when the whole document is at fault.
    public var field: String
    /// What was wrong, in a few words.
    public var reason: String

    /// Creates an error for `field`.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    public var description: String { field.isEmpty ? reason : "\(field): \(reason)" }
}
