import HeraldEvents
import HeraldProjection

/// A rebuild's batches, as ``Store/forEachHistoryBatch(after:through:_:)`` hands them from
/// the decoding thread to the replaying one.
extension ReplayBatch: PipelineBatch {
    /// Decodes stored record `seq`, `interner` interning its names, and adds it. A `notify`
    /// (the usual record) whose account and chat the interner has met before (in a record
    /// decoded before, which checked them) is read in place (``Event/borrowedNotify(from:)``)
    /// and its names, title and packed texts copied into the batch's bytes: no `String`, no
    /// heap object. Any other event whose names it has met is decoded with the names it keeps
    /// (``Event/init(from:knownAccount:knownChat:)``), neither made into strings nor checked
    /// again. Any other record, or one that does not decode that way, goes through
    /// ``LogRecord/decodeEvent(_:names:)``: new names are interned there, and damage is
    /// reported exactly as there. Throws what that throws, adding nothing.
    mutating func add(seq: UInt64, record bytes: UnsafeRawBufferPointer, interner: DecodingInterner) throws(LogRecord.Damage) {
        if bytes.count >= 6, (try? LogRecord.verifyChecksum(bytes)) != nil {
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)]))
            if (try? LogRecord.skipHeader(&reader)) != nil, let encoded = try? Event.encodedNames(reader) {
                var notifyReader = reader
                switch Result(catching: { () throws(ByteReader.Malformed) in try Event.borrowedNotify(from: &notifyReader) }) {
                case .success(let notify?):
                    if notifyReader.isAtEnd, let chat = encoded.chat,
                        let names = interner.knownIds(account: encoded.account, chat: chat)
                    {
                        return append(notify, seq: seq, names: names, account: encoded.account, chat: chat)
                    }
                case .success(nil):
                    if let known = interner.knownNames(account: encoded.account, chat: encoded.chat),
                        let event = try? Event(from: &reader, knownAccount: known.account, knownChat: known.chat),
                        reader.isAtEnd
                    {
                        return append(event, seq: seq, names: known.ids)
                    }
                case .failure:
                    break
                }
            }
        }
        let decoded = try LogRecord.decodeEvent(bytes) { account, chat in interner.names(account: account, chat: chat) }
        append(decoded.event, seq: seq, names: decoded.names)
    }
}
