import ArgumentParser
import Foundation
import HeraldConsole
import HeraldStore
import Logging

/// `herald console`: the web console over a store on disk, read-only.
struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Browse a store in a web browser, read-only: accounts, shades, timelines, health.",
        discussion: """
            Serves the pages of `herald serve`'s /console/ over a store on disk (often a
            copy someone sent in), on a loopback address and without a token. The store is
            opened read-only, as `herald state` and `herald audit` open it: nothing is
            written to it. A store that cannot be opened (a damaged copy) gets a page
            saying why on every URL. Prints the URL; stops on SIGINT or SIGTERM.

            Pages: /console/ (accounts), /console/accounts/ACCOUNT (the shade; ?at=SEQ or a
            time for the state then), /console/accounts/ACCOUNT/audit?notification=N
            (also group=G, chat=C&object=ID), /console/store (health), /console/records/SEQ.

            Example:
              herald console --store ./copy.db --listen 127.0.0.1:8081
            """
    )

    @OptionGroup var store: StoreOptions

    @Option(name: .long, help: ArgumentHelp("The loopback address to listen on; port 0 picks a free one.", valueName: "127.0.0.1:PORT"))
    var listen = "127.0.0.1:8081"

    func validate() throws {
        guard let (host, _) = Self.address(listen) else {
            throw ValidationError("--listen '\(listen)': expected HOST:PORT, e.g. 127.0.0.1:8081")
        }
        guard ["127.0.0.1", "::1", "localhost"].contains(host) else {
            throw ValidationError("--listen '\(listen)': the console has no token, so it listens on loopback only (127.0.0.1, ::1 or localhost)")
        }
    }

    /// `HOST:PORT` (`[::1]:PORT` too).
    static func address(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            return nil
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.isEmpty ? nil : (host, port)
    }

    func run() async throws {
        let (host, port) = Self.address(listen)!
        let path = store.path
        guard FileManager.default.fileExists(atPath: path + "/data.mdb") else {
            throw CLIFailure(exitCode: CLIFailure.usage, "no store at \(path) (no data.mdb)")
        }
        // A store no process writes (a copy, usually) is read without LMDB's lock file, so the
        // console changes no byte of it, while the writer lock held shared keeps any writer
        // from opening it meanwhile (the descriptor stays open until the process ends). A
        // store a writer has open is read as `herald state` reads it.
        let held = WriterLock.shared(directory: path)
        let untouched = held != nil || !FileManager.default.fileExists(atPath: path + "/" + WriterLock.fileName)
        let source = LocalConsoleStore(path: path) {
            try store.openForReading {
                $0.replayOnOpen = true
                $0.withoutLockFile = untouched
            }
        }
        if let failure = source.openFailure {
            Terminal.note("the store cannot be read; every page shows why: \(failure)")
        }
        var logger = Logger(label: "herald.console")
        logger.logLevel = .warning
        try await source.serve(host: host, port: port, logger: logger) { port in
            let shown = host.contains(":") ? "[\(host)]" : host
            FileHandle.standardOutput.write(Data("herald console: http://\(shown):\(port)/console/ (read-only, store \(path))\n".utf8))
        }
    }
}
