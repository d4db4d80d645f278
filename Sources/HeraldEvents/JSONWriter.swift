/// A small, fast writer of compact JSON, used for every JSON form Herald prints.
///
/// It writes keys in the order it is given them (Foundation's encoder cannot), escapes
/// strings as RFC 8259 requires, and inserts commas itself.
public struct JSONWriter: Sendable {
    /// The bytes written so far (UTF-8).
    public private(set) var bytes: [UInt8] = []
    private var needsComma = false

    /// Creates an empty writer.
    public init() {
        bytes.reserveCapacity(256)
    }

    /// The JSON written so far, as a string.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Removes what was written, keeping the capacity.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    public mutating func objectStart() { separate(); bytes.append(UInt8(ascii: "{")); needsComma = false }
    public mutating func objectEnd() { bytes.append(UInt8(ascii: "}")); needsComma = true }
    public mutating func arrayStart() { separate(); bytes.append(UInt8(ascii: "[")); needsComma = false }
    public mutating func arrayEnd() { bytes.append(UInt8(ascii: "]")); needsComma = true }

    /// Writes an object key; the next value written belongs to it.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func string(_ value: String) { separate(); appendQuoted(value); needsComma = true }

    public mutating func int<T: BinaryInteger>(_ value: T) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    public mutating func null() { separate(); bytes.append(contentsOf: "null".utf8); needsComma = true }

    /// Writes closed ranges as `[{"first":…,"last":…}, …]` (purged seqs, gaps).
    public mutating func ranges<T: BinaryInteger>(_ values: [ClosedRange<T>]) {
        arrayStart()
        for range in values {
            objectStart()
            key("first"); int(range.lowerBound)
            key("last"); int(range.upperBound)
            objectEnd()
        }
        arrayEnd()
    }

    /// Writes an array of integers.
    public mutating func ints<S: Sequence>(_ values: S) where S.Element: BinaryInteger {
        arrayStart()
        for value in values { int(value) }
        arrayEnd()
    }

    /// Writes `key: value` when `value` is not `nil`; nothing otherwise.
    public mutating func optional(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// Appends already-encoded JSON as one value.
    public mutating func raw(_ json: some Sequence<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
