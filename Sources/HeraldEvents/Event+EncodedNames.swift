extension Event {
    /// The account and chat names of an encoded event (the bytes ``init(from:)`` reads,
    /// starting at `reader`'s position), borrowed from the reader's buffer: the chat is `nil`
    /// when the event names none. For bytes that ``init(from:)`` has decoded already; throws
    /// on damaged ones all the same.
    ///
    /// A replay interns the names from these bytes (``HeraldProjection`` `NameInterner`)
    /// instead of reading them back out of the decoded event, whose payload would be copied.
    package static func encodedNames(
        _ reader: ByteReader
    ) throws(ByteReader.Malformed) -> (account: UnsafeBufferPointer<UInt8>, chat: UnsafeBufferPointer<UInt8>?) {
        var reader = reader
        let tagOffset = reader.offset
        guard let tag = Tag(rawValue: try reader.byte()) else {
            throw ByteReader.Malformed(offset: tagOffset, reason: "unknown event tag")
        }
        let account = try reader.unvalidatedUTF8()
        switch tag {
        case .notify, .edit, .read, .readReactions, .endCall, .chatSettings, .readMentions, .clearHistory:
            return (account, try reader.unvalidatedUTF8())
        case .delete, .readAll:
            return (account, try reader.byte() == 1 ? try reader.unvalidatedUTF8() : nil)
        case .dismiss, .dismissGroup, .options, .tick, .revoke, .note:
            return (account, nil)
        }
    }
}
