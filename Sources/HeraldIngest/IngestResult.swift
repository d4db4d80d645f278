import HeraldEvents

/// What one payload became.
package struct IngestResult: Sendable, Hashable {
    /// The payload's format: the one asked for, or the detected one.
    package var format: PayloadFormat
    /// The canonical events, in the order they should be appended; each passed `validate()`.
    package var events: [Event]
    /// Whether the payload arrived encrypted (Telegram `p`, Web Push) and was decrypted.
    package var encrypted: Bool

    /// Creates a result.
    package init(format: PayloadFormat, events: [Event], encrypted: Bool) {
        self.format = format
        self.events = events
        self.encrypted = encrypted
    }
}
