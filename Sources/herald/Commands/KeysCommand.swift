import ArgumentParser
import HeraldEvents
import Foundation
import HeraldIngest
import HeraldStore

/// `herald keys`: Telegram auth keys kept in the store for encrypted pushes.
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Manage Telegram auth keys kept in the store for decrypting encrypted pushes.",
        discussion: """
            Examples:
              herald keys add --account tg:14124122 uBa5yu01a-nJ...  (256 B, base64url)
              herald keys list
              herald keys remove 2886285856283441188
            """,
        subcommands: [Add.self, List.self, Remove.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a Telegram auth key.",
            usage: "herald keys add [--store <DIR>] [--account <account>] [--rebind] (<BASE64URL> | --key-file <FILE>)")
        @OptionGroup var store: StoreOptions
        @Flag(name: .long, help: "Move a key already bound to another account to this one.") var rebind = false
        @Flag(name: .long, help: "Print {\"id\":…,\"account\":…,\"added\":true|false} on stdout.") var json = false
        @Option(name: .long, help: "The account the key belongs to: pushes it decrypts are that account's (default: any account).") var account: String = ""
        /// The key as typed: one in 64 starts with `-` (base64url of its first byte), which a
        /// plain argument would take for an option (or, with an `h` in it, for `-h`).
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The 256-byte key, base64url.", valueName: "BASE64URL"))
        var typed: [String] = []

        @Option(name: .long, help: ArgumentHelp("Read the key from this file, or - for standard input, instead of the command line.", valueName: "FILE"))
        var keyFile: String?

        /// The key, base64url (after `--`, if one was given), or the key file's one line.
        func key() throws -> String {
            guard let keyFile else { return typed.last! }
            let keys = try KeyFile.keys(from: keyFile, option: "--key-file")
            guard keys.count == 1 else { throw ValidationError("--key-file \(keyFile): expected one key, found \(keys.count)") }
            return keys[0]
        }

        func validate() throws {
            if keyFile != nil {
                guard typed.isEmpty else { throw ValidationError("give the key either as an argument or with --key-file, not both") }
                return
            }
            guard typed.count == 1 || (typed.count == 2 && typed[0] == "--") else {
                throw ValidationError("expected one key, base64url; got \(typed.isEmpty ? "none" : "\(typed.count) arguments")")
            }
        }

        func run() throws {
            let parsed: TelegramKey
            let key = try key()
            do { parsed = try TelegramKey(base64url: key) } catch {
                throw CLIFailure(exitCode: CLIFailure.usage, "key: \(error)")
            }
            let target = try store.openForWriting()
            let added: Bool
            do {
                added = try target.keyring.add(StoredKey(id: parsed.keyId, account: account, bytes: parsed.bytes), rebind: rebind)
            } catch let error as StoreError where error.code == .keyBound {
                let bound = error.account ?? ""
                throw CLIFailure(
                    exitCode: CLIFailure.usage,
                    "Telegram key \(parsed.keyId) is bound to \(Self.describe(bound)) in \(store.path); "
                        + "pass --rebind to move it to \(Self.describe(account)) (its encrypted pushes would then be that account's)")
            }
            guard added else {
                if json { Terminal.line(Self.json(id: parsed.keyId, account: account, added: false)) }
                Terminal.note("Telegram key \(parsed.keyId) is already bound to \(Self.describe(account)): nothing to do")
                return
            }
            if json { Terminal.line(Self.json(id: parsed.keyId, account: account, added: true)) }
            Terminal.note("added Telegram key \(parsed.keyId)" + (account.isEmpty ? "" : " for \(account)"))
        }

        static func json(id: Int64, account: String, added: Bool) -> String {
            var writer = JSONWriter()
            writer.objectStart()
            writer.key("id"); writer.int(id)
            writer.key("account"); writer.string(account)
            writer.key("added"); writer.bool(added)
            writer.objectEnd()
            return writer.string
        }

        static func describe(_ account: String) -> String {
            account.isEmpty ? "any account" : "account '\(account)'"
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List stored keys (ids only, never the key bytes).")
        @OptionGroup var store: StoreOptions
        @Flag(name: .long, help: "Print one JSON object per key: {\"id\":…,\"account\":…,\"bytes\":…}.") var json = false

        func run() throws {
            let keys = try store.openForReading { $0.replayOnOpen = false }.keyring.all()
            if json {
                for key in keys {
                    var writer = JSONWriter()
                    writer.objectStart()
                    writer.key("id"); writer.int(key.id)
                    writer.key("account"); writer.string(key.account)
                    writer.key("bytes"); writer.int(key.bytes.count)
                    writer.objectEnd()
                    Terminal.line(writer.string)
                }
                return
            }
            guard !keys.isEmpty else { Terminal.line("no keys"); return }
            var table = Table("key id", "account", "bytes")
            for key in keys { table.add("\(key.id)", key.account.isEmpty ? "(any)" : key.account, "\(key.bytes.count)") }
            Terminal.line(table.rendered)
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a stored key.", usage: "herald keys remove [--store <DIR>] <ID>")
        @OptionGroup var store: StoreOptions
        /// The id as typed: half of all key ids are negative, and a plain `Int64` argument
        /// would take `-8523…` for an unknown option.
        @Flag(name: .long, help: "Print {\"removed\":ID} on stdout.") var json = false
        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The key id, as `herald keys list` prints it.", valueName: "ID"))
        var typed: [String] = []

        /// The key id.
        var id: Int64 { Int64(typed[0])! }

        func validate() throws {
            guard typed.count == 1, Int64(typed[0]) != nil else {
                throw ValidationError("expected one key id, an integer as `herald keys list` prints it; got \(typed.isEmpty ? "none" : typed.joined(separator: " "))")
            }
        }

        func run() throws {
            // Rewrites the data file, so that no freed page keeps a copy of the key.
            guard try StoreMaintenance(path: store.path).removeKey(id: id) else {
                throw CLIFailure(exitCode: CLIFailure.usage, "no key \(id) in \(store.path)")
            }
            if json { Terminal.line(#"{"removed":\#(id)}"#) }
            Terminal.note("removed key \(id)")
        }
    }
}
