import Foundation

/// Options that apply to every subcommand, taken off the command line before
/// ArgumentParser sees it: `--color`, and `--json`'s effect on how errors are printed.
enum GlobalOptions {
    /// Removes `--color MODE` / `--color=MODE` from `arguments` and sets the colour mode;
    /// notes `--json` (left in place for the subcommand) so that errors come out as JSON.
    static func extract(from arguments: inout [String]) throws {
        var index = 0
        var mode = Terminal.ColorMode.auto
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument == "--json" { Terminal.jsonErrors = true }
            var value: String?
            if argument == "--color" {
                guard index + 1 < arguments.count else {
                    throw CLIFailure(exitCode: CLIFailure.usage, "--color needs a value: auto, always or never")
                }
                value = arguments[index + 1]
                arguments.removeSubrange(index...(index + 1))
            } else if argument.hasPrefix("--color=") {
                value = String(argument.dropFirst("--color=".count))
                arguments.remove(at: index)
            } else {
                index += 1
                continue
            }
            guard let parsed = value.flatMap(Terminal.ColorMode.init(rawValue:)) else {
                throw CLIFailure(exitCode: CLIFailure.usage, "--color \(value ?? ""): expected auto, always or never")
            }
            mode = parsed
        }
        Terminal.colorEnabled = Terminal.colorEnabled(for: mode)
    }

    /// A usage message with the nearest subcommand when the first argument names none
    /// (`herald stat` → did you mean `stats`?); `nil` when it is one, or an option.
    static func unknownSubcommand(in arguments: [String], known: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), !known.contains(first) else { return nil }
        let ranked = known.map { ($0, distance(first, $0)) }.sorted { $0.1 != $1.1 ? $0.1 < $1.1 : $0.0 < $1.0 }
        let close = ranked.filter { $0.1 <= max(2, first.count / 2) || $0.0.hasPrefix(first) }.prefix(3).map(\.0)
        var message = "unknown command '\(first)'"
        if !close.isEmpty { message += "; did you mean " + close.map { "'\($0)'" }.joined(separator: " or ") + "?" }
        return message + " (see herald --help)"
    }

    /// The Levenshtein distance between two short words.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }
}
