import ArgumentParser
import Foundation
import HeraldEvents
import HeraldIngest
import HeraldStore

/// `herald quarantine`: the payloads ingest rejected.
struct QuarantineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quarantine",
        abstract: "List, show and retry payloads that ingest rejected.",
        discussion: """
            Examples:
              herald quarantine list
              herald quarantine show 3
              herald quarantine retry 3
            """,
        subcommands: [List.self, Show.self, Retry.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List quarantined payloads.")
        @OptionGroup var store: StoreOptions
        @Flag(name: .long, help: "Print one JSON object per line.") var json = false

        func run() throws {
            let entries = try store.openForReading { $0.replayOnOpen = false }.quarantine.all()
            if json {
                for entry in entries { Terminal.line(QuarantineCommand.json(entry, withRaw: false)) }
                return
            }
            guard !entries.isEmpty else { Terminal.line("the quarantine is empty"); return }
            var table = Table("id", "received", "format", "from", "reason")
            for entry in entries {
                table.add("\(entry.id)", Formatting.timestamp(milliseconds: entry.receivedAt), entry.format,
                          "\(Formatting.escaped(entry.input)):\(entry.line)", Formatting.clip(Formatting.escaped(entry.reason), 60))
            }
            Terminal.line(table.rendered)
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one quarantined payload, raw bytes included.")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The quarantine id.") var id: UInt64
        @Flag(name: .long, help: "Print JSON.") var json = false

        func run() throws {
            let entry = try QuarantineCommand.find(id, in: store.openForReading { $0.replayOnOpen = false })
            if json { Terminal.line(QuarantineCommand.json(entry, withRaw: true)); return }
            Terminal.line("""
                id        \(entry.id)
                received  \(Formatting.timestamp(milliseconds: entry.receivedAt))
                format    \(entry.format)
                from      \(Formatting.escaped(entry.input)):\(entry.line)
                reason    \(entry.reason)
                account   \(entry.account ?? "(none given)")
                payload   (\(entry.raw.count) bytes)
                """)
            Terminal.bytes(entry.raw + [UInt8(ascii: "\n")])
        }
    }

    struct Retry: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode a quarantined payload again (e.g. after adding a key) and append it if it is now valid.",
            discussion: """
                The payload is decoded as it was ingested: its format and the --account ingest
                was given are kept with it. Give the keys it needs as to `herald ingest`
                (Telegram keys added with `herald keys add` are used anyway).

                Example:
                  herald quarantine retry 3 --zulip-push-key 1:MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=
                """)
        @OptionGroup var store: StoreOptions
        @Argument(help: "The quarantine id.") var id: UInt64
        @OptionGroup var payload: PayloadOptions

        func run() throws {
            let target = try store.openForWriting(create: false)
            let entry = try QuarantineCommand.find(id, in: target)
            var options = payload
            options.format = payload.format ?? entry.format
            options.account = payload.account ?? entry.account
            let decoded: PayloadDecoder.Decoded
            do {
                decoded = try options.decoder(store: target).decode(entry.raw[...])
            } catch {
                let reason = (error as? IngestError)?.fieldAndReason ?? "\(error)"
                throw CLIFailure(exitCode: CLIFailure.rejected, "quarantine #\(id) is still rejected: \(reason)")
            }
            // The format it was read as this time (`auto` resolves to one).
            let applied = try target.append(contentsOf: decoded.events.map { ($0, decoded.source) })
            try target.quarantine.remove(id: id)
            Terminal.note("quarantine #\(id) appended as seq \(applied.map { String($0.seq) }.joined(separator: ", ")) and removed from the quarantine")
        }
    }

    static func find(_ id: UInt64, in store: Store) throws -> QuarantinedPayload {
        guard let entry = try store.quarantine.all().first(where: { $0.id == id }) else {
            throw CLIFailure(exitCode: CLIFailure.usage, "no quarantined payload #\(id) in \(store.path)")
        }
        return entry
    }

    static func json(_ entry: QuarantinedPayload, withRaw: Bool) -> String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("id"); writer.int(entry.id)
        writer.key("received"); writer.string(Formatting.timestamp(milliseconds: entry.receivedAt))
        writer.key("format"); writer.string(entry.format)
        writer.key("input"); writer.string(entry.input)
        writer.key("line"); writer.int(entry.line)
        writer.key("reason"); writer.string(entry.reason)
        if let account = entry.account { writer.key("account"); writer.string(account) }
        writer.key("size"); writer.int(entry.raw.count)
        if withRaw {
            if let text = String(validating: entry.raw, as: UTF8.self) {
                writer.key("raw"); writer.string(text)
            } else {
                writer.key("rawBase64"); writer.string(Data(entry.raw).base64EncodedString())
            }
        }
        writer.objectEnd()
        return writer.string
    }
}
