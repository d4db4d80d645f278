import HeraldEvents

/// A live notification as its group stores it: the fields of the public ``Notification`` in
/// 64 bytes instead of 96.
///
/// The title stays a `String` of its own, because one chat's notifications share the same
/// title and a shared `String` costs a retain, not a copy; body, sender and thread share one
/// packed string (``PackedTexts``), so the rest costs at most one heap allocation. The status
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

    /// The public value, with `status`.
    func notification(status: NotificationStatus) -> Notification {
        let (body, sender, thread) = texts.unpacked()
        return Notification(
            id: id, kind: kind, objectId: objectId, date: date, silent: silent, partial: partial,
            status: status, title: title, body: body, sender: sender, thread: thread)
    }
}

/// A notification's body, sender and thread, each optional, packed into one `String`.
///
/// The packing is canonical (equal texts give equal strings), so packed values compare and
/// hash like the three fields would. Layout: empty when all three are absent; otherwise one
/// ASCII letter `a` + (bit 0 body, bit 1 sender, bit 2 thread present), then each present
/// field in that order as its UTF-8 length in decimal, `:`, and its bytes, except the last
/// present field, which runs to the end without a length. The string is allocated at its
/// exact size, and packings of at most 15 bytes need no allocation at all.
struct PackedTexts: Hashable, Sendable {
    /// The packed form.
    private(set) var storage: String

    /// No texts.
    static let none = PackedTexts(storage: "")

    private init(storage: String) {
        self.storage = storage
    }

    /// Packs the three texts.
    init(body: String?, sender: String?, thread: String?) {
        var mask: UInt8 = 0
        if body != nil { mask |= 1 }
        if sender != nil { mask |= 2 }
        if thread != nil { mask |= 4 }
        guard mask != 0 else {
            storage = ""
            return
        }
        let last = Self.lastField(mask)
        var size = 1
        func measure(_ field: String?, _ index: Int) {
            guard let field else { return }
            let count = field.utf8.count
            size += count
            if index != last { size += Self.digits(count) + 1 }
        }
        measure(body, 0)
        measure(sender, 1)
        measure(thread, 2)
        storage = String(unsafeUninitializedCapacity: size) { buffer in
            buffer[0] = UInt8(ascii: "a") + mask
            var position = 1
            func write(_ field: String?, _ index: Int) {
                guard var field else { return }
                let count = field.utf8.count
                if index != last {
                    var digits = Self.digits(count)
                    var value = count
                    while digits > 0 {
                        digits -= 1
                        buffer[position + digits] = UInt8(ascii: "0") + UInt8(value % 10)
                        value /= 10
                    }
                    position += Self.digits(count)
                    buffer[position] = UInt8(ascii: ":")
                    position += 1
                }
                field.withUTF8 { bytes in
                    UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[position...])
                        .copyMemory(from: UnsafeRawBufferPointer(bytes))
                }
                position += count
            }
            write(body, 0)
            write(sender, 1)
            write(thread, 2)
            return position
        }
    }

    /// The number of decimal digits of `value` (≥ 0).
    @inline(__always)
    private static func digits(_ value: Int) -> Int {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// The index of the last field present in `mask`.
    @inline(__always)
    private static func lastField(_ mask: UInt8) -> Int {
        UInt8.bitWidth - 1 - mask.leadingZeroBitCount
    }

    /// The three texts.
    func unpacked() -> (body: String?, sender: String?, thread: String?) {
        guard !storage.isEmpty else { return (nil, nil, nil) }
        var copy = storage
        return copy.withUTF8 { bytes in
            let mask = bytes[0] &- UInt8(ascii: "a")
            let last = Self.lastField(mask)
            var position = 1
            func field(_ index: Int) -> String? {
                guard mask & (1 << index) != 0 else { return nil }
                var end = bytes.count
                if index != last {
                    var length = 0
                    while bytes[position] != UInt8(ascii: ":") {
                        length = length * 10 + Int(bytes[position] &- UInt8(ascii: "0"))
                        position += 1
                    }
                    position += 1
                    end = position + length
                }
                defer { position = end }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[position..<end]), as: UTF8.self)
            }
            let body = field(0)
            let sender = field(1)
            let thread = field(2)
            return (body, sender, thread)
        }
    }
}
