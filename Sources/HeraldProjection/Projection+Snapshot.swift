import HeraldEvents

/// Why bytes could not be restored as a ``Projection``.
public struct SnapshotError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Reason: Hashable, Sendable {
        /// The bytes end before the snapshot does.
        case truncated
        /// The snapshot was written by a format this build does not know.
        case unsupportedVersion(UInt32)
        /// The trailing checksum does not match the bytes: they were damaged.
        case checksumMismatch
        /// The bytes decode but describe an impossible state.
        case malformed(String)
    }

    /// What was wrong.
    public var reason: Reason
    /// The byte offset where decoding stopped.
    public var offset: Int

    /// Creates an error.
    public init(_ reason: Reason, offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// The error in a few words, with the offset.
    public var description: String {
        switch reason {
        case .truncated: "snapshot truncated at byte \(offset)"
        case .unsupportedVersion(let version) where version < Projection.snapshotFormatVersion:
            "snapshot format version \(version) was written before SEMANTICS 1.2 and is read only where it starts the kept history"
        case .unsupportedVersion(let version): "unsupported snapshot format version \(version)"
        case .checksumMismatch: "snapshot checksum mismatch"
        case .malformed(let why): "malformed snapshot at byte \(offset): \(why)"
        }
    }
}

extension Projection {
    /// The snapshot format this build writes and reads: 3, the state of SEMANTICS 1.2.
    /// Versions 1 and 2 (SEMANTICS 1.1) are refused (``SnapshotError/Reason/unsupportedVersion(_:)``):
    /// their state lacks what 1.2 keeps, so a store rebuilds from its log instead.
    public static let snapshotFormatVersion: UInt32 = 3

    /// The projection as compact bytes (`schema/snapshot-format.md`). Equal projections give
    /// identical bytes; ``init(snapshot:configuration:)-([UInt8],_)`` restores an equal projection.
    public func snapshot() -> [UInt8] {
        snapshot(formatVersion: Self.snapshotFormatVersion)
    }

    /// ``snapshot()`` under another version number (tests: an older version is refused).
    func snapshot(formatVersion version: UInt32) -> [UInt8] {
        var writer = ByteWriter(capacity: 4096)
        writer.uint32BigEndian(version)
        writer.varint(seq)
        let names = accounts
        writer.varint(UInt64(names.count))
        var account = ByteWriter(capacity: 4096)
        for name in names {
            writer.string(name)
            account.bytes.removeAll(keepingCapacity: true)
            accountsByName[name]!.encode(to: &account)
            writer.varint(UInt64(account.bytes.count))
            writer.append(contentsOf: account.bytes)
        }
        writer.uint64BigEndian(SnapshotChecksum.fnv1a64(writer.bytes))
        return writer.bytes
    }

    /// Restores a projection from ``snapshot()`` bytes, running with `configuration`.
    ///
    /// Damaged bytes, an unknown format version or an impossible state throw; nothing traps.
    public init(snapshot bytes: [UInt8], configuration: Configuration = .init()) throws(SnapshotError) {
        let result: Result<Projection, SnapshotError> = bytes.withUnsafeBytes { buffer in
            do throws(SnapshotError) {
                return .success(try Projection(snapshot: buffer, configuration: configuration))
            } catch {
                return .failure(error)
            }
        }
        self = try result.get()
    }

    /// Restores a projection from ``snapshot()`` bytes borrowed from the caller (e.g. an LMDB
    /// value); the bytes need to stay valid only during the call.
    public init(snapshot buffer: UnsafeRawBufferPointer, configuration: Configuration = .init()) throws(SnapshotError) {
        try self.init(snapshot: buffer, configuration: configuration, checksumVerified: false)
    }

    /// ``init(snapshot:configuration:)`` for a caller that has already checked a checksum
    /// covering exactly these bytes (the store's CRC-32C envelope), as
    /// ``SnapshotAccounts/init(snapshot:configuration:checksumVerified:onlyAccount:readingFormerFormats:)``
    /// reads them, its accounts decoded in one run.
    package init(
        snapshot buffer: UnsafeRawBufferPointer, configuration: Configuration, checksumVerified: Bool,
        onlyAccount: String? = nil, readingFormerFormats: Bool = false
    ) throws(SnapshotError) {
        let accounts = try SnapshotAccounts(
            snapshot: buffer, configuration: configuration, checksumVerified: checksumVerified, onlyAccount: onlyAccount,
            readingFormerFormats: readingFormerFormats)
        self = accounts.projection([try accounts.decode(0..<accounts.count).get()])
    }

    /// A snapshot whose accounts are found but not yet decoded: accounts are independent, so
    /// a caller may decode them in parts (``decode(_:)``), on threads of its own, and join the
    /// parts in order (``projection(_:)``) into the projection one run gives. The snapshot's
    /// bytes must stay valid and unchanged while the value is used.
    package struct SnapshotAccounts: @unchecked Sendable {
        // @unchecked: `body` is only read.
        /// The projection without the accounts still to decode (format 1, which has no
        /// lengths, decodes its accounts as they are found).
        private var base: Projection
        private let body: UnsafeRawBufferPointer
        private let former: Bool
        /// Each account still to decode: its name and where its encoding lies in `body`.
        private var entries: [(name: String, bytes: Range<Int>)] = []

        /// Checks the snapshot's version, checksum and list of accounts. With
        /// `checksumVerified` the payload's own checksum is not computed again. With
        /// `onlyAccount`, the projection holds that account alone (none when the snapshot has
        /// no such account), as ``Projection/removeAccount(_:)`` of every other would leave it,
        /// and the others are not decoded. With `readingFormerFormats`, formats 1 and 2
        /// (SEMANTICS 1.1) are read too, their state carried into 1.2 as
        /// ``Account/init(decodingFormer:configuration:)`` says: only for a snapshot that
        /// nothing else can stand for (the start of a store's kept history).
        package init(
            snapshot buffer: UnsafeRawBufferPointer, configuration: Configuration, checksumVerified: Bool,
            onlyAccount: String?, readingFormerFormats: Bool
        ) throws(SnapshotError) {
            guard buffer.count >= 12 else { throw SnapshotError(.truncated, offset: buffer.count) }
            let version = UInt32(buffer[0]) << 24 | UInt32(buffer[1]) << 16 | UInt32(buffer[2]) << 8 | UInt32(buffer[3])
            former = readingFormerFormats && (version == 1 || version == 2)
            guard version == snapshotFormatVersion || former else { throw SnapshotError(.unsupportedVersion(version), offset: 0) }
            let bodyEnd = buffer.count - 8
            body = UnsafeRawBufferPointer(rebasing: buffer[0..<bodyEnd])
            if !checksumVerified {
                var stored: UInt64 = 0
                for i in bodyEnd..<buffer.count { stored = stored << 8 | UInt64(buffer[i]) }
                guard SnapshotChecksum.fnv1a64(body) == stored else { throw SnapshotError(.checksumMismatch, offset: bodyEnd) }
            }
            var decoder = SnapshotDecoder(body)
            _ = try decoder.run { reader throws(ByteReader.Malformed) in try reader.uint32BigEndian() }
            base = Projection(configuration: configuration)
            base.seq = try decoder.run { reader throws(ByteReader.Malformed) in try reader.varint() }
            let count = try decoder.count()
            var previous: String?
            for _ in 0..<count {
                let name = try decoder.string()
                guard !name.isEmpty else { throw decoder.malformed("empty account name") }
                if let previous, !Projection.byteOrder(previous, name) {
                    throw decoder.malformed("accounts not in ascending order")
                }
                previous = name
                if version == 1 {
                    // Format 1 has no lengths: each account follows its name.
                    let account = try Account(decodingFormer: &decoder, configuration: configuration)
                    if onlyAccount.map(name.isSameName(as:)) ?? true { base.accountsByName[name] = account }
                    continue
                }
                let length = try decoder.count()
                let start = decoder.offset
                try decoder.skip(length)
                // With `onlyAccount`, the others are skipped by their lengths, never decoded.
                if onlyAccount.map(name.isSameName(as:)) ?? true { entries.append((name, start..<(start + length))) }
            }
            guard decoder.isAtEnd else { throw decoder.malformed("trailing bytes") }
        }

        /// How many accounts are still to decode.
        package var count: Int { entries.count }

        /// Where to cut the accounts still to decode into two runs of about half of their
        /// bytes each; `nil` when they take fewer than `minimumBytes` or are fewer than two.
        package func halfway(minimumBytes: Int) -> Int? {
            let total = entries.reduce(0) { $0 + $1.bytes.count }
            guard entries.count >= 2, total >= minimumBytes else { return nil }
            var split = 0
            var bytes = 0
            while split < entries.count - 1 && bytes < total / 2 {
                bytes += entries[split].bytes.count
                split += 1
            }
            return split
        }

        /// Decodes the accounts at `indexes` (of those still to decode), each of which must end
        /// where its length says.
        package func decode(_ indexes: Range<Int>) -> Result<DecodedAccounts, SnapshotError> {
            var accounts: [Account] = []
            accounts.reserveCapacity(indexes.count)
            for entry in entries[indexes] {
                var decoder = SnapshotDecoder(UnsafeRawBufferPointer(rebasing: body[entry.bytes]), base: entry.bytes.lowerBound)
                do throws(SnapshotError) {
                    accounts.append(
                        former
                            ? try Account(decodingFormer: &decoder, configuration: base.configuration)
                            : try Account(decoding: &decoder, configuration: base.configuration))
                    guard decoder.isAtEnd else { throw decoder.malformed("account shorter than its length") }
                } catch {
                    return .failure(error)
                }
            }
            return .success(DecodedAccounts(indexes: indexes, accounts: accounts))
        }

        /// The projection, given every account still to decode in `parts`, in order.
        package func projection(_ parts: [DecodedAccounts]) -> Projection {
            var projection = base
            var next = 0
            for part in parts {
                precondition(part.indexes.lowerBound == next, "the parts of a snapshot's accounts join in order")
                for (index, account) in zip(part.indexes, part.accounts) { projection.accountsByName[entries[index].name] = account }
                next = part.indexes.upperBound
            }
            precondition(next == entries.count, "every account of the snapshot is decoded")
            return projection
        }
    }

    /// Accounts of a snapshot decoded by ``SnapshotAccounts/decode(_:)``.
    package struct DecodedAccounts: Sendable {
        fileprivate let indexes: Range<Int>
        fileprivate let accounts: [Account]
    }
}

/// The checksum that ends every snapshot: 64-bit FNV-1a, which detects any one changed byte.
enum SnapshotChecksum {
    static func fnv1a64(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// A ``ByteReader`` whose errors become ``SnapshotError``s.
struct SnapshotDecoder {
    var reader: ByteReader
    /// Where the buffer starts in the whole snapshot: errors give offsets in the snapshot.
    let base: Int

    init(_ buffer: UnsafeRawBufferPointer, base: Int = 0) {
        reader = ByteReader(buffer)
        self.base = base
    }

    var isAtEnd: Bool { reader.isAtEnd }

    /// The offset of the next byte in the buffer.
    var offset: Int { reader.offset }

    mutating func run<T>(_ body: (inout ByteReader) throws(ByteReader.Malformed) -> T) throws(SnapshotError) -> T {
        do throws(ByteReader.Malformed) {
            return try body(&reader)
        } catch {
            if error.reason == "unexpected end" { throw SnapshotError(.truncated, offset: base + error.offset) }
            throw SnapshotError(.malformed(error.reason), offset: base + error.offset)
        }
    }

    func malformed(_ why: String) -> SnapshotError { SnapshotError(.malformed(why), offset: base + reader.offset) }

    /// Skips `count` bytes.
    mutating func skip(_ count: Int) throws(SnapshotError) { try run { r throws(ByteReader.Malformed) in try r.skip(count) } }

    mutating func byte() throws(SnapshotError) -> UInt8 { try run { r throws(ByteReader.Malformed) in try r.byte() } }
    /// A length-prefixed UTF-8 string.
    mutating func string() throws(SnapshotError) -> String {
        try checkStringLength()
        return try run { r throws(ByteReader.Malformed) in try r.string() }
    }

    /// A length-prefixed UTF-8 string's bytes, validated and borrowed from the snapshot.
    mutating func utf8() throws(SnapshotError) -> UnsafeBufferPointer<UInt8> {
        try checkStringLength()
        return try run { r throws(ByteReader.Malformed) in try r.utf8() }
    }

    /// Throws a truncation when the next length prefix announces more bytes than are left.
    private mutating func checkStringLength() throws(SnapshotError) {
        let start = reader.offset
        let (length, remaining) = try run { r throws(ByteReader.Malformed) in
            var probe = r
            return (try probe.varint(), probe.remaining)
        }
        guard length <= UInt64(remaining) else { throw SnapshotError(.truncated, offset: base + start) }
    }

    /// A count of items that each take at least one byte.
    mutating func count() throws(SnapshotError) -> Int {
        try run { r throws(ByteReader.Malformed) in try r.count(limit: r.remaining) }
    }
    /// A varint in `range`.
    mutating func int(in range: ClosedRange<Int64>, _ what: String) throws(SnapshotError) -> Int64 {
        let raw = try run { r throws(ByteReader.Malformed) in try r.varint() }
        guard raw <= UInt64(Int64.max), range.contains(Int64(raw)) else { throw malformed("\(what) out of range") }
        return Int64(raw)
    }
    mutating func signed() throws(SnapshotError) -> Int64 { try run { r throws(ByteReader.Malformed) in try r.signedVarint() } }
    /// An id above `previous`, written as the (positive) difference.
    mutating func id(after previous: Int64, _ what: String) throws(SnapshotError) -> Int64 {
        let delta = try int(in: 1...Int64.max, what)
        let (id, overflow) = previous.addingReportingOverflow(delta)
        guard !overflow else { throw malformed("\(what) out of range") }
        return id
    }
}
