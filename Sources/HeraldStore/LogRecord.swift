import Crypto
import Foundation
import HeraldEvents

/// One entry of the log: an event with its seq, when it was recorded and where it came from.
public struct LogRecord: Hashable, Sendable {
    /// The sequence number: 1, 2, 3… in append order.
    public var seq: UInt64
    /// When the store recorded the event, in milliseconds since the Unix epoch.
    public var recordedAt: Int64
    /// Where the event came from.
    public var source: Source
    /// The event.
    public var event: Event

    /// Creates a record.
    public init(seq: UInt64, recordedAt: Int64, source: Source, event: Event) {
        self.seq = seq
        self.recordedAt = recordedAt
        self.source = source
        self.event = event
    }
}

/// Where an event came from: the ingest format and a digest of the raw payload.
public struct Source: Hashable, Sendable {
    /// The ingest format (`herald`, `telegram`, …), or `library` for events appended by code.
    public var format: String
    /// The first 16 bytes of the SHA-256 of the raw payload, when there was one.
    public var digest: [UInt8]?

    /// Creates a source.
    public init(format: String, digest: [UInt8]? = nil) {
        precondition(digest == nil || digest!.count == Self.digestLength, "a digest is \(Self.digestLength) bytes")
        self.format = format
        self.digest = digest
    }

    /// The source of a raw payload: its format and the digest of its bytes.
    public init(format: String, payload: some DataProtocol) {
        // Hashing contiguous bytes directly skips DataProtocol's per-region generic path.
        let digest = payload.withContiguousStorageIfAvailable { bytes in
            var hasher = SHA256()
            hasher.update(bufferPointer: UnsafeRawBufferPointer(bytes))
            return hasher.finalize()
        } ?? SHA256.hash(data: payload)
        self.init(format: format, digest: digest.withUnsafeBytes { Array($0.prefix(Self.digestLength)) })
    }

    /// Checks what ``init(format:digest:)`` requires but setting ``digest`` skips: a digest
    /// is ``digestLength`` bytes, the only length a log record can hold.
    public func validate() throws(EventError) {
        if let digest, digest.count != Self.digestLength {
            throw EventError(field: "source.digest", reason: "must be \(Self.digestLength) bytes, got \(digest.count)")
        }
    }

    /// Events appended through the library API, with no raw payload.
    public static let library = Source(format: "library")

    /// The length of a stored digest.
    public static let digestLength = 16
}
