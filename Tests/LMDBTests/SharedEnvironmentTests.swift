import CLMDB
import Foundation
import Synchronization
import Testing

@testable import LMDB

#if canImport(Glibc)
import Glibc
import HeraldTestSupport
#endif

/// Environments opened on one directory more than once in one process share one `MDB_env`
/// (lmdb.h: "Do not have open an LMDB database twice in the same process at the same time"),
/// with real LMDB in temporary directories.
@Suite("Environments shared within a process")
struct SharedEnvironmentTests {
    @Test("every spelling of a directory, and a symbolic link to it, opens the same environment")
    func spellings() throws {
        let dir = TemporaryDirectory()
        let link = dir.path + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.path)
        defer { try? FileManager.default.removeItem(atPath: link) }
        var first: Environment? = try Environment(path: dir.path, options: options())
        let others = try [dir.path + "/", dir.path + "/.", link].map { try Environment(path: $0, options: options(readOnly: true)) }
        #expect(others.allSatisfy { $0.shared === first!.shared })
        #expect(EnvironmentRegistry.openers(of: dir.path) == 4)
        #expect(others.map(\.path) == [dir.path + "/", dir.path + "/.", link])
        try first!.put("db", "k", "v")
        #expect(try others.map { try $0.get("db", "k") } == ["v", "v", "v"])
        first = nil
        #expect(EnvironmentRegistry.openers(of: dir.path) == 3)
        #expect(try others[2].get("db", "k") == "v")
        withExtendedLifetime(others) {}
    }

    @Test("releasing one opener leaves the others whole: their transactions, reader slots and locks")
    func releaseKeepsOthers() throws {
        let dir = TemporaryDirectory()
        let writer = try Environment(path: dir.path, options: options())
        try writer.put("db", "a", "1")
        do {
            let reader = try Environment(path: dir.path, options: options(readOnly: true))
            #expect(reader.shared === writer.shared)
            #expect(try reader.get("db", "a") == "1")
            try writer.put("db", "b", "2")
            #expect(try reader.get("db", "b") == "2")
        }
        #expect(EnvironmentRegistry.openers(of: dir.path) == 1)
        try writer.put("db", "c", "3")
        #expect(try writer.get("db", "c") == "3")
        // Another process still finds this process's reader slot while it reads.
        let pids = try writer.read { _ in try readerPids(dir.path) }
        #expect(pids.contains(String(getpid())), "reader table seen by mdb_stat: \(pids)")
    }

    @Test("a read-only first open lets a writable open share: LMDB holds the files open for writing")
    func readOnlyFirst() throws {
        let dir = TemporaryDirectory()
        do { try Environment(path: dir.path, options: options()).put("db", "a", "1") }
        let reader = try Environment(path: dir.path, options: options(readOnly: true))
        #expect(!reader.shared.isReadOnly && !reader.shared.isUnlocked)
        #expect(reader.options.readOnly)
        do {
            let writer = try Environment(path: dir.path, options: options())
            #expect(writer.shared === reader.shared)
            try writer.put("db", "b", "2")
        }
        #expect(try reader.get("db", "b") == "2")
        let pids = try reader.read { _ in try readerPids(dir.path) }
        #expect(pids.contains(String(getpid())), "reader table seen by mdb_stat: \(pids)")
        // A read-only opener has nothing to flush, as with an MDB_RDONLY environment.
        #expect(throws: LMDBError(code: EACCES, operation: "mdb_env_sync", path: dir.path)) { try reader.sync() }
    }

    @Test("a read-only open of a directory without data.mdb still fails, and creates no data file")
    func readOnlyMissing() {
        let dir = TemporaryDirectory()
        #expect(throws: LMDBError.self) { _ = try Environment(path: dir.path, options: options(readOnly: true)) }
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data.mdb"))
        #expect(EnvironmentRegistry.openers(of: dir.path) == 0)
    }

    @Test("a writable open while LMDB holds the environment MDB_RDONLY fails, naming the path; it works once that is released")
    func writableBesideReadOnlyEnvironment() throws {
        let dir = TemporaryDirectory()
        do { try Environment(path: dir.path, options: options()).put("db", "a", "1") }
        var readOnly = options(readOnly: true)
        readOnly.forcesReadOnlyEnvironment = true
        var reader: Environment? = try Environment(path: dir.path, options: readOnly)
        #expect(reader!.shared.isReadOnly)
        #expect(reader!.shared.flags & UInt32(MDB_RDONLY) != 0)
        // Read-only opens still share it.
        var second: Environment? = try Environment(path: dir.path, options: options(readOnly: true))
        #expect(second!.shared === reader!.shared)
        for path in [dir.path, dir.path + "/."] {
            #expect {
                _ = try Environment(path: path, options: options())
            } throws: { error in
                guard let error = error as? LMDBError else { return false }
                return error.code == LMDBError.incompatibleOpen && error.path == path
                    && "\(error)".contains(path) && "\(error)".contains("open read-only elsewhere in this process")
            }
        }
        #expect(EnvironmentRegistry.openers(of: dir.path) == 2)
        #expect(try second!.get("db", "a") == "1")
        reader = nil
        #expect(try second!.get("db", "a") == "1")
        second = nil
        // Released: the writable open opens it afresh.
        let writer = try Environment(path: dir.path, options: options())
        try writer.put("db", "b", "2")
        #expect(!writer.shared.isReadOnly)
    }

    @Test("an open asking for more named databases than the open environment has fails")
    func moreDatabases() throws {
        let dir = TemporaryDirectory()
        let first = try Environment(path: dir.path, options: options(maxDatabases: 4))
        #expect {
            _ = try Environment(path: dir.path, options: options(readOnly: true, maxDatabases: 8))
        } throws: { error in
            (error as? LMDBError)?.code == LMDBError.incompatibleOpen && "\(error)".contains("room for 4 named databases")
        }
        let fewer = try Environment(path: dir.path, options: options(maxDatabases: 2))
        #expect(fewer.shared === first.shared)
    }

    @Test("durability is the first writer's, then only ever strengthened by later writers")
    func durability() throws {
        let dir = TemporaryDirectory()
        do { try Environment(path: dir.path, options: options()).put("db", "a", "1") }
        let syncFlags = UInt32(MDB_NOSYNC | MDB_NOMETASYNC)
        // A reader's durability counts for nothing: the first writer's is taken as it is.
        let reader = try Environment(path: dir.path, options: options(readOnly: true, durability: .full))
        #expect(reader.shared.flags & syncFlags == 0)
        let fast = try Environment(path: dir.path, options: options(durability: .noSync))
        #expect(reader.shared.flags & syncFlags == UInt32(MDB_NOSYNC))
        let middle = try Environment(path: dir.path, options: options(durability: .noMetaSync))
        #expect(reader.shared.flags & syncFlags == UInt32(MDB_NOMETASYNC))
        let careful = try Environment(path: dir.path, options: options(durability: .full))
        #expect(reader.shared.flags & syncFlags == 0)
        // Never weakened, even once the writer that asked for it is released.
        let weak = try Environment(path: dir.path, options: options(durability: .noSync))
        withExtendedLifetime(careful) {}
        #expect(reader.shared.flags & syncFlags == 0)
        try fast.put("db", "b", "2")
        try weak.put("db", "c", "3")
        #expect(try middle.get("db", "c") == "3")
    }

    @Test("a writable open that must change the environment throws, not waits, when its thread is inside a transaction of it")
    func changeInsideTransaction() throws {
        let dir = TemporaryDirectory()
        do { try Environment(path: dir.path, options: options()).put("db", "a", "1") }
        let reader = try Environment(path: dir.path, options: options(readOnly: true, durability: .full))
        try reader.read { _ in
            // Same durability: nothing to change, so it may open here.
            _ = try Environment(path: dir.path, options: options(durability: .full))
            #expect {
                _ = try Environment(path: dir.path, options: options(durability: .full, mapSize: 8 << 20))
            } throws: { error in
                (error as? LMDBError)?.code == LMDBError.incompatibleOpen && "\(error)".contains("inside a transaction")
            }
        }
        // The failed open gave its share back.
        #expect(EnvironmentRegistry.openers(of: dir.path) == 1)
        let writer = try Environment(path: dir.path, options: options(durability: .full, mapSize: 8 << 20))
        #expect(writer.mapSize == 8 << 20)
    }

    @Test("a writable open asking for a larger map grows it; a read-only one takes it as it is")
    func mapSize() throws {
        let dir = TemporaryDirectory()
        let first = try Environment(path: dir.path, options: options(mapSize: 1 << 20))
        #expect(first.mapSize == 1 << 20)
        let reader = try Environment(path: dir.path, options: options(readOnly: true, mapSize: 8 << 20))
        #expect(reader.mapSize == 1 << 20)
        let second = try Environment(path: dir.path, options: options(mapSize: 4 << 20))
        #expect(first.mapSize == 4 << 20 && second.mapSize == 4 << 20)
        let smaller = try Environment(path: dir.path, options: options(mapSize: 1 << 20))
        #expect(smaller.mapSize == 4 << 20)
    }

    @Test("map growth excludes the transactions of every opener: a write from inside another opener's read throws MDB_MAP_FULL")
    func growthAcrossOpeners() throws {
        let dir = TemporaryDirectory()
        let writer = try Environment(path: dir.path, options: options(mapSize: 64 << 10))
        let reader = try Environment(path: dir.path, options: options(readOnly: true))
        let database = try writer.openDatabase("db", create: true)!
        let big = [UInt8](repeating: 7, count: 256 << 10)
        #expect {
            try reader.read { _ in
                try writer.write { txn in try txn.put(database, key: [1], value: big) }
            }
        } throws: { error in
            (error as? LMDBError)?.code == LMDBError.mapFull
        }
        // Outside any transaction the map grows, while the other opener reads on other threads.
        let stop = Atomic(false)
        let readers = (0..<2).map { _ in
            Thread {
                while !stop.load(ordering: .relaxed) { _ = try! reader.get("db", "1") }
            }
        }
        readers.forEach { $0.start() }
        for index in 0..<8 {
            try writer.write { txn in try txn.put(database, key: [UInt8(index)], value: big) }
        }
        stop.store(true, ordering: .relaxed)
        #expect(writer.mapSize > 2 << 20)
        #expect(try reader.read { txn in try txn.count(database) } == 8)
    }

    @Test("after data.mdb is replaced under an open environment, a new open gets the new file; the old one stays usable")
    func replacedDataFile() throws {
        let dir = TemporaryDirectory()
        let copy = TemporaryDirectory()
        var old: Environment? = try Environment(path: dir.path, options: options())
        try old!.put("db", "a", "old")
        try old!.copy(to: copy.path, compact: true)
        try old!.put("db", "b", "old only")
        // As compaction swaps in its compacted copy: rename over data.mdb, remove lock.mdb.
        #expect(rename(copy.path + "/data.mdb", dir.path + "/data.mdb") == 0)
        #expect(unlink(dir.path + "/lock.mdb") == 0)
        let new = try Environment(path: dir.path, options: options())
        #expect(new.shared !== old!.shared)
        #expect(try new.get("db", "b") == nil)
        try new.put("db", "c", "new")
        #expect(try old!.get("db", "c") == nil)
        #expect(try old!.get("db", "b") == "old only")
        #expect(EnvironmentRegistry.openers(of: dir.path) == 1)
        old = nil
        // Releasing the old one touched neither the new one nor the registry's entry.
        #expect(EnvironmentRegistry.openers(of: dir.path) == 1)
        try new.put("db", "d", "new")
        let reader = try Environment(path: dir.path, options: options(readOnly: true))
        #expect(reader.shared === new.shared)
        #expect(try reader.get("db", "d") == "new")
        let pids = try new.read { _ in try readerPids(dir.path) }
        #expect(pids.contains(String(getpid())), "reader table seen by mdb_stat: \(pids)")
    }

    @Test("an open on another thread waits while withOpensHeld replaces the files, and gets the new data file")
    func opensHeldDuringSwap() throws {
        let dir = TemporaryDirectory()
        let copy = TemporaryDirectory()
        let path = dir.path
        var old: Environment? = try Environment(path: path, options: options())
        try old!.put("db", "a", "copied")
        try old!.copy(to: copy.path, compact: true)
        try old!.put("db", "b", "old only")
        let midSwap = Atomic(false)
        let entered = DispatchSemaphore(value: 0)
        let openedMidSwap = Atomic(true)
        let sawOldFile = Atomic(true)
        let opener = DispatchGroup()
        opener.enter()
        Thread {
            defer { opener.leave() }
            entered.wait()
            guard let environment = try? Environment(path: path, options: options(readOnly: true)) else { return }
            openedMidSwap.store(midSwap.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
            sawOldFile.store((try? environment.get("db", "b")) != nil, ordering: .sequentiallyConsistent)
        }.start()
        try Environment.withOpensHeld {
            midSwap.store(true, ordering: .sequentiallyConsistent)
            #expect(rename(copy.path + "/data.mdb", path + "/data.mdb") == 0)
            entered.signal()
            // Time for the other thread's open to run, had it not to wait.
            Thread.sleep(forTimeInterval: 0.2)
            #expect(unlink(path + "/lock.mdb") == 0)
            midSwap.store(false, ordering: .sequentiallyConsistent)
        }
        opener.wait()
        let (during, oldFile) = (openedMidSwap.load(ordering: .sequentiallyConsistent), sawOldFile.load(ordering: .sequentiallyConsistent))
        #expect(!during)
        #expect(!oldFile)
        #expect(try old!.get("db", "b") == "old only")
        old = nil
    }

    @Test("opens and releases racing on many threads share one environment and never close it under a user")
    func racingOpens() throws {
        let dir = TemporaryDirectory()
        let path = dir.path
        let anchor = try Environment(path: path, options: options())
        try anchor.put("db", "key", "value")
        let failures = Atomic(0)
        let done = DispatchGroup()
        for index in 0..<4 {
            done.enter()
            Thread {
                defer { done.leave() }
                for round in 0..<100 {
                    do {
                        // Writable on odd rounds for even threads, on even rounds for odd ones.
                        let readOnly = (index + round) % 2 == 0
                        let environment = try Environment(path: path, options: options(readOnly: readOnly))
                        if environment.shared !== anchor.shared { failures.add(1, ordering: .relaxed) }
                        if try environment.get("db", "key") != "value" { failures.add(1, ordering: .relaxed) }
                        if !readOnly { try environment.put("db", "t\(index)", "\(round)") }
                    } catch {
                        failures.add(1, ordering: .relaxed)
                    }
                }
            }.start()
        }
        done.wait()
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(EnvironmentRegistry.openers(of: dir.path) == 1)
        #expect(try (0..<4).map { try anchor.get("db", "t\($0)") } == (0..<4).map { $0 % 2 == 0 ? "99" : "98" })
    }

    @Test("reading the environment's facts while another thread grows the map never reads unmapped memory")
    func infoWhileGrowing() throws {
        // mdb_env_info reads the meta pages inside the map, which mdb_env_set_mapsize unmaps:
        // unlocked, this crashed a populate of 10 M events (SIGSEGV in hasRoomToApplyAhead).
        let dir = TemporaryDirectory()
        let environment = try Environment(path: dir.path, options: options(mapSize: 1 << 20))
        let done = Atomic<Bool>(false)
        let reads = Atomic<Int>(0)
        let reader = Thread {
            while !done.load(ordering: .acquiring) {
                let info = environment.info()
                precondition(info.usedBytes <= info.mapSize)
                reads.add(1, ordering: .relaxed)
            }
        }
        reader.start()
        defer { done.store(true, ordering: .releasing) }
        let value = [UInt8](repeating: 7, count: 48 << 10)
        for i in 0..<600 {
            try environment.write { txn in
                let db = try #require(try txn.openDatabase("db", create: true))
                try txn.put(db, key: Array("k\(i)".utf8), value: value)
            }
        }
        done.store(true, ordering: .releasing)
        while !reader.isFinished { usleep(1_000) }
        #expect(environment.mapSize > 16 << 20)
        #expect(reads.load(ordering: .relaxed) > 0)
    }

    @Test("a clean page walk is remembered for the unchanged file only: any write, or damage, walks again")
    func walkVerdicts() throws {
        let dir = TemporaryDirectory()
        let verdicts = dir.child("verdicts")
        try FileManager.default.createDirectory(atPath: dir.child("env"), withIntermediateDirectories: true)
        do {
            let environment = try Environment(path: dir.child("env"), options: options())
            try environment.write { txn in
                let db = try #require(try txn.openDatabase("db", create: true))
                for i in 0..<200 { try txn.put(db, key: Array("k\(i)".utf8), value: Array(repeating: 1, count: 100)) }
            }
        }
        var reading = options(readOnly: true)
        reading.pageCheck = .always
        reading.walkVerdicts = verdicts
        func open() throws -> Int {
            let before = WalkVerdicts.walks.load(ordering: .relaxed)
            _ = try Environment(path: dir.child("env"), options: reading)
            return WalkVerdicts.walks.load(ordering: .relaxed) - before
        }
        // A file changed in the last two seconds is walked and not remembered.
        #expect(try open() == 1)
        #expect(try open() == 1)
        sleep(3)
        #expect(try open() == 1)  // walked, and now remembered
        #expect(try open() == 0)
        // Damage: a byte of the last page flipped (the status-change time moves): walked again, and refused.
        let file = dir.child("env") + "/data.mdb"
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 4096 + 20)
        try handle.write(contentsOf: Data([0xFF, 0xFF, 0xFF, 0xFF]))
        try handle.close()
        sleep(3)
        let before = WalkVerdicts.walks.load(ordering: .relaxed)
        #expect(throws: LMDBError.self) { _ = try Environment(path: dir.child("env"), options: reading) }
        #expect(WalkVerdicts.walks.load(ordering: .relaxed) == before + 1)
    }
}
