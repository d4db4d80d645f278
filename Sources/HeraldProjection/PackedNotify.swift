import HeraldEvents

/// What ``Account/notify(_:chat:)`` reads of a `notify` event: its fields, and a way to put
/// its title and texts into the account's ``TextArena``. An ``Event/Notify`` is one; a
/// ``PackedNotify``, a batch's record whose title and texts are bytes a decoder laid out, is
/// the other.
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

/// A `notify` record of a ``ReplayBatch`` (its ``ReplayBatch/Entry``) read in the batch's
/// bytes: its names, then its title's UTF-8 followed by the canonical packing of the body,
/// sender and thread (``PackedTexts``), the layout a ``TextArena`` slot keeps, so that
/// replaying it copies them into the arena at once, making no `String` and no
/// ``PackedTexts``. The bytes must stay valid and unchanged while the value is used.
struct PackedNotify: NotifyContent {
    let entry: ReplayBatch.Entry
    /// The batch's bytes, where ``ReplayBatch/Entry/start`` counts from.
    let bytes: UnsafeRawPointer

    var kind: NotificationKind { entry.kind.unsafelyUnwrapped }
    var id: Int64 { entry.id }
    var date: Int64 { entry.date }
    var silent: Bool { entry.silent }
    var partial: Bool { entry.partial }
    var unreadOnly: Bool { entry.unreadOnly }

    /// The account's name, UTF-8.
    var account: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: (bytes + Int(entry.start)).assumingMemoryBound(to: UInt8.self), count: Int(entry.accountLength))
    }

    /// The chat's name, UTF-8.
    var chat: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(
            start: (bytes + Int(entry.start) + Int(entry.accountLength)).assumingMemoryBound(to: UInt8.self),
            count: Int(entry.chatLength))
    }

    /// The number of title bytes; 0 for no title.
    private var titleCount: Int { entry.titleLength == .max ? 0 : Int(entry.titleLength) }

    /// The title's bytes then the packed texts' bytes.
    private var textBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(
            start: bytes + Int(entry.start) + Int(entry.accountLength) + Int(entry.chatLength),
            count: titleCount + Int(entry.textsLength))
    }

    var title: String? {
        guard entry.titleLength != .max else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: textBytes[..<titleCount]), as: UTF8.self)
    }

    var texts: PackedTexts {
        PackedTexts(packed: UnsafeRawBufferPointer(rebasing: textBytes[titleCount...]).bindMemory(to: UInt8.self))
    }

    @inline(__always)
    func storeTexts(into arena: inout TextArena) -> UInt32 {
        arena.store(titleAndPackedTexts: textBytes, titleLength: entry.titleLength)
    }
}
