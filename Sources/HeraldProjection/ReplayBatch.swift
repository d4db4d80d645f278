import HeraldEvents

/// Events with their seqs, in log order, for ``Projection/replay(_:)``: the one input built
/// for speed. It holds whatever a fast replay needs besides the events themselves: names
/// interned ahead (``append(_:seq:)`` interns each event's account and chat, so that the
/// replay finds them by index), and for the store, `notify` records kept as bytes
/// (`PackedNotify`).
///
/// ```swift
/// var batch = ReplayBatch()
/// for (offset, event) in events.enumerated() { batch.append(event, seq: UInt64(offset + 1)) }
/// projection.replay(batch)
/// ```
public struct ReplayBatch: Sendable {
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
    private(set) var entries: [Entry] = []
    /// The records kept as events, in order.
    private(set) var events: [Event] = []
    /// The packed notifies' bytes (``Entry/start``); all of it initialized, `used` of it taken.
    private(set) var bytes: [UInt8] = []
    private var used = 0
    /// Interns the names of the events ``append(_:seq:)`` adds; kept by ``removeAll()``, so
    /// that a batch reused for a run of replays gives the same ids throughout.
    private var interner: NameInterner?

    /// An empty batch.
    public init() {}

    /// A batch of `events` with their seqs, in order (seqs increasing).
    public init(_ events: some Sequence<(Event, UInt64)>) {
        for (event, seq) in events { append(event, seq: seq) }
    }

    /// How many events the batch holds.
    public var count: Int { entries.count }

    /// How many records the batch keeps as packed notifies, not as events.
    var packedCount: Int { entries.count - events.count }

    /// Whether the batch holds no event.
    public var isEmpty: Bool { count == 0 }

    /// The seq of the last event; `nil` when empty.
    public var lastSeq: UInt64? { entries.last?.seq }

    /// Adds `event` with seq `seq`, which must be greater than the last one's.
    public mutating func append(_ event: Event, seq: UInt64) {
        if interner == nil { interner = NameInterner(token: .random(in: 1...UInt64.max)) }
        append(event, seq: seq, names: interner!.names(of: event))
    }

    /// Removes every event (the interned names stay, for the next events).
    public mutating func removeAll() {
        empty(reservingCapacity: 0)
    }

    /// Adds `event` with seq `seq` whose account and chat a ``NameInterner`` has interned.
    /// (Seqs are checked when the batch is replayed, as the projection's own.)
    package mutating func append(_ event: Event, seq: UInt64, names: InternedNames) {
        entries.append(Entry(
            seq: seq, names: names, kind: nil, silent: false, partial: false, unreadOnly: false, id: 0, date: 0, start: 0,
            accountLength: 0, chatLength: 0, titleLength: 0, textsLength: 0))
        events.append(event)
    }

    /// Adds a decoded `notify` with seq `seq` whose names `names` gives (interned before:
    /// `account` and `chat`, their bytes, are read only by a projection that has not met
    /// those ids), copying its names, title and packed texts into the batch's bytes: no
    /// `String`, no heap object per record.
    package mutating func append(
        _ notify: BorrowedNotify, seq: UInt64, names: InternedNames, account: UnsafeBufferPointer<UInt8>,
        chat: UnsafeBufferPointer<UInt8>
    ) {
        let titleCount = notify.title?.count ?? 0
        let textsCount = PackedTexts.packedCount(body: notify.body, sender: notify.sender, thread: notify.thread)
        let size = account.count + chat.count + titleCount + textsCount
        guard used + size <= Int(UInt32.max) else {
            // Offsets are 32-bit: a batch of very large records keeps the rest as events.
            let event = Event(account: String(decoding: account, as: UTF8.self), chat: String(decoding: chat, as: UTF8.self), notify)
            append(event, seq: seq, names: names)
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
            seq: seq, names: names, kind: notify.kind, silent: notify.silent, partial: notify.partial,
            unreadOnly: notify.unreadOnly, id: notify.id, date: notify.date, start: UInt32(start),
            accountLength: UInt32(account.count), chatLength: UInt32(chat.count),
            titleLength: notify.title == nil ? .max : UInt32(titleCount), textsLength: UInt32(textsCount)))
    }

    /// Removes every event, keeping (at least) room for `capacity` of them.
    package mutating func empty(reservingCapacity capacity: Int) {
        entries.removeAll(keepingCapacity: true)
        entries.reserveCapacity(capacity)
        events.removeAll(keepingCapacity: true)
        used = 0
        // A batch of unusually large records leaves no large buffer behind.
        if bytes.count > 1 << 22 { bytes = [] }
    }

    /// Makes ``bytes`` hold at least `needed` bytes, keeping those taken.
    private mutating func grow(to needed: Int) {
        var grown = [UInt8](repeating: 0, count: max(needed, 2 * bytes.count, 64 * 1024))
        grown.replaceSubrange(0..<used, with: bytes[..<used])
        bytes = grown
    }
}
