/// Interns names (accounts, chats) to dense indexes 0, 1, 2… in order of first appearance.
///
/// An open-addressing table keyed by a hash of the name's UTF-8, eight bytes at a time: a
/// lookup costs a multiplication or two per name and usually one probe, far less than `Dictionary<String, _>`
/// with Unicode-aware hashing and equality. Names are opaque (SEMANTICS §2): two names are
/// the same only when their bytes are.
struct NameTable: Sendable {
    /// One slot: the name's hash and its index plus one (0 = empty).
    private struct Slot: Sendable {
        var hash: UInt64
        var indexPlusOne: Int32
    }

    /// The interned names, by index.
    private(set) var names: [String] = []
    private var slots: [Slot] = []

    /// Creates an empty table.
    init() {}

    /// The number of names.
    var count: Int { names.count }

    /// A hash of the UTF-8 bytes of `name`, eight bytes at a time (most names take one or two
    /// multiplications, where a byte-at-a-time hash took one per byte). It depends on the
    /// bytes only, not on how the string holds them.
    @inline(__always)
    static func hash(_ name: String) -> UInt64 {
        if let done = name.utf8.withContiguousStorageIfAvailable({ hash(bytes: UnsafeRawBufferPointer($0)) }) {
            return done
        }
        return hash(bytes: Array(name.utf8))
    }

    /// The hash of ``hash(_:)`` over `bytes`.
    @inline(__always)
    static func hash(bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash(bytes: $0) }
    }

    /// The hash of ``hash(_:)`` over `bytes`: each eight-byte word is mixed in with a
    /// multiplication and a shift; the last, partial one is read as an overlapping word (or
    /// two overlapping halves, or three bytes, for names shorter than eight bytes), so no
    /// name needs a loop over bytes.
    @inline(__always)
    static func hash(bytes: UnsafeRawBufferPointer) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        let count = bytes.count
        var hash = UInt64(truncatingIfNeeded: count) &* multiplier
        @inline(__always) func mix(_ word: UInt64) {
            hash = (hash ^ word) &* multiplier
            hash ^= hash >> 29
        }
        if count >= 8 {
            var offset = 0
            while offset + 8 < count {
                mix(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset += 8
            }
            mix(bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        } else if count >= 4 {
            let first = UInt64(bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            let last = UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            mix(first << 32 | last)
        } else if count > 0 {
            mix(UInt64(bytes[0]) << 16 | UInt64(bytes[count >> 1]) << 8 | UInt64(bytes[count - 1]))
        }
        return hash
    }

    /// Whether two names have the same bytes.
    @inline(__always)
    static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        // Equal representations hold the same bytes: both small (≤ 15 bytes, held inline,
        // which most account and chat names are) with the same contents, or one shared
        // storage. Different representations may still hold the same bytes: compare them.
        if unsafeBitCast(lhs, to: (UInt64, UInt64).self) == unsafeBitCast(rhs, to: (UInt64, UInt64).self) {
            return true
        }
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        let fast = left.withContiguousStorageIfAvailable { a in
            right.withContiguousStorageIfAvailable { b in
                Self.equalBytes(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b))
            }
        }
        return (fast ?? nil) ?? left.elementsEqual(right)
    }

    /// Compares two equally long buffers eight bytes at a time.
    @inline(__always)
    static func equalBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let count = a.count
        while i + 8 <= count {
            if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
                return false
            }
            i += 8
        }
        while i < count {
            if a[i] != b[i] { return false }
            i += 1
        }
        return true
    }

    @inline(__always)
    private func bucket(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: ((hash ^ (hash >> 29)) &* 0x9E37_79B9_7F4A_7C15) >> 32) & (slots.count - 1)
    }

    /// The index of `name`, or `nil`.
    @inline(__always)
    func index(of name: String) -> Int? {
        find(hash: Self.hash(name)) { Self.sameBytes($0, name) }
    }

    /// The index of the name in the slots of `hash` that `matches`, or `nil`.
    @inline(__always)
    private func find(hash: UInt64, _ matches: (String) -> Bool) -> Int? {
        guard !slots.isEmpty else { return nil }
        // Through buffer pointers: the arrays and the name compared are borrowed, where
        // subscripting retained and released them on every lookup.
        return slots.withUnsafeBufferPointer { slots in
            names.withUnsafeBufferPointer { names in
                var i = bucket(hash)
                while true {
                    let slot = slots[i]
                    if slot.indexPlusOne == 0 { return nil }
                    if slot.hash == hash && matches(names[Int(slot.indexPlusOne) - 1]) {
                        return Int(slot.indexPlusOne) - 1
                    }
                    i = (i + 1) & (slots.count - 1)
                }
            }
        }
    }

    /// The index of `name`, adding it (with the next index) when new.
    @inline(__always)
    mutating func intern(_ name: String) -> (index: Int, isNew: Bool) {
        if let index = index(of: name) { return (index, false) }
        return (add(name, hash: Self.hash(name)), true)
    }

    /// The index of the name whose UTF-8 is `bytes` (valid UTF-8), adding it when new: a
    /// known name costs no `String`.
    @inline(__always)
    mutating func intern(bytes: UnsafeBufferPointer<UInt8>) -> (index: Int, isNew: Bool) {
        let hash = Self.hash(bytes: UnsafeRawBufferPointer(bytes))
        if let index = find(hash: hash, { Self.sameBytes($0, bytes) }) { return (index, false) }
        return (add(String(decoding: bytes, as: UTF8.self), hash: hash), true)
    }

    /// The index of the name whose UTF-8 is `bytes`, or `nil`; adds nothing.
    @inline(__always)
    func index(ofBytes bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        find(hash: Self.hash(bytes: UnsafeRawBufferPointer(bytes))) { Self.sameBytes($0, bytes) }
    }

    /// Adds `name`, whose hash is `hash`, with the next index, and returns it.
    private mutating func add(_ name: String, hash: UInt64) -> Int {
        let index = names.count
        names.append(name)
        if names.count * 4 > slots.count * 3 {
            rehash(capacity: max(16, slots.count * 2))
        } else {
            place(hash: hash, index: index)
        }
        return index
    }

    /// Whether `name`'s UTF-8 is `bytes`.
    @inline(__always)
    static func sameBytes(_ name: String, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let utf8 = name.utf8
        guard utf8.count == bytes.count else { return false }
        let fast = utf8.withContiguousStorageIfAvailable { equalBytes(UnsafeRawBufferPointer($0), UnsafeRawBufferPointer(bytes)) }
        return fast ?? utf8.elementsEqual(bytes)
    }

    private mutating func place(hash: UInt64, index: Int) {
        var i = bucket(hash)
        while slots[i].indexPlusOne != 0 { i = (i + 1) & (slots.count - 1) }
        slots[i] = Slot(hash: hash, indexPlusOne: Int32(index + 1))
    }

    private mutating func rehash(capacity: Int) {
        slots = Array(repeating: Slot(hash: 0, indexPlusOne: 0), count: capacity)
        for (index, name) in names.enumerated() { place(hash: Self.hash(name), index: index) }
    }

    /// Removes the name at `index` by moving the last name into its place (indexes change).
    mutating func swapRemove(at index: Int) {
        names.swapAt(index, names.count - 1)
        names.removeLast()
        rehash(capacity: slots.count)
    }
}

extension NameTable: Hashable {
    /// Equal when the same names have the same indexes (the slots follow from that).
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.names == rhs.names }
    func hash(into hasher: inout Hasher) { hasher.combine(names) }
}
