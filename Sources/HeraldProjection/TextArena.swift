import HeraldEvents

/// The texts of one account's live notifications (each one's title and its packed body,
/// sender and thread, ``PackedTexts``) side by side in one byte buffer.
///
/// A notification refers to its texts by a slot number, so a ``StoredNotification`` holds no
/// reference: moving it inside its group's lists copies plain bytes, and creating or clearing
/// one allocates and frees nothing once the buffer has room. Clearing leaves the texts' bytes
/// behind as garbage; when the buffer is full (or mostly garbage) the live texts are copied
/// into a fresh buffer with room to spare, so the buffer stays within a constant factor of the
/// live texts (``spareFraction``) and each byte is copied a bounded number of times.
///
/// Slot numbers and offsets depend on history (which slots were freed when), never on the
/// texts: equality and snapshots go through the texts themselves.
struct TextArena: Sendable {
    /// Where one slot's texts are, or, for a free slot, the next free slot.
    private struct Span {
        /// The offset of the title (then the packed texts) in ``bytes``; `.max` when free.
        var offset: UInt32
        /// The title's byte count, `.max` for no title; for a free slot, the next free one.
        var titleLength: UInt32
        /// The packed texts' byte count.
        var textsLength: UInt32
    }

    /// After copying the live texts into a fresh buffer, the room left for new ones, as a
    /// fraction of the live bytes: the buffer is copied again after about this many new
    /// bytes, so each byte is copied about 1 / spareFraction times while it lives.
    static let spareFraction = 0.5
    /// Buffers below this size are never compacted for garbage alone.
    private static let minimumCompaction = 4096

    /// The buffer, all of it initialized; ``used`` bytes are taken (live texts and garbage).
    private var bytes: [UInt8] = []
    /// How many of ``bytes`` are taken: new texts go after them.
    private var used = 0
    private var spans: [Span] = []
    /// The first free slot, or `.max`.
    private var firstFree: UInt32 = .max
    /// Bytes of ``bytes`` that no slot refers to.
    private var garbage = 0
    /// The number of slots in use.
    private(set) var count = 0

    init() {}

    /// Stores a title and packed texts, and returns their slot.
    mutating func store(title: String?, texts: PackedTexts) -> UInt32 {
        let titleCount = title?.utf8.count ?? 0
        let textsCount = texts.byteCount
        let offset = reserve(titleCount + textsCount)
        bytes.withUnsafeMutableBytes { buffer in
            let start = buffer.baseAddress.unsafelyUnwrapped + offset
            if let title, titleCount > 0 {
                let copied = title.utf8.withContiguousStorageIfAvailable { utf8 in
                    start.copyMemory(from: utf8.baseAddress.unsafelyUnwrapped, byteCount: titleCount)
                }
                if copied == nil { start.copyMemory(from: Array(title.utf8), byteCount: titleCount) }
            }
            texts.copyPackedBytes(to: start + titleCount)
        }
        return take(offset: offset, titleLength: title == nil ? .max : UInt32(titleCount), textsLength: textsCount)
    }

    /// Stores a title (valid UTF-8, or `nil` for none) and packed texts, and returns their slot.
    mutating func store(title: UnsafeBufferPointer<UInt8>?, texts: PackedTexts) -> UInt32 {
        let titleCount = title?.count ?? 0
        let offset = reserve(titleCount + texts.byteCount)
        bytes.withUnsafeMutableBytes { buffer in
            let start = buffer.baseAddress.unsafelyUnwrapped + offset
            if let title, titleCount > 0 { start.copyMemory(from: title.baseAddress.unsafelyUnwrapped, byteCount: titleCount) }
            texts.copyPackedBytes(to: start + titleCount)
        }
        return take(offset: offset, titleLength: title == nil ? .max : UInt32(titleCount), textsLength: texts.byteCount)
    }

    /// Makes room for `size` more bytes and returns where they go; ``take(offset:titleLength:textsLength:)``
    /// then records them in a slot.
    @inline(__always)
    private mutating func reserve(_ size: Int) -> Int {
        if used + size > bytes.count { compact(makingRoomFor: size) }
        precondition(used + size < Int(UInt32.max), "an account's live notification texts exceed 4 GiB")
        let offset = used
        used += size
        return offset
    }

    /// A slot for texts just written at `offset`.
    @inline(__always)
    private mutating func take(offset: Int, titleLength: UInt32, textsLength: Int) -> UInt32 {
        let span = Span(offset: UInt32(offset), titleLength: titleLength, textsLength: UInt32(textsLength))
        count += 1
        if firstFree != .max {
            let slot = firstFree
            firstFree = spans[Int(slot)].titleLength
            spans[Int(slot)] = span
            return slot
        }
        spans.append(span)
        return UInt32(spans.count - 1)
    }

    /// Frees `slot`; its bytes become garbage.
    mutating func release(_ slot: UInt32) {
        let span = spans[Int(slot)]
        precondition(span.offset != .max, "text slot released twice")
        garbage += Self.size(of: span)
        spans[Int(slot)] = Span(offset: .max, titleLength: firstFree, textsLength: 0)
        firstFree = slot
        count -= 1
        if count == 0 {
            self = TextArena()
        } else if garbage >= Self.minimumCompaction && garbage * 4 >= used * 3 {
            compact(makingRoomFor: 0)
        }
    }

    /// The title stored in `slot`.
    func title(_ slot: UInt32) -> String? {
        withTexts(slot) { title, _ in title.map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The packed texts stored in `slot`.
    func texts(_ slot: UInt32) -> PackedTexts {
        withTexts(slot) { _, packed in PackedTexts(packed: packed) }
    }

    /// Calls `body` with the title (`nil` for none) and packed texts of `slot`, in place.
    func withTexts<R>(_ slot: UInt32, _ body: (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>) -> R) -> R {
        let span = spans[Int(slot)]
        precondition(span.offset != .max, "text slot not in use")
        return bytes.withUnsafeBufferPointer { all in
            var start = Int(span.offset)
            var title: UnsafeBufferPointer<UInt8>?
            if span.titleLength != .max {
                title = UnsafeBufferPointer(rebasing: all[start..<start + Int(span.titleLength)])
                start += Int(span.titleLength)
            }
            return body(title, UnsafeBufferPointer(rebasing: all[start..<start + Int(span.textsLength)]))
        }
    }

    /// Whether `slot` holds the same title and texts as `other`'s `otherSlot`.
    func sameTexts(_ slot: UInt32, as other: TextArena, _ otherSlot: UInt32) -> Bool {
        withTexts(slot) { title, packed in
            other.withTexts(otherSlot) { otherTitle, otherPacked in
                Self.equal(title, otherTitle) && packed.elementsEqual(otherPacked)
            }
        }
    }

    /// Feeds the title and texts of `slot` to `hasher`.
    func hashTexts(_ slot: UInt32, into hasher: inout Hasher) {
        withTexts(slot) { title, packed in
            hasher.combine(title?.count ?? -1)
            if let title { hasher.combine(bytes: UnsafeRawBufferPointer(title)) }
            hasher.combine(bytes: UnsafeRawBufferPointer(packed))
        }
    }

    /// The bytes the buffer holds (live texts, garbage and spare room), for statistics.
    var allocatedBytes: Int { bytes.count + spans.capacity * MemoryLayout<Span>.stride }

    @inline(__always)
    private static func size(of span: Span) -> Int {
        (span.titleLength == .max ? 0 : Int(span.titleLength)) + Int(span.textsLength)
    }

    private static func equal(_ a: UnsafeBufferPointer<UInt8>?, _ b: UnsafeBufferPointer<UInt8>?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): a.elementsEqual(b)
        default: false
        }
    }

    /// Copies the live texts into a fresh buffer with room for `size` more bytes and a spare
    /// ``spareFraction`` of the live ones, dropping the garbage.
    private mutating func compact(makingRoomFor size: Int) {
        let live = used - garbage
        let capacity = max(64, live + size + Int(Double(live + size) * Self.spareFraction))
        var next = 0
        // The buffer counts all its bytes as initialized without clearing them (bytes are
        // trivial, and only the taken ones are ever read): no pass over the spare room.
        let fresh = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            initialized = capacity
            let target = UnsafeMutableRawBufferPointer(buffer)
            bytes.withUnsafeBytes { source in
                if garbage == 0 {
                    if used > 0 { target.baseAddress.unsafelyUnwrapped.copyMemory(from: source.baseAddress.unsafelyUnwrapped, byteCount: used) }
                    next = used
                    return
                }
                spans.withUnsafeMutableBufferPointer { spans in
                    for slot in spans.indices where spans[slot].offset != .max {
                        let length = Self.size(of: spans[slot])
                        if length > 0 {
                            (target.baseAddress.unsafelyUnwrapped + next)
                                .copyMemory(from: source.baseAddress.unsafelyUnwrapped + Int(spans[slot].offset), byteCount: length)
                        }
                        spans[slot].offset = UInt32(next)
                        next += length
                    }
                }
            }
        }
        bytes = fresh
        used = next
        garbage = 0
    }
}

/// An account's groups with the texts of their live notifications: one value, so that
/// comparing accounts compares the texts themselves (``TextArena``'s slots and offsets depend
/// on history).
struct GroupStore: Hashable, Sendable {
    /// Every group, by id minus one.
    var groups: [NotificationGroup] = []
    /// The texts of the groups' live notifications.
    var texts = TextArena()

    static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.groups == rhs.groups else { return false }
        for (left, right) in zip(lhs.groups, rhs.groups) {
            for (a, b) in zip(left.active, right.active) where !lhs.texts.sameTexts(a.textSlot, as: rhs.texts, b.textSlot) {
                return false
            }
            for (a, b) in zip(left.dismissed, right.dismissed)
            where !lhs.texts.sameTexts(a.textSlot, as: rhs.texts, b.textSlot) {
                return false
            }
        }
        return true
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(groups)
        for group in groups {
            for notification in group.active { texts.hashTexts(notification.textSlot, into: &hasher) }
            for notification in group.dismissed { texts.hashTexts(notification.textSlot, into: &hasher) }
        }
    }
}
