import HeraldEvents

/// What ``Account/notify(_:chat:)`` reads of a `notify` event: its fields, and a way to put
/// its title and texts into the account's ``TextArena``. An ``Event/Notify`` is one; a
/// ``PackedNotify``, whose title and texts are bytes a decoder laid out, is the other.
protocol NotifyContent {
    var kind: NotificationKind { get }
    var id: Int64 { get }
    var date: Int64 { get }
    var silent: Bool { get }
    var partial: Bool { get }
    /// SEMANTICS 1.2 `unreadOnly`: the message counts but never notifies.
    var unreadOnly: Bool { get }
    /// The title, made into a `String` (only when the event's updates show it).
    var title: String? { get }
    /// The packed texts, made into a value (only when the event's updates show them).
    var texts: PackedTexts { get }
    /// Stores the title and texts into `arena` and returns their slot.
    func storeTexts(into arena: inout TextArena) -> UInt32
}

extension Event.Notify: NotifyContent {
    @inline(__always)
    func storeTexts(into arena: inout TextArena) -> UInt32 {
        arena.store(title: title, texts: texts)
    }
}

/// A `notify` event's fields with its title and texts as bytes in a buffer that someone else
/// owns (a rebuild's batch of decoded records): the title's UTF-8 followed by the canonical
/// packing of the body, sender and thread (``PackedTexts``), the layout a ``TextArena`` slot
/// keeps, so that replaying it copies them into the arena at once, making no `String` and no
/// ``PackedTexts``. The bytes must stay valid and unchanged while the value is used.
package struct PackedNotify: NotifyContent {
    package var kind: NotificationKind
    package var id: Int64
    package var date: Int64
    package var silent: Bool
    package var partial: Bool
    package var unreadOnly: Bool
    /// The title's bytes then the packed texts' bytes.
    package var textBytes: UnsafeRawBufferPointer
    /// How many of ``textBytes`` are the title's; `.max` for no title (and none of them).
    package var titleLength: UInt32

    /// A notify of these fields, whose title and packed texts are `textBytes`.
    package init(
        kind: NotificationKind, id: Int64, date: Int64, silent: Bool, partial: Bool, unreadOnly: Bool,
        textBytes: UnsafeRawBufferPointer, titleLength: UInt32
    ) {
        self.unreadOnly = unreadOnly
        self.kind = kind
        self.id = id
        self.date = date
        self.silent = silent
        self.partial = partial
        self.textBytes = textBytes
        self.titleLength = titleLength
    }

    /// The number of title bytes in ``textBytes``.
    private var titleCount: Int { titleLength == .max ? 0 : Int(titleLength) }

    var title: String? {
        guard titleLength != .max else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: textBytes[..<titleCount]), as: UTF8.self)
    }

    var texts: PackedTexts {
        PackedTexts(packed: UnsafeRawBufferPointer(rebasing: textBytes[titleCount...]).bindMemory(to: UInt8.self))
    }

    @inline(__always)
    func storeTexts(into arena: inout TextArena) -> UInt32 {
        arena.store(titleAndPackedTexts: textBytes, titleLength: titleLength)
    }
}
