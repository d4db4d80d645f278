import HeraldEvents

/// Adapts Web Push bodies: decrypts them (``WebPushCipher``) and hands the plaintext to the
/// adapter of ``IngestContext/innerFormat``.
///
/// Input is either the raw body bytes, or the body as one line of base64url / base64 text
/// (ingest reads one payload per line): a payload consisting only of base64 characters,
/// `=` padding and surrounding whitespace is taken as text. The result keeps format
/// `webpush` and `encrypted: true`; its events are the inner adapter's.
struct WebPushAdapter {
    /// Decodes one Web Push body.
    static func decode(_ bytes: [UInt8], context: IngestContext) throws(IngestError) -> IngestResult {
        guard let keys = context.webPush else {
            throw IngestError(format: .webpush, field: "webPush", reason: "no Web Push keys given (receiver private key and auth secret)")
        }
        guard let innerFormat = context.innerFormat else {
            throw IngestError(format: .webpush, field: "innerFormat", reason: "the format of the decrypted body must be given")
        }
        guard innerFormat != .webpush else {
            throw IngestError(format: .webpush, field: "innerFormat", reason: "a Web Push body cannot contain another Web Push body")
        }
        let body = try Self.body(of: bytes)
        let plaintext = try WebPushCipher.decrypt(body, keys: keys)
        let inner = try Ingest.decode(plaintext, format: innerFormat, context: context)
        return IngestResult(format: .webpush, events: inner.events, encrypted: true)
    }

    /// The binary body: decoded from base64url text when the payload is text, else as is.
    static func body(of bytes: [UInt8]) throws(IngestError) -> [UInt8] {
        guard let text = base64Text(bytes) else { return bytes }
        guard let body = Base64URL.decode(text) else {
            throw IngestError(format: .webpush, field: "body", reason: "not valid base64url")
        }
        return body
    }

    /// The payload without surrounding whitespace when it is base64 text, else `nil`.
    static func base64Text(_ bytes: [UInt8]) -> ArraySlice<UInt8>? {
        var text = bytes[...]
        while let byte = text.first, isWhitespace(byte) { text = text.dropFirst() }
        while let byte = text.last, isWhitespace(byte) { text = text.dropLast() }
        guard !text.isEmpty, text.allSatisfy({ Base64URL.isAlphabet($0) || $0 == UInt8(ascii: "=") }) else { return nil }
        return text
    }

    /// Whether `bytes` look like a Web Push body (text or binary) with a P-256 sender key.
    static func looksLikeBody(_ bytes: [UInt8]) -> Bool {
        let body = base64Text(bytes).flatMap { Base64URL.decode($0) } ?? bytes
        return body.count >= 21 + 65 + 17 && body[20] == 65 && body[21] == 0x04
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
