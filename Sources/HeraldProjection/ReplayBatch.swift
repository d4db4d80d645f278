import HeraldEvents

/// Events with their seqs, in log order, for ``Projection/replay(_:)``: the one input built
/// for speed. It holds whatever a fast replay needs besides the events themselves: names
/// interned ahead (``append(_:seq:)`` interns each event's account and chat, so that the
/// replay finds them by index), and for the store, `notify` texts kept as bytes, events lent
/// in place and a way to replay in two halves.
///
/// ```swift
/// var batch = ReplayBatch()
/// for (offset, event) in events.enumerated() { batch.append(event, seq: UInt64(offset + 1)) }
/// projection.replay(batch)
/// ```
public struct ReplayBatch: @unchecked Sendable {
    // @unchecked: every stored property is a value but `lent`, whose events the store keeps
    // alive and unchanged while the batch is used (see ``init(lending:eventAt:through:inHalves:)``),
    // and `runHalves`, which the store gives only to batches replayed on its own thread.

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
    /// Events lent in place instead of ``entries`` (``init(lending:eventAt:through:inHalves:)``).
    private(set) var lent: LentEvents?
    /// The seq of the last lent event.
    private(set) var lentThrough: UInt64 = 0
    /// Runs the two halves of a replay of lent events; `nil`: one run on the caller's thread.
    private(set) var runHalves: Projection.HalvesRunner?
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
    public var count: Int { lent?.count ?? entries.count }

    /// How many records the batch keeps as packed notifies, not as events.
    var packedCount: Int { entries.count - events.count }

    /// Whether the batch holds no event.
    public var isEmpty: Bool { count == 0 }

    /// The seq of the last event; `nil` when empty.
    public var lastSeq: UInt64? {
        if lent != nil { return lentThrough }
        return entries.last?.seq
    }

    /// Adds `event` with seq `seq`, which must be greater than the last one's.
    public mutating func append(_ event: Event, seq: UInt64) {
        precondition(lent == nil, "a batch of lent events takes no more")
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

    /// The events held at byte `offset` of each element of `elements` (records that hold an
    /// event among other fields), lent in place, the last with seq `seq` and the others with
    /// smaller, increasing ones. The caller keeps `elements` alive and unchanged while the
    /// batch is used. With `runHalves`, a large batch naming several accounts is replayed in
    /// two halves of its accounts that `runHalves` may run on two threads at once.
    package init<Element>(
        lending elements: UnsafeBufferPointer<Element>, eventAt offset: Int, through seq: UInt64,
        inHalves runHalves: Projection.HalvesRunner? = nil
    ) {
        lent = LentEvents(elements, eventAt: offset)
        lentThrough = seq
        self.runHalves = runHalves
    }

    /// Removes every event, keeping (at least) room for `capacity` of them.
    package mutating func empty(reservingCapacity capacity: Int) {
        entries.removeAll(keepingCapacity: true)
        entries.reserveCapacity(capacity)
        events.removeAll(keepingCapacity: true)
        used = 0
        lent = nil
        lentThrough = 0
        runHalves = nil
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

/// Events lent in place inside the elements of a contiguous buffer (the elements may be
/// records that hold an event among other fields), so that the two threads of a batch
/// replay can read them at once without copying them out.
struct LentEvents: @unchecked Sendable {
    // @unchecked: the events are only read, and the owner keeps them alive and unchanged for
    // as long as the value is used.
    private let base: UnsafeRawPointer?
    private let stride: Int
    /// How many events.
    let count: Int

    /// The events held at byte `offset` of each element of `elements`.
    init<Element>(_ elements: UnsafeBufferPointer<Element>, eventAt offset: Int) {
        base = elements.baseAddress.map { UnsafeRawPointer($0) + offset }
        stride = MemoryLayout<Element>.stride
        count = elements.count
    }

    /// Event `index`, in place.
    @inline(__always)
    subscript(index: Int) -> UnsafePointer<Event> {
        (base.unsafelyUnwrapped + index * stride).assumingMemoryBound(to: Event.self)
    }
}
