import HeraldEvents

extension LogRecord: CustomStringConvertible {
    /// `seq 12 (telegram): {"type":"notify",…}`.
    public var description: String { "seq \(seq) (\(source.format)): \(event.jsonString)" }
}

extension Applied: CustomStringConvertible {
    /// `seq 12: {"type":"notify",…} → updateNotificationGroup 2 (…): +7, total 1`.
    public var description: String {
        "seq \(seq): \(event.jsonString)" + (updates.isEmpty ? "" : " → " + updates.map(\.description).joined(separator: "; "))
    }
}
