import HeraldEvents
import HeraldProjection

/// An event that was appended and applied: its seq and the updates it produced.
public struct Applied: Hashable, Sendable {
    /// The event's seq in the log.
    public var seq: UInt64
    /// The event.
    public var event: Event
    /// The updates the projection emitted for it (SEMANTICS §9), possibly none.
    public var updates: [Update]

    /// Creates an applied event.
    public init(seq: UInt64, event: Event, updates: [Update]) {
        self.seq = seq
        self.event = event
        self.updates = updates
    }
}
