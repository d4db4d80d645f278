import Foundation

/// Reads a file or standard input line by line, in large chunks, without decoding text.
/// A trailing `\r` is dropped, so CRLF files read like LF files.
struct LineReader {
    private let descriptor: Int32
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    /// The number of the line last returned, from 1.
    private(set) var lineNumber = 0
    /// The name used in messages: the path, or `-` for standard input.
    let name: String

    /// Opens `path`, or standard input for `-`.
    init(path: String) throws {
        name = path
        if path == "-" {
            descriptor = STDIN_FILENO
            ownsDescriptor = false
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw CLIFailure(exitCode: CLIFailure.usage, "\(path): cannot open: \(String(cString: strerror(errno)))")
            }
            ownsDescriptor = true
        }
        buffer.reserveCapacity(1 << 20)
    }

    func close() {
        if ownsDescriptor { _ = Foundation.close(descriptor) }
    }

    /// The next line, without its terminator, or `nil` at the end of input.
    ///
    /// Before it waits for input that has not arrived yet (a pipe or terminal whose writer
    /// is slower than the reader), it calls `idle`: a live stream's reader can commit what it
    /// has read instead of holding it until more comes. A regular file never waits.
    mutating func next(whenIdle idle: () throws -> Void = {}) throws -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = buffer[start..<end]
                start = newline + 1
                lineNumber += 1
                return line
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                var end = buffer.count
                if buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = buffer[start..<end]
                start = buffer.count
                lineNumber += 1
                return line
            }
            if !hasInputReady() { try idle() }
            try fill()
        }
    }

    /// Whether a read would return at once (bytes, the end of input, or an error) rather
    /// than wait.
    private func hasInputReady() -> Bool {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&request, 1, 0) != 0
    }

    private mutating func fill() throws {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        let chunk = 1 << 20
        let oldCount = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: chunk))
        let n = buffer.withUnsafeMutableBytes { raw in
            read(descriptor, raw.baseAddress! + oldCount, chunk)
        }
        if n < 0 {
            let code = errno
            buffer.removeSubrange(oldCount...)
            throw CLIFailure(exitCode: CLIFailure.usage, "\(name): read failed: \(String(cString: strerror(code)))")
        }
        buffer.removeSubrange((oldCount + n)...)
        if n == 0 { atEnd = true }
    }
}
