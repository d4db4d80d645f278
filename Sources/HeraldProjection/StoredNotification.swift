import HeraldEvents

/// A live notification as its group stores it: the fields of the public ``Notification`` in
/// 64 bytes instead of 96.
///
/// The title stays a `String` of its own, because one chat's notifications share the same
/// title and a shared `String` costs a retain, not a copy; body, sender and thread share one
/// packed run of bytes (``PackedTexts``), so the rest costs at most one heap allocation. The status
/// is implied by the list that holds the notification (``NotificationGroup/active`` or
/// ``NotificationGroup/dismissed``). Live notifications dominate the projection's memory (the
/// performance targets budget 300 bytes for each), and the smaller stride also cuts the
/// bytes moved when a group's list shifts.
struct StoredNotification: Hashable, Sendable {
    /// The notification id.
    var id: Int64
    /// The id of the message or object it is about.
    var objectId: Int64
    /// The date of the event that created it (or last upgraded it).
    var date: Int64
    /// The title.
    var title: String?
    /// Body, sender and thread.
    var texts: PackedTexts
    /// What it is about.
    var kind: NotificationKind
    /// Whether it was created without sound.
    var silent: Bool
    /// Whether its content came from a push that may be incomplete.
    var partial: Bool

    /// Creates a stored notification.
    @inline(__always)
    init(
        id: Int64, kind: NotificationKind, objectId: Int64, date: Int64, silent: Bool, partial: Bool,
        title: String?, texts: PackedTexts
    ) {
        self.id = id
        self.objectId = objectId
        self.date = date
        self.title = title
        self.texts = texts
        self.kind = kind
        self.silent = silent
        self.partial = partial
    }

    /// The public value, for an active notification (the only ones a client is shown).
    var publicValue: Notification {
        Notification(
            id: id, objectId: objectId, date: date, title: title, texts: texts, kind: kind, silent: silent,
            partial: partial, status: .active)
    }
}
