import Foundation
import LMDB
import HeraldTestSupport

/// The pids in `path/lock.mdb`'s reader table, as another process (`mdb_stat -r`) reads it.
/// Its exit status is not checked: `mdb_stat -r` exits 1 even when it lists the table.
func readerPids(_ path: String) throws -> [String] {
    let stat = try run("/usr/bin/mdb_stat", ["-r", path])
    // After the header lines, each live reader is "pid thread txnid".
    return stat.output.split(separator: "\n").compactMap { line in
        let fields = line.split(separator: " ")
        return fields.count == 3 && fields[0].allSatisfy(\.isNumber) ? String(fields[0]) : nil
    }
}

/// Options with `readOnly` and the other fields given.
func options(
    readOnly: Bool = false, durability: Environment.Durability = .noSync, mapSize: Int = 1 << 20,
    maxDatabases: UInt32 = 4
) -> Environment.Options {
    var options = Environment.Options()
    options.readOnly = readOnly
    options.durability = durability
    options.mapSize = mapSize
    options.maxDatabases = maxDatabases
    return options
}

extension Environment {
    /// Stores `value` under `key` in database `name` (created), in one commit.
    func put(_ name: String, _ key: String, _ value: String) throws {
        let database = try openDatabase(name, create: true)!
        try write { txn in try txn.put(database, key: Array(key.utf8), value: Array(value.utf8)) }
    }

    /// The value under `key` in database `name`, or `nil`.
    func get(_ name: String, _ key: String) throws -> String? {
        guard let database = try openDatabase(name) else { return nil }
        return try read { txn in try txn.get(database, key: Array(key.utf8)).map { String(decoding: $0, as: UTF8.self) } }
    }
}
