import HeraldEvents
import HeraldProjection

/// A batch of a rebuild's decoded records, in log order, as ``Store/forEachHistoryEvent(after:_:)``
/// hands them from the decoding thread to the replaying one.
///
/// The usual record, a `notify` whose account and chat the run has interned before, is kept
/// as a plain ``Entry`` whose names, title and texts are bytes in a buffer the batch owns and
/// reuses (``add(seq:record:interner:)``): decoding it makes no `String` and no heap object,
/// and the replay copies its title and texts into the projection's pages at once
/// (``PackedNotify``). Any other record is kept as its ``Event``, as before.
struct HistoryBatch: PipelineBatch, Sendable {
    /// One record. Plain data, so that emptying the batch frees nothing per record.
    struct Entry {
        var seq: UInt64
        var names: InternedNames
        /// The notify's kind; `nil` when the record is the next of ``events``.
        var kind: NotificationKind?
        var silent: Bool
        var partial: Bool
        var unreadOnly: Bool
        var id: Int64
        var date: Int64
        /// Where the entry's bytes start in ``bytes``: its account's name, its chat's, its
        /// title and its packed texts, side by side.
        var start: UInt32
        var accountLength: UInt32
        var chatLength: UInt32
        /// The title's byte count; `.max` for no title.
        var titleLength: UInt32
        var textsLength: UInt32
    }

    /// The records, in order.
    private var entries: [Entry] = []
    /// The records kept as events, in order.
    private var events: [Event] = []
    /// The notifies' bytes (``Entry/start``); all of it initialized, `used` of it taken.
    private var bytes: [UInt8] = []
    private var used = 0

    init() {}

    var count: Int { entries.count }

    /// How many records the batch keeps as packed notifies, not as events.
    var packedCount: Int { entries.count - events.count }

    mutating func empty(reservingCapacity capacity: Int) {
        entries.removeAll(keepingCapacity: true)
        entries.reserveCapacity(capacity)
        events.removeAll(keepingCapacity: true)
        used = 0
        // A batch of unusually large records leaves no large buffer behind for the rest of the run.
        if bytes.count > 1 << 22 { bytes = [] }
    }

    /// Decodes stored record `seq` (``LogRecord/decodeHistoryRecord(_:interner:knownNotify:event:)``)
    /// and adds it; throws what that throws, adding nothing.
    mutating func add(seq: UInt64, record: UnsafeRawBufferPointer, interner: DecodingInterner) throws(LogRecord.Damage) {
        try LogRecord.decodeHistoryRecord(
            record, interner: interner,
            knownNotify: { notify, names, account, chat in add(seq: seq, notify, names: names, account: account, chat: chat) },
            event: { event, names in add(seq: seq, event, names: names) })
    }

    /// Adds a record kept as its event.
    mutating func add(seq: UInt64, _ event: Event, names: InternedNames) {
        entries.append(Entry(
            seq: seq, names: names, kind: nil, silent: false, partial: false, unreadOnly: false, id: 0, date: 0, start: 0, accountLength: 0,
            chatLength: 0, titleLength: 0, textsLength: 0))
        events.append(event)
    }

    /// Adds a `notify` record, copying its names, title and packed texts into ``bytes``.
    mutating func add(
        seq: UInt64, _ notify: BorrowedNotify, names: InternedNames, account: UnsafeBufferPointer<UInt8>,
        chat: UnsafeBufferPointer<UInt8>
    ) {
        let titleCount = notify.title?.count ?? 0
        let textsCount = PackedTexts.packedCount(body: notify.body, sender: notify.sender, thread: notify.thread)
        let size = account.count + chat.count + titleCount + textsCount
        guard used + size <= Int(UInt32.max) else {
            // Offsets are 32-bit: a batch of very large records keeps the rest as events.
            let event = Event(account: String(decoding: account, as: UTF8.self), chat: String(decoding: chat, as: UTF8.self), notify)
            add(seq: seq, event, names: names)
            return
        }
        if used + size > bytes.count { grow(to: used + size) }
        let start = used
        bytes.withUnsafeMutableBytes { buffer in
            var position = buffer.baseAddress.unsafelyUnwrapped + start
            func copy(_ field: UnsafeBufferPointer<UInt8>?) {
                guard let field, field.count > 0 else { return }
                position.copyMemory(from: field.baseAddress.unsafelyUnwrapped, byteCount: field.count)
                position += field.count
            }
            copy(account)
            copy(chat)
            copy(notify.title)
            PackedTexts.pack(body: notify.body, sender: notify.sender, thread: notify.thread, into: position)
        }
        used += size
        entries.append(Entry(
            seq: seq, names: names, kind: notify.kind, silent: notify.silent, partial: notify.partial, unreadOnly: notify.unreadOnly,
            id: notify.id,
            date: notify.date, start: UInt32(start), accountLength: UInt32(account.count), chatLength: UInt32(chat.count),
            titleLength: notify.title == nil ? .max : UInt32(titleCount), textsLength: UInt32(textsCount)))
    }

    /// Makes ``bytes`` hold at least `needed` bytes, keeping those taken.
    private mutating func grow(to needed: Int) {
        var grown = [UInt8](repeating: 0, count: max(needed, 2 * bytes.count, 64 * 1024))
        grown.replaceSubrange(0..<used, with: bytes[..<used])
        bytes = grown
    }

    /// Calls `body` with each record, in order.
    func forEach(_ body: (HistoryRecord) throws -> Void) rethrows {
        try entries.withUnsafeBufferPointer { entries in
            try events.withUnsafeBufferPointer { events in
                try bytes.withUnsafeBytes { bytes in
                    var nextEvent = 0
                    for index in entries.indices {
                        let entry = entries.baseAddress.unsafelyUnwrapped + index
                        if entry.pointee.kind == nil {
                            try body(HistoryRecord(entry: entry, event: events.baseAddress.unsafelyUnwrapped + nextEvent, bytes: nil))
                            nextEvent += 1
                        } else {
                            try body(HistoryRecord(entry: entry, event: nil, bytes: bytes.baseAddress))
                        }
                    }
                }
            }
        }
    }
}

/// One record of the history a rebuild replays, lent by ``Store/forEachHistoryEvent(after:_:)``
/// (valid during that call only).
struct HistoryRecord {
    fileprivate let entry: UnsafePointer<HistoryBatch.Entry>
    /// The record's event, when the batch keeps it as one.
    fileprivate let event: UnsafePointer<Event>?
    /// The batch's bytes, when the record is a notify kept in them.
    fileprivate let bytes: UnsafeRawPointer?

    /// The record's seq.
    var seq: UInt64 { entry.pointee.seq }

    /// Replays the record's event into `projection` (``Projection/replay(_:seq:names:)``).
    func replay(into projection: inout Projection) {
        let entry = self.entry.pointee
        guard let kind = entry.kind else {
            projection.replay(event.unsafelyUnwrapped.pointee, seq: entry.seq, names: entry.names)
            return
        }
        let account = bytes.unsafelyUnwrapped + Int(entry.start)
        let chat = account + Int(entry.accountLength)
        let texts = chat + Int(entry.chatLength)
        let textsCount = (entry.titleLength == .max ? 0 : Int(entry.titleLength)) + Int(entry.textsLength)
        projection.replay(
            PackedNotify(
                kind: kind, id: entry.id, date: entry.date, silent: entry.silent, partial: entry.partial,
                unreadOnly: entry.unreadOnly, textBytes: UnsafeRawBufferPointer(start: texts, count: textsCount), titleLength: entry.titleLength),
            seq: entry.seq, names: entry.names,
            account: UnsafeBufferPointer(start: account.assumingMemoryBound(to: UInt8.self), count: Int(entry.accountLength)),
            chat: UnsafeBufferPointer(start: chat.assumingMemoryBound(to: UInt8.self), count: Int(entry.chatLength)))
    }
}
