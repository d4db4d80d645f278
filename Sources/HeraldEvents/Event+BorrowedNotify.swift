/// The fields of an encoded `notify` event, decoded in place: the title and the three texts
/// stay borrowed bytes of the reader's buffer (valid UTF-8, checked), so that a decoder can
/// copy them where they go without making a `String` or ``PackedTexts`` on the way.
package struct BorrowedNotify {
    package var kind: NotificationKind
    package var id: Int64
    package var date: Int64
    package var silent: Bool
    package var partial: Bool
    /// SEMANTICS 1.2 `unreadOnly` (flag 64).
    package var unreadOnly: Bool
    /// The title's UTF-8 bytes; `nil` for no title.
    package var title: UnsafeBufferPointer<UInt8>?
    package var body: UnsafeBufferPointer<UInt8>?
    package var sender: UnsafeBufferPointer<UInt8>?
    package var thread: UnsafeBufferPointer<UInt8>?
}

extension Event {
    /// Decodes a `notify` event whose account and chat names the caller already knows (their
    /// bytes are skipped, as ``init(from:knownAccount:knownChat:)`` skips them), leaving its
    /// title and texts as borrowed bytes; `nil`, having read only the tag, when the event is
    /// of another type.
    ///
    /// Both read the fields through ``notifyFields(_:)`` and require a positive id and a
    /// date from 0, so bytes ``init(from:knownAccount:knownChat:)`` rejects throw here too,
    /// and bytes it accepts give the fields of the event it builds.
    package static func borrowedNotify(from reader: inout ByteReader) throws(ByteReader.Malformed) -> BorrowedNotify? {
        let start = reader
        let tagOffset = reader.offset
        guard try reader.byte() == Tag.notify.rawValue else {
            reader = start
            return nil
        }
        try reader.skipString()
        try reader.skipString()
        let notify = try notifyFields(&reader)
        guard notify.id > 0 && notify.date >= 0 else { throw ByteReader.Malformed(offset: tagOffset, reason: "decoded event is invalid") }
        return notify
    }

    /// The fields of an encoded `notify` after its account and chat names, its title and
    /// texts borrowed (valid UTF-8, checked), its id and date not yet checked: the one reading
    /// of a `notify`'s fields, for ``borrowedNotify(from:)`` and ``init(from:knownAccount:knownChat:)``.
    @inline(__always)
    static func notifyFields(_ reader: inout ByteReader) throws(ByteReader.Malformed) -> BorrowedNotify {
        let kind = try decodeKind(&reader)
        let id = try decodeId(&reader)
        let date = try reader.signedVarint()
        let flags = try reader.byte()
        guard flags & ~0x7F == 0 else { throw ByteReader.Malformed(offset: reader.offset - 1, reason: "unknown flags") }
        let title = flags & 4 != 0 ? try reader.utf8() : nil
        let body = flags & 8 != 0 ? try reader.utf8() : nil
        let sender = flags & 16 != 0 ? try reader.utf8() : nil
        let thread = flags & 32 != 0 ? try reader.utf8() : nil
        return BorrowedNotify(
            kind: kind, id: id, date: date, silent: flags & 1 != 0, partial: flags & 2 != 0, unreadOnly: flags & 64 != 0,
            title: title, body: body, sender: sender, thread: thread)
    }
}

extension Event {
    /// The `notify` event of account `account` and chat `chat` whose other fields are
    /// `notify`'s: the event ``init(from:knownAccount:knownChat:)`` decodes from the same bytes.
    package init(account: String, chat: String, _ notify: BorrowedNotify) {
        var fields = Notify(
            chat: chat, kind: notify.kind, id: notify.id, date: notify.date, silent: notify.silent, partial: notify.partial,
            title: notify.title.map { ByteReader.string(validUTF8: $0) },
            texts: PackedTexts(utf8Body: notify.body, sender: notify.sender, thread: notify.thread))
        fields.unreadOnly = notify.unreadOnly
        self.init(account: account, .notify(fields))
    }
}
