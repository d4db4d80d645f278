import Foundation
import HeraldEvents

/// Where output goes, and whether it is a terminal (colour and progress only on a TTY).
enum Terminal {
    static let stdoutIsTTY = isatty(STDOUT_FILENO) == 1
    static let stderrIsTTY = isatty(STDERR_FILENO) == 1

    /// Writes `text` and a newline to standard output, unbuffered by Foundation.
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    /// Writes bytes to standard output.
    static func bytes(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0, to: STDOUT_FILENO) }
    }

    /// Writes `herald: message` to standard error.
    static func error(_ message: String) {
        write("herald: \(message)\n", to: STDERR_FILENO)
    }

    /// Writes a note to standard error.
    static func note(_ message: String) {
        write(message + "\n", to: STDERR_FILENO)
    }

    static let stdinIsTTY = isatty(STDIN_FILENO) == 1

    /// Asks before a destructive step: `--yes` goes ahead; on a terminal the user must answer
    /// yes to `question`; anywhere else (a script, a pipe) it refuses with a usage error
    /// telling to pass `--yes`, so nothing is destroyed unattended by mistake.
    static func confirm(_ question: String, yes: Bool, flag: String = "--yes") throws {
        if yes { return }
        guard stdinIsTTY && stderrIsTTY else {
            throw CLIFailure(
                exitCode: CLIFailure.usage,
                "\(question): not confirmed (standard input is not a terminal); pass \(flag) to go ahead, or --dry-run to see what it would do")
        }
        write(question + " [y/N] ", to: STDERR_FILENO)
        let answer = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        guard answer == "y" || answer == "yes" else {
            throw CLIFailure(exitCode: CLIFailure.usage, "not confirmed: nothing was changed")
        }
    }

    /// Notes on stderr that `command` cannot show the history up to `base`, which compaction
    /// dropped without an archive, and what it does instead (`consequence`).
    static func noteDroppedHistory(
        through base: UInt64, _ command: String, _ consequence: String, how: String = "was compacted without an archive"
    ) {
        note("history up to seq \(base) \(how): the \(command) \(consequence)")
    }

    static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: descriptor) }
    }

    /// The exit status when standard output's reader went away (`herald export | head`):
    /// 128 + SIGPIPE, what a shell reports for a process that SIGPIPE ended, so scripts see
    /// what they would of any Unix filter, but as an exit, never a signal. `Herald.main`
    /// ignores SIGPIPE so that the write fails with EPIPE instead.
    static let closedOutputExitCode: Int32 = 128 + SIGPIPE

    /// Writes every byte, retrying short and interrupted writes. When standard output's
    /// reader has gone away, exits at once with ``closedOutputExitCode`` (nothing more can be
    /// shown, and a command writing for minutes should not go on for nobody). Any other failed
    /// write to standard output (a full disk, an I/O error) exits 2 naming the error, so that
    /// `herald export > FILE` never ends 0 with the file short. A failed write to standard
    /// error is given up silently.
    private static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) {
        var offset = 0
        while offset < buffer.count {
            let n = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                guard descriptor == STDOUT_FILENO else { return }
                if n < 0 && errno == EPIPE { _exit(closedOutputExitCode) }
                let reason = n < 0 ? String(cString: strerror(errno)) : "nothing written"
                failure("cannot write standard output: \(reason); the output is incomplete", exitCode: CLIFailure.dataProblem)
                _exit(CLIFailure.dataProblem)
            }
            offset += n
        }
    }

    /// ANSI styling, applied only when standard output is a terminal.
    enum Style: String {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", cyan = "36"
    }

    static func styled(_ text: String, _ style: Style) -> String {
        colorEnabled ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// `--color auto|always|never`.
    enum ColorMode: String, CaseIterable {
        case auto, always, never
    }

    /// Whether output is styled: `--color always` or `never` decide; `auto` (the default)
    /// styles only a terminal, and not when `NO_COLOR` is set (https://no-color.org) or
    /// `TERM` is `dumb`. Set once by `Herald.main` before any command runs.
    nonisolated(unsafe) static var colorEnabled = colorEnabled(for: .auto)

    static func colorEnabled(for mode: ColorMode, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        switch mode {
        case .always: return true
        case .never: return false
        case .auto:
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
            if environment["TERM"] == "dumb" { return false }
            return stdoutIsTTY
        }
    }

    /// Whether errors are printed as JSON (`--json` anywhere on the command line).
    nonisolated(unsafe) static var jsonErrors = false

    /// Reports a failure on stderr: `herald: message`, or under `--json` one JSON object
    /// `{"error":{"exitCode":N,"message":"…"}}`.
    static func failure(_ message: String, exitCode: Int32) {
        if jsonErrors {
            var writer = JSONWriter()
            writer.objectStart()
            writer.key("error")
            writer.objectStart()
            writer.key("exitCode"); writer.int(exitCode)
            writer.key("message"); writer.string(message)
            writer.objectEnd()
            writer.objectEnd()
            write(writer.string + "\n", to: STDERR_FILENO)
        } else {
            error(message)
        }
    }
}
