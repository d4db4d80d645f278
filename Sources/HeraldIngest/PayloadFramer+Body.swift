import HeraldEvents

extension PayloadFramer {
    /// Why a body could not be cut into payloads: the part at fault (`body`, or `[2]` for an
    /// array's third element) and what was wrong.
    package struct BodyError: Error, Hashable, Sendable, CustomStringConvertible {
        package var field: String
        package var reason: String

        /// An error of `field`.
        package init(field: String, reason: String) {
            self.field = field
            self.reason = reason
        }

        /// `field: reason`.
        package var description: String { "\(field): \(reason)" }
    }

    /// The payloads of a whole body held in memory (an HTTP request's), each one the bytes it
    /// is in `body`, so that its digest is the same however it arrived.
    ///
    /// After a leading UTF-8 byte-order mark and whitespace, a body that begins with `[` is a
    /// JSON array: each element is one payload, numbered by its index from 0, and must be an
    /// object or an array. Otherwise, with `wholeDocument` the rest of the body is one payload
    /// (line 1; none when it is empty), and without it the body's lines are framed one by one
    /// as ``feed(_:number:)`` frames them (a trailing `\r` dropped, lines of blanks left out),
    /// numbered from 1.
    ///
    /// - Throws: ``BodyError`` for an array that is not valid JSON or holds a scalar.
    package static func payloads(inBody body: [UInt8], wholeDocument: Bool) throws(BodyError) -> [Framed] {
        let start = body.starts(with: JSONParser.byteOrderMark) ? JSONParser.byteOrderMark.count : 0
        let trimmed = body[start...].drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        if trimmed.first == UInt8(ascii: "[") { return try elements(of: body) }
        if wholeDocument { return trimmed.isEmpty ? [] : [(trimmed, 1)] }
        var framer = PayloadFramer()
        var framed: [Framed] = []
        func keep(_ payload: ArraySlice<UInt8>, _ line: Int) {
            if !payload.allSatisfy(isBlank) { framed.append((payload, line)) }
        }
        var number = 0
        for var line in body[start...].split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            number += 1
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            switch framer.feed(line, number: number) {
            case .payload(let payload, let line): keep(payload, line)
            case .payloads(let payloads): for (payload, line) in payloads { keep(payload, line) }
            case .gathering: break
            }
        }
        for (payload, line) in framer.finish() { keep(payload, line) }
        return framed
    }

    /// The elements of the JSON array `body`, as they are written in it.
    private static func elements(of body: [UInt8]) throws(BodyError) -> [Framed] {
        let ranges: [Range<Int>]
        do {
            ranges = try JSONParser.arrayElements(body)
        } catch {
            throw BodyError(field: "body", reason: "not valid JSON: \(error.reason) at byte \(error.offset)")
        }
        return try ranges.enumerated().map { (index, range) throws(BodyError) in
            guard body[range.lowerBound] == UInt8(ascii: "{") || body[range.lowerBound] == UInt8(ascii: "[") else {
                throw BodyError(field: "[\(index)]", reason: "expected an event object")
            }
            return (body[range], index)
        }
    }
}
