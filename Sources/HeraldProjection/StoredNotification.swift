import HeraldEvents

/// A live notification as its group stores it: the fields of the public ``HeraldNotification`` in
/// 32 bytes of plain data instead of 96.
///
/// The title and the packed body, sender and thread live in the account's ``TextArena``,
/// which the notification names by slot: it holds no reference, so moving it inside its
/// group's lists is a plain copy, and creating or clearing it allocates nothing. The status
/// is implied by the list that holds the notification (``NotificationGroup/active`` or
/// ``NotificationGroup/dismissed``). Live notifications dominate the projection's memory (the
/// performance targets budget 300 bytes for each).
///
/// Equality and hashing leave out the slot, which depends on history; ``NotificationStorage``
/// compares the texts themselves.
struct StoredNotification: Hashable, Sendable {
    /// The notification id.
    var id: Int64
    /// The id of the message or object it is about.
    var objectId: Int64
    /// The date of the event that created it (or last upgraded it).
    var date: Int64
    /// Its title and texts: a slot of the account's ``TextArena``.
    var textSlot: UInt32
    /// The kind of notification.
    var kind: NotificationKind
    /// Whether it was delivered without sound.
    var silent: Bool
    /// Whether its content is partial (a later full `notify` upgrades it).
    var partial: Bool

    @inline(__always)
    init(id: Int64, kind: NotificationKind, objectId: Int64, date: Int64, silent: Bool, partial: Bool, textSlot: UInt32) {
        self.id = id
        self.objectId = objectId
        self.date = date
        self.textSlot = textSlot
        self.kind = kind
        self.silent = silent
        self.partial = partial
    }

    /// The public value, for an active notification (the only ones a client is shown), with
    /// its title and texts (``Account/publicValue(of:)`` finds them).
    func publicValue(title: String?, texts: PackedTexts) -> HeraldNotification {
        HeraldNotification(
            id: id, objectId: objectId, date: date, title: title, texts: texts, kind: kind, silent: silent,
            partial: partial, status: .active)
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id == rhs.id && lhs.objectId == rhs.objectId && lhs.date == rhs.date && lhs.kind == rhs.kind
            && lhs.silent == rhs.silent && lhs.partial == rhs.partial
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(objectId)
        hasher.combine(date)
        hasher.combine(kind)
        hasher.combine(silent)
        hasher.combine(partial)
    }
}
