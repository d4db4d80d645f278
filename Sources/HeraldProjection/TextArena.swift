import HeraldEvents

/// The texts of one account's live notifications (each one's title and its packed body,
/// sender and thread, ``PackedTexts``) side by side in a few pages of bytes.
///
/// A notification refers to its texts by a slot number, so a ``StoredNotification`` holds no
/// reference: moving it inside its group's lists copies plain bytes, and creating or clearing
/// one allocates and frees nothing once a page has room. Clearing leaves the texts' bytes
/// behind as garbage: a page whose texts have all left is freed, and when the pages exceed
/// 1.5 × the live texts (plus two pages) the live texts are copied into fresh pages, so each
/// byte is copied a bounded number of times.
///
/// Pages come in a few fixed sizes (256 B doubling to ``pageSize``; a text larger than that
/// gets a page of its own), so that the allocator recycles them exactly: one growing buffer
/// per account left glibc's heap fragmented, doubling the resident memory of a rebuild.
///
/// Slot numbers and locations depend on history (which slots were freed when), never on the
/// texts: equality and snapshots go through the texts themselves.
struct TextArena: Sendable {
    /// Where one slot's texts are, or, for a free slot, the next free slot.
    private struct Span {
        /// The page (upper 20 bits) and offset in it (lower 12) of the title, then the packed
        /// texts; `.max` when the slot is free.
        var location: UInt32
        /// The title's byte count, `.max` for no title; for a free slot, the next free one.
        var titleLength: UInt32
        /// The packed texts' byte count.
        var textsLength: UInt32

        /// The page of an entry in use.
        var page: Int { Int(location >> TextArena.offsetBits) }
        /// The offset in its page of an entry in use.
        var offset: Int { Int(location & (1 << TextArena.offsetBits - 1)) }
    }

    /// The size of a full page; smaller ones start an arena.
    static let pageSize = 4096
    private static let smallestPage = 256
    private static let offsetBits: UInt32 = 12

    /// The pages, each fully initialized (its count is its size); a page whose texts were all
    /// released is freed at once and left empty, for ``freePages`` to reuse.
    private var pages: [[UInt8]] = []
    /// The number of live texts in each page (empty ones included: they point into it too).
    private var pageLive: [Int32] = []
    /// Empty entries of ``pages``.
    private var freePages: [Int32] = []
    /// The page new texts go to, or -1, and how many of its bytes are taken.
    private var tail = -1
    private var tailUsed = 0
    /// The bytes of all pages.
    private var allocated = 0
    /// The bytes of the live texts.
    private var liveBytes = 0
    private var spans: [Span] = []
    /// The first free slot, or `.max`.
    private var firstFree: UInt32 = .max
    /// The number of slots in use.
    private(set) var count = 0

    init() {}

    /// Stores a title and packed texts, and returns their slot.
    ///
    /// The title's bytes are copied from its contiguous UTF-8 in place: going through
    /// `String.withUTF8` and an overload taking the bytes cost 41 more instructions per
    /// replayed event (callgrind, `projection-bench` of `Benchmarks/`), on the hottest path there is.
    mutating func store(title: String?, texts: PackedTexts) -> UInt32 {
        let titleCount = title?.utf8.count ?? 0
        let (page, offset) = reserve(titleCount + texts.byteCount)
        pages[page].withUnsafeMutableBytes { buffer in
            let start = buffer.baseAddress.unsafelyUnwrapped + offset
            if let title, titleCount > 0 {
                let copied: Void? = title.utf8.withContiguousStorageIfAvailable { utf8 in
                    start.copyMemory(from: utf8.baseAddress.unsafelyUnwrapped, byteCount: titleCount)
                }
                if copied == nil { start.copyMemory(from: Array(title.utf8), byteCount: titleCount) }
            }
            texts.copyPackedBytes(to: start + titleCount)
        }
        return take(page: page, offset: offset, titleLength: title == nil ? .max : UInt32(titleCount), textsLength: texts.byteCount)
    }

    /// Stores a title and the body, sender and thread (each valid UTF-8, or `nil` for none),
    /// packing the three straight into the page (``PackedTexts/pack(body:sender:thread:into:)``),
    /// and returns their slot: a restored snapshot builds no ``PackedTexts`` per notification.
    mutating func store(
        title: UnsafeBufferPointer<UInt8>?, body: UnsafeBufferPointer<UInt8>?, sender: UnsafeBufferPointer<UInt8>?,
        thread: UnsafeBufferPointer<UInt8>?
    ) -> UInt32 {
        let titleCount = title?.count ?? 0
        let textsCount = PackedTexts.packedCount(body: body, sender: sender, thread: thread)
        let (page, offset) = reserve(titleCount + textsCount)
        pages[page].withUnsafeMutableBytes { buffer in
            let start = buffer.baseAddress.unsafelyUnwrapped + offset
            if let title, titleCount > 0 { start.copyMemory(from: title.baseAddress.unsafelyUnwrapped, byteCount: titleCount) }
            PackedTexts.pack(body: body, sender: sender, thread: thread, into: start + titleCount)
        }
        return take(page: page, offset: offset, titleLength: title == nil ? .max : UInt32(titleCount), textsLength: textsCount)
    }

    /// Stores a title and packed texts given as their bytes side by side (`bytes`: the title's
    /// UTF-8, `titleLength` of them, `.max` for no title and then none, followed by the
    /// canonical packing of ``PackedTexts``), and returns their slot: the layout a slot keeps,
    /// so they go in with one copy.
    mutating func store(titleAndPackedTexts bytes: UnsafeRawBufferPointer, titleLength: UInt32) -> UInt32 {
        let count = bytes.count
        let (page, offset) = reserve(count)
        if count > 0 {
            pages[page].withUnsafeMutableBytes { buffer in
                (buffer.baseAddress.unsafelyUnwrapped + offset).copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: count)
            }
        }
        let textsLength = titleLength == .max ? count : count - Int(titleLength)
        return take(page: page, offset: offset, titleLength: titleLength, textsLength: textsLength)
    }

    /// Finds room for `size` bytes, adding a page when the tail page has too little, and
    /// returns where they go; ``take(page:offset:titleLength:textsLength:)`` then records
    /// them in a slot.
    @inline(__always)
    private mutating func reserve(_ size: Int) -> (page: Int, offset: Int) {
        liveBytes += size
        // A text of no bytes still needs an offset inside the page: at the end of a full
        // 4 KiB page it would not fit in its 12 bits.
        if tail >= 0 && tailUsed + max(size, 1) <= pages[tail].count {
            let offset = tailUsed
            tailUsed += size
            pageLive[tail] += 1
            return (tail, offset)
        }
        let page = addPage(for: size)
        pageLive[page] = 1
        return (page, 0)
    }

    /// Adds a page for `size` bytes: a page of its own for a text larger than ``pageSize``,
    /// otherwise a new tail page at least as large as all the pages so far (up to a full one).
    private mutating func addPage(for size: Int) -> Int {
        var pageSize = size
        if size <= Self.pageSize {
            pageSize = Self.smallestPage
            while pageSize < Self.pageSize && (pageSize < size || pageSize < allocated) { pageSize *= 2 }
        }
        let index: Int
        if let free = freePages.popLast() {
            index = Int(free)
            pages[index] = Self.page(pageSize)
        } else {
            precondition(pages.count < 1 << (32 - Int(Self.offsetBits)) - 1, "an account's live notification texts exceed 4 GiB")
            index = pages.count
            pages.append(Self.page(pageSize))
            pageLive.append(0)
        }
        allocated += pageSize
        if size <= Self.pageSize {
            // The old tail page, if its texts are all gone, is freed now that it stops being the tail.
            let old = tail
            tail = index
            tailUsed = size
            if old >= 0 && pageLive[old] == 0 { freePage(old) }
        }
        return index
    }

    /// Frees page `index`, which holds no live text, for ``addPage(for:)`` to reuse its entry.
    private mutating func freePage(_ index: Int) {
        allocated -= pages[index].count
        pages[index] = []
        freePages.append(Int32(index))
    }

    /// A page of `size` bytes. It counts all its bytes as initialized without clearing them
    /// (bytes are trivial, and only those taken are ever read).
    private static func page(_ size: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: size) { _, initialized in initialized = size }
    }

    /// A slot for texts just written at `offset` of `page`.
    @inline(__always)
    private mutating func take(page: Int, offset: Int, titleLength: UInt32, textsLength: Int) -> UInt32 {
        let span = Span(
            location: UInt32(page) << Self.offsetBits | UInt32(offset), titleLength: titleLength,
            textsLength: UInt32(textsLength))
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
        precondition(span.location != .max, "text slot released twice")
        let size = Self.size(of: span)
        liveBytes -= size
        pageLive[span.page] -= 1
        // Texts mostly leave in the order they came (reads clear the oldest first), so whole
        // pages empty out: free them without copying anything.
        if pageLive[span.page] == 0 && span.page != tail { freePage(span.page) }
        spans[Int(slot)] = Span(location: .max, titleLength: firstFree, textsLength: 0)
        firstFree = slot
        count -= 1
        if count == 0 {
            self = TextArena()
        } else if 2 * allocated > 3 * liveBytes + 4 * Self.pageSize {
            compact()
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

    /// The title and the packed texts stored in `slot`, read in one visit of the slot.
    func contents(_ slot: UInt32) -> (title: String?, texts: PackedTexts) {
        withTexts(slot) { title, packed in
            let string = title.map { bytes in
                String(unsafeUninitializedCapacity: bytes.count) { buffer in
                    _ = buffer.initialize(fromContentsOf: bytes)
                    return bytes.count
                }
            }
            return (string, PackedTexts(packed: packed))
        }
    }

    /// Calls `body` with the title (`nil` for none) and packed texts of `slot`, in place.
    func withTexts<R>(_ slot: UInt32, _ body: (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>) -> R) -> R {
        let span = spans[Int(slot)]
        precondition(span.location != .max, "text slot not in use")
        return pages[span.page].withUnsafeBufferPointer { page in
            var start = span.offset
            var title: UnsafeBufferPointer<UInt8>?
            if span.titleLength != .max {
                title = UnsafeBufferPointer(rebasing: page[start..<start + Int(span.titleLength)])
                start += Int(span.titleLength)
            }
            return body(title, UnsafeBufferPointer(rebasing: page[start..<start + Int(span.textsLength)]))
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

    /// The bytes the pages and the slot table take, for tests.
    var allocatedBytes: Int { allocated + spans.capacity * MemoryLayout<Span>.stride }

    /// The bytes the pages take (``allocatedBytes`` without the slot table), for tests.
    var pageBytes: Int { allocated }

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

    /// Copies the live texts into fresh pages, dropping the garbage.
    private mutating func compact() {
        let old = pages
        pages = []
        pageLive = []
        freePages = []
        tail = -1
        tailUsed = 0
        allocated = 0
        liveBytes = 0
        for slot in spans.indices where spans[slot].location != .max {
            let span = spans[slot]
            let size = Self.size(of: span)
            let (page, offset) = reserve(size)
            if size > 0 {
                old[span.page].withUnsafeBytes { source in
                    pages[page].withUnsafeMutableBytes { target in
                        (target.baseAddress.unsafelyUnwrapped + offset).copyMemory(
                            from: source.baseAddress.unsafelyUnwrapped + span.offset, byteCount: size)
                    }
                }
            }
            spans[slot].location = UInt32(page) << Self.offsetBits | UInt32(offset)
        }
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
