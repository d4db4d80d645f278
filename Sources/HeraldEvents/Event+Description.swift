extension Event: CustomStringConvertible, CustomDebugStringConvertible {
    /// The event's canonical JSON line (SEMANTICS §1), as `herald export` prints it.
    public var description: String { jsonString }

    public var debugDescription: String { "Event(\(jsonString))" }
}
