import CSodium

/// Opens Zulip's end-to-end encrypted push payloads: libsodium's secretbox
/// (XSalsa20-Poly1305), `nonce (24) ‖ MAC (16) ‖ ciphertext`, under the push key the client
/// registered.
enum ZulipCipher {
    /// The nonce length (`crypto_secretbox_NONCEBYTES`).
    static let nonceCount = 24
    /// The authenticator length (`crypto_secretbox_MACBYTES`).
    static let macCount = 16

    /// libsodium must be initialized once before use; `sodium_init` is safe to call again and
    /// from any thread.
    private static let ready: Bool = sodium_init() >= 0

    /// The plaintext of `box` (`nonce ‖ MAC ‖ ciphertext`) under `key`.
    static func open(_ box: [UInt8], key: ZulipPushKey) throws(IngestError) -> [UInt8] {
        guard ready else { throw failure("libsodium failed to initialize") }
        guard box.count > nonceCount + macCount else {
            throw failure("expected more than \(nonceCount + macCount) bytes (nonce, MAC and ciphertext), got \(box.count)")
        }
        var plaintext = [UInt8](repeating: 0, count: box.count - nonceCount - macCount)
        let status = box.withUnsafeBufferPointer { box in
            key.bytes.withUnsafeBufferPointer { key in
                plaintext.withUnsafeMutableBufferPointer { out in
                    // sodium.h: crypto_secretbox_open_easy(m, c, clen, n, k), c = MAC ‖ ciphertext.
                    crypto_secretbox_open_easy(
                        out.baseAddress, box.baseAddress! + nonceCount, UInt64(box.count - nonceCount),
                        box.baseAddress!, key.baseAddress!)
                }
            }
        }
        guard status == 0 else {
            throw failure("authentication failed: wrong push key or corrupted payload")
        }
        return plaintext
    }

    private static func failure(_ reason: String) -> IngestError {
        IngestError(format: .zulip, field: "encrypted_data", reason: reason)
    }
}
