/// The body, sender and thread of a notification (of a `notify` event, and of the
/// projection's notifications), each optional, packed into one run of bytes: one allocation
/// at most where three strings would take three, made once when an event is decoded and
/// then shared by the notification it creates.
///
/// The packing is canonical (equal texts give equal bytes), so packed values compare and
/// hash like the three fields' bytes would. Layout: no bytes when all three are absent; otherwise
/// one ASCII letter `a` + (bit 0 body, bit 1 sender, bit 2 thread present), then each present
/// field in that order as its UTF-8 length in decimal, `:`, and its bytes, except the last
/// present field, which runs to the end without a length.
///
/// Up to 15 bytes live inside the value (as a small `String`, which allocates nothing);
/// longer packings take one exact-size ``TextBytes`` allocation, 16 bytes of overhead less
/// than a `String` of the same bytes would need.
package struct PackedTexts: Hashable, @unchecked Sendable {
    // @unchecked: a `TextBytes` is never written after it is created.

    /// Where the packed bytes are.
    private enum Storage {
        /// At most 15 bytes, inside a small `String`.
        case small(String)
        /// More, in an immutable allocation of their own.
        case large(TextBytes)
    }

    private var storage: Storage

    /// No texts.
    package static let none = PackedTexts(storage: .small(""))

    private init(storage: Storage) {
        self.storage = storage
    }

    /// Packs the three texts.
    package init(body: String?, sender: String?, thread: String?) {
        var body = body
        var sender = sender
        var thread = thread
        self = Self.withUTF8(&body) { body in
            Self.withUTF8(&sender) { sender in
                Self.withUTF8(&thread) { thread in PackedTexts(utf8Body: body, sender: sender, thread: thread) }
            }
        }
    }

    /// Calls `body` with the UTF-8 bytes of `text`, or with `nil` when there is no text.
    @inline(__always)
    private static func withUTF8<R>(_ text: inout String?, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard text != nil else { return body(nil) }
        return text!.withUTF8 { body($0) }
    }

    /// Packs the three texts given as valid UTF-8 bytes.
    package init(utf8Body body: UnsafeBufferPointer<UInt8>?, sender: UnsafeBufferPointer<UInt8>?, thread: UnsafeBufferPointer<UInt8>?) {
        let size = Self.packedCount(body: body, sender: sender, thread: thread)
        if size == 0 {
            storage = .small("")
        } else if size <= 15 {
            storage = .small(String(unsafeUninitializedCapacity: size) { buffer in
                Self.pack(body: body, sender: sender, thread: thread, into: UnsafeMutableRawPointer(buffer.baseAddress.unsafelyUnwrapped))
                return size
            })
        } else {
            storage = .large(TextBytes.make(count: size) { buffer in
                Self.pack(body: body, sender: sender, thread: thread, into: UnsafeMutableRawPointer(buffer.baseAddress.unsafelyUnwrapped))
            })
        }
    }

    /// The number of bytes the three texts (valid UTF-8) pack into: what ``byteCount`` would
    /// be for them, without building the value.
    package static func packedCount(
        body: UnsafeBufferPointer<UInt8>?, sender: UnsafeBufferPointer<UInt8>?, thread: UnsafeBufferPointer<UInt8>?
    ) -> Int {
        let mask = mask(body, sender, thread)
        guard mask != 0 else { return 0 }
        let last = lastField(mask)
        var size = 1
        func measure(_ field: UnsafeBufferPointer<UInt8>?, _ index: Int) {
            guard let field else { return }
            size += field.count
            if index != last { size += digits(field.count) + 1 }
        }
        measure(body, 0)
        measure(sender, 1)
        measure(thread, 2)
        return size
    }

    /// Writes the packed bytes of the three texts (valid UTF-8) to `destination`, which has
    /// room for ``packedCount(body:sender:thread:)`` of them: the same bytes as
    /// ``copyPackedBytes(to:)`` of the packed value, so that a snapshot's texts go straight
    /// into the projection's pages.
    package static func pack(
        body: UnsafeBufferPointer<UInt8>?, sender: UnsafeBufferPointer<UInt8>?, thread: UnsafeBufferPointer<UInt8>?,
        into destination: UnsafeMutableRawPointer
    ) {
        let mask = mask(body, sender, thread)
        guard mask != 0 else { return }
        let last = lastField(mask)
        destination.storeBytes(of: UInt8(ascii: "a") + mask, as: UInt8.self)
        var position = 1
        func write(_ field: UnsafeBufferPointer<UInt8>?, _ index: Int) {
            guard let field else { return }
            let count = field.count
            if index != last {
                let digits = digits(count)
                var value = count
                for offset in stride(from: digits - 1, through: 0, by: -1) {
                    destination.storeBytes(of: UInt8(ascii: "0") + UInt8(value % 10), toByteOffset: position + offset, as: UInt8.self)
                    value /= 10
                }
                destination.storeBytes(of: UInt8(ascii: ":"), toByteOffset: position + digits, as: UInt8.self)
                position += digits + 1
            }
            if count > 0 { (destination + position).copyMemory(from: field.baseAddress.unsafelyUnwrapped, byteCount: count) }
            position += count
        }
        write(body, 0)
        write(sender, 1)
        write(thread, 2)
    }

    /// Bit 0 body, bit 1 sender, bit 2 thread: which texts are present.
    @inline(__always)
    private static func mask(
        _ body: UnsafeBufferPointer<UInt8>?, _ sender: UnsafeBufferPointer<UInt8>?, _ thread: UnsafeBufferPointer<UInt8>?
    ) -> UInt8 {
        (body != nil ? 1 : 0) | (sender != nil ? 2 : 0) | (thread != nil ? 4 : 0)
    }

    /// The texts whose packed bytes (``copyPackedBytes(to:)``) are `bytes`, which must come
    /// from an earlier packing.
    package init(packed bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        if count <= 15 {
            storage = .small(String(decoding: bytes, as: UTF8.self))
        } else {
            storage = .large(
                TextBytes.make(count: count) { UnsafeMutableRawBufferPointer($0).copyMemory(from: UnsafeRawBufferPointer(bytes)) })
        }
    }

    /// Copies the packed bytes (none for no texts; the whole canonical form, from which
    /// ``init(packed:)`` rebuilds equal texts) to `destination`, which has room for
    /// ``byteCount`` of them. Not generic, so callers in other modules do not go through an
    /// unspecialized closure call.
    package func copyPackedBytes(to destination: UnsafeMutableRawPointer) {
        switch storage {
        case .small(let text):
            _ = text.utf8.withContiguousStorageIfAvailable { bytes in
                if !bytes.isEmpty { destination.copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: bytes.count) }
            }
        case .large(let bytes):
            bytes.withBytes { bytes in
                destination.copyMemory(from: bytes.baseAddress.unsafelyUnwrapped, byteCount: bytes.count)
            }
        }
    }

    /// The number of packed bytes.
    package var byteCount: Int {
        switch storage {
        case .small(let text): text.utf8.count
        case .large(let bytes): bytes.count
        }
    }

    /// Calls `body` with the packed bytes.
    @inline(__always)
    private func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch storage {
        case .small(var text): text.withUTF8(body)
        case .large(let bytes): bytes.withBytes(body)
        }
    }

    /// The number of decimal digits of `value` (≥ 0).
    @inline(__always)
    private static func digits(_ value: Int) -> Int {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// The index of the last field present in `mask`.
    @inline(__always)
    private static func lastField(_ mask: UInt8) -> Int {
        UInt8.bitWidth - 1 - mask.leadingZeroBitCount
    }

    /// One of the three texts.
    package enum Field {
        case body, sender, thread
    }

    /// The text of `field` alone (``unpacked()`` decodes all three).
    package func text(_ field: Field) -> String? {
        withFields { body, sender, thread in
            let bytes =
                switch field {
                case .body: body
                case .sender: sender
                case .thread: thread
                }
            return bytes.map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The text of `field`; setting it repacks the three.
    package subscript(field: Field) -> String? {
        get { text(field) }
        set { self = replacing(field, with: newValue) }
    }

    /// The texts with `field` replaced by `text`.
    package func replacing(_ field: Field, with text: String?) -> PackedTexts {
        var (body, sender, thread) = unpacked()
        switch field {
        case .body: body = text
        case .sender: sender = text
        case .thread: thread = text
        }
        return PackedTexts(body: body, sender: sender, thread: thread)
    }

    /// The three texts.
    package func unpacked() -> (body: String?, sender: String?, thread: String?) {
        withFields { body, sender, thread in
            func text(_ bytes: UnsafeBufferPointer<UInt8>?) -> String? { bytes.map { String(decoding: $0, as: UTF8.self) } }
            return (text(body), text(sender), text(thread))
        }
    }

    /// Calls `body` with the UTF-8 bytes of the three texts, without copying them.
    package func withFields<R>(
        _ body: (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?) -> R
    ) -> R {
        withBytes { Self.withFields(ofPacked: $0, body) }
    }

    /// ``withFields(_:)`` for packed bytes held elsewhere (``copyPackedBytes(to:)``).
    package static func withFields<R>(
        ofPacked bytes: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?, UnsafeBufferPointer<UInt8>?) -> R
    ) -> R {
        guard !bytes.isEmpty else { return body(nil, nil, nil) }
        let mask = bytes[0] &- UInt8(ascii: "a")
        let last = Self.lastField(mask)
        var position = 1
        func field(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
            guard mask & (1 << index) != 0 else { return nil }
            var end = bytes.count
            if index != last {
                var length = 0
                while bytes[position] != UInt8(ascii: ":") {
                    length = length * 10 + Int(bytes[position] &- UInt8(ascii: "0"))
                    position += 1
                }
                position += 1
                end = position + length
            }
            defer { position = end }
            return UnsafeBufferPointer(rebasing: bytes[position..<end])
        }
        let first = field(0)
        let second = field(1)
        let third = field(2)
        return body(first, second, third)
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs.storage, rhs.storage) {
        // Bytes, not `String ==`, which equates canonically equivalent texts ("é" and
        // "e" + U+0301) that pack to different bytes (and hash differently).
        case (.small(let a), .small(let b)): return a.utf8.elementsEqual(b.utf8)
        case (.large(let a), .large(let b)):
            return a === b || a.withBytes { x in b.withBytes { y in x.elementsEqual(y) } }
        default: return false  // the packing is canonical: sizes decide the case
        }
    }

    package func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// An immutable run of bytes in one allocation: the object header, a 4-byte count and the
/// bytes, with nothing else (a native `String` adds 16 bytes of counts and a terminator).
package final class TextBytes: ManagedBuffer<UInt32, UInt8> {
    /// A new buffer of `count` bytes written by `fill`.
    static func make(count: Int, _ fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) -> TextBytes {
        let buffer = unsafeDowncast(
            TextBytes.create(minimumCapacity: count) { _ in UInt32(count) }, to: TextBytes.self)
        buffer.withUnsafeMutablePointerToElements { fill(UnsafeMutableBufferPointer(start: $0, count: count)) }
        return buffer
    }

    /// The number of bytes.
    // The count is read through a pointer: `header`, a class's stored property, would be
    // checked for exclusive access at run time on every read.
    var count: Int { withUnsafeMutablePointerToHeader { Int($0.pointee) } }

    /// Calls `body` with the bytes.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        withUnsafeMutablePointers { count, elements in body(UnsafeBufferPointer(start: elements, count: Int(count.pointee))) }
    }
}
