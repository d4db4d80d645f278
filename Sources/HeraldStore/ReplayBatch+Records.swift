import HeraldEvents
import HeraldProjection

/// A rebuild's batches, as ``Store/forEachHistoryBatch(after:through:_:)`` hands them from
/// the decoding thread to the replaying one.
extension ReplayBatch: PipelineBatch {
    /// Decodes stored record `seq` (``LogRecord/decodeHistoryRecord(_:interner:knownNotify:event:)``)
    /// and adds it: the usual record, a `notify` whose account and chat the run has interned
    /// before, as bytes the batch owns and reuses (no `String`, no heap object); any other as
    /// its ``Event``. Throws what decoding throws, adding nothing.
    mutating func add(seq: UInt64, record: UnsafeRawBufferPointer, interner: DecodingInterner) throws(LogRecord.Damage) {
        try LogRecord.decodeHistoryRecord(
            record, interner: interner,
            knownNotify: { notify, names, account, chat in append(notify, seq: seq, names: names, account: account, chat: chat) },
            event: { event, names in append(event, seq: seq, names: names) })
    }
}
