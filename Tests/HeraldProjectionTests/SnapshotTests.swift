import HeraldEvents
@testable import HeraldProjection
import Testing
import HeraldTestSupport

/// Snapshots restore equal projections that continue identically, and damaged bytes are
/// rejected with an error, never a crash.
@Suite struct SnapshotTests {
    static func workload(seed: UInt64, count: Int) -> [Event] {
        var profile = WorkloadGenerator.Profile()
        profile.accounts = 1 + Int(seed % 3)
        profile.chatsPerAccount = 3 + Int(seed % 5)
        var generator = WorkloadGenerator(seed: seed &* 7919, profile: profile)
        return (0..<count).map { _ in generator.next() }
    }

    @Test(arguments: Array(UInt64(1)...10))
    func roundTripAtCutPoints(seed: UInt64) throws {
        let events = Self.workload(seed: seed, count: 1_200)
        var projection = Projection()
        var random = SplitMix64(seed: seed)
        for (index, event) in events.enumerated() {
            _ = projection.apply(event, seq: UInt64(index + 1))
            guard index % 97 == 0 || random.chance(2) else { continue }
            let bytes = projection.snapshot()
            var restored = try Projection(snapshot: bytes)
            #expect(restored == projection, "seed \(seed): restored state differs after seq \(index + 1)")
            #expect(restored.snapshot() == bytes, "seed \(seed): snapshot not deterministic")
            #expect(restored.stateJSON() == projection.stateJSON())
            // Continuing from the restored state gives the same updates.
            var original = projection
            for (offset, next) in events[(index + 1)...].prefix(60).enumerated() {
                let seq = UInt64(index + 2 + offset)
                let expected = original.apply(next, seq: seq)
                let actual = restored.apply(next, seq: seq)
                #expect(actual == expected, "seed \(seed): diverged at seq \(seq)")
                if actual != expected { return }
            }
            #expect(restored == original)
        }
    }

    @Test func emptyProjectionRoundTrips() throws {
        let empty = Projection()
        #expect(try Projection(snapshot: empty.snapshot()) == empty)
    }

    @Test func configurationAppliesOnRestore() throws {
        var projection = Projection()
        for (index, event) in Self.workload(seed: 3, count: 400).enumerated() { _ = projection.apply(event, seq: UInt64(index + 1)) }
        let configuration = Projection.Configuration(groupCountMaxOverride: 1, groupSizeMaxOverride: 1)
        let restored = try Projection(snapshot: projection.snapshot(), configuration: configuration)
        restored.checkAllInvariants()
        for name in restored.accounts {
            #expect(restored.activeNotifications(account: name).count <= 1)
            #expect(restored.activeNotifications(account: name).allSatisfy { $0.notifications.count == 1 })
        }
    }

    static func sample() -> [UInt8] {
        var projection = Projection()
        for (index, event) in workload(seed: 5, count: 300).enumerated() { _ = projection.apply(event, seq: UInt64(index + 1)) }
        return projection.snapshot()
    }

    @Test func truncatedSnapshotsAreRejected() {
        let bytes = Self.sample()
        for length in 0..<bytes.count {
            #expect(throws: SnapshotError.self) { try Projection(snapshot: Array(bytes[0..<length])) }
        }
    }

    @Test func flippedBytesAreRejected() {
        let bytes = Self.sample()
        var random = SplitMix64(seed: 42)
        for _ in 0..<2_000 {
            var damaged = bytes
            let index = random.below(bytes.count)
            damaged[index] ^= UInt8(1 + random.below(255))
            #expect(throws: SnapshotError.self) { try Projection(snapshot: damaged) }
        }
    }

    @Test func unknownVersionIsRejected() {
        var bytes = Self.sample()
        bytes[3] = 99
        #expect(throws: SnapshotError(.unsupportedVersion(99), offset: 0)) { try Projection(snapshot: bytes) }
    }

    /// Damage that keeps the checksum right (as if written by a buggy writer) must still
    /// either be rejected or give a projection that keeps its invariants; never a crash.
    @Test func structurallyDamagedSnapshotsNeverCrash() {
        let bytes = Self.sample()
        let events = Self.workload(seed: 77, count: 40)
        var random = SplitMix64(seed: 9)
        var rejected = 0
        for _ in 0..<2_500 {
            var body = Array(bytes.dropLast(8))
            for _ in 0..<(1 + random.below(3)) {
                let index = 4 + random.below(body.count - 4)
                switch random.below(4) {
                case 0: body[index] ^= UInt8(1 << random.below(8))
                case 1: body[index] = UInt8(random.below(256))
                case 2: body.insert(UInt8(random.below(3)), at: index)  // small lengths and counts
                default: body.remove(at: index)
                }
            }
            var writer = ByteWriter()
            writer.append(contentsOf: body)
            writer.uint64BigEndian(SnapshotChecksum.fnv1a64(body))
            do {
                var projection = try Projection(snapshot: writer.bytes)
                projection.checkAllInvariants()
                for (offset, event) in events.enumerated() { _ = projection.apply(event, seq: projection.seq &+ UInt64(offset) + 1) }
                projection.checkAllInvariants()
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 0)
    }

    /// A hand-written payload: one account with a group but no chats.
    @Test func groupWithoutChatsIsRejected() {
        var account = ByteWriter()
        // Options, next notification id, clock, no deletions, no chats, 1 group (type 0) of chat 0.
        for value: UInt64 in [10, 10, 1, 0, 0, 0, 1, 0, 0] { account.varint(value) }
        var writer = ByteWriter()
        writer.uint32BigEndian(Projection.snapshotFormatVersion)
        writer.varint(1)  // seq
        writer.varint(1)  // accounts
        writer.string("a")
        writer.varint(UInt64(account.bytes.count))
        writer.append(contentsOf: account.bytes)
        writer.uint64BigEndian(SnapshotChecksum.fnv1a64(writer.bytes))
        #expect(throws: SnapshotError.self) { try Projection(snapshot: writer.bytes) }
    }

    @Test("snapshots of formats 1 and 2 (before SEMANTICS 1.2) are refused by their version, never misread", arguments: Array(UInt64(1)...2))
    func olderFormatsAreRefused(seed: UInt64) throws {
        var projection = Projection()
        for (index, event) in Self.workload(seed: seed, count: 800).enumerated() { _ = projection.apply(event, seq: UInt64(index + 1)) }
        #expect(try Projection(snapshot: projection.snapshot()) == projection)
        for version: UInt32 in [1, 2] {
            do {
                _ = try Projection(snapshot: projection.snapshot(formatVersion: version))
                Issue.record("a version \(version) snapshot was read")
            } catch {
                #expect(error.reason == .unsupportedVersion(version) && error.offset == 0)
                #expect("\(error)".contains("before SEMANTICS 1.2"))
            }
        }
    }

    /// Three accounts with long bodies: a payload of several megabytes.
    static func large() -> Projection {
        var projection = Projection()
        var seq: UInt64 = 0
        for account in ["a", "b", "c"] {
            for id in 1...120 {
                seq += 1
                let body = String(repeating: "\(account)\(id) ", count: 3_200 / (2 + String(id).count))
                _ = projection.apply(
                    Event(account: account, .notify(.init(chat: "chat:\(id % 7)", kind: .message, id: Int64(id), date: Int64(id), body: body))),
                    seq: seq)
            }
        }
        return projection
    }

    @Test("large snapshots restore into the same projection, their checksum checked or not")
    func largeRestore() throws {
        let projection = Self.large()
        let bytes = projection.snapshot()
        #expect(try Projection(snapshot: bytes) == projection)
        let verified = bytes.withUnsafeBytes { buffer in
            Result { () throws(SnapshotError) in try Projection(snapshot: buffer, configuration: .init(), checksumVerified: true) }
        }
        #expect(try verified.get() == projection)
    }

    @Test("an account whose length is wrong is rejected, with an offset inside the snapshot")
    func wrongAccountLength() throws {
        let bytes = Self.large().snapshot()
        // The layout: version, seq, count, then per account its name ("a", "b", "c": two
        // bytes each) and the length of its encoding.
        // (The reader borrows the bytes only inside `withUnsafeBytes`.)
        let lengthOffsets = try bytes.dropLast(8).withUnsafeBytes { buffer throws in
            var reader = ByteReader(buffer)
            _ = try reader.uint32BigEndian()
            _ = try reader.varint()
            let count = try reader.varint()
            #expect(count == 3)
            var offsets: [Int] = []
            for _ in 0..<3 {
                try reader.skipString()
                offsets.append(reader.offset)
                try reader.skip(Int(try reader.varint()))
            }
            return offsets
        }
        for offset in [lengthOffsets[0], lengthOffsets[2]] {
            var damaged = Array(bytes.dropLast(8))
            // The first byte of the length, one less: the account's encoding runs past its
            // declared end.
            #expect(damaged[offset] & 0x7F != 0, "the test needs a length whose low group is not 0")
            damaged[offset] &-= 1
            var writer = ByteWriter()
            writer.append(contentsOf: damaged)
            writer.uint64BigEndian(SnapshotChecksum.fnv1a64(damaged))
            do {
                _ = try Projection(snapshot: writer.bytes)
                Issue.record("a wrong length at byte \(offset) was accepted")
            } catch {
                #expect(error.offset > offset && error.offset < bytes.count, "\(error)")
            }
        }
    }
}

/// A snapshot of format 2 (SEMANTICS 1.1), hand-written as an earlier build wrote it, read
/// where it starts a store's kept history and carried into 1.2.
@Suite struct FormerSnapshotTests {
    /// One account: chat "c" muted, message 5 unread without a notification, mention 7 unread
    /// with notification 2 in the chat's mentions group (dated 100).
    static func formatTwo() -> [UInt8] {
        var account = ByteWriter()
        for value: UInt64 in [10, 10, 3, 0, 1] { account.varint(value) }  // options, next id, no deletions, one chat
        account.string("c")
        account.byte(1)  // muted
        account.varint(0)  // readMaxId
        account.varint(0)  // pinned notification
        account.varint(2)  // unread messages
        account.varint(5); account.varint(0 << 1 | 0)  // message 5, no notification
        account.varint(2); account.varint(2 << 1 | 1)  // message 7, notification 2, a mention
        account.varint(0)  // deleted in the chat
        account.varint(0)  // objects
        account.varint(1)  // groups
        account.byte(1); account.varint(0)  // mentions group of chat 0
        account.varint(1)  // active
        account.varint(2); account.byte(1); account.varint(7); account.signedVarint(100); account.byte(0)
        account.varint(0)  // dismissed
        var writer = ByteWriter()
        writer.uint32BigEndian(2)
        writer.varint(10)  // seq
        writer.varint(1)
        writer.string("a")
        writer.varint(UInt64(account.bytes.count))
        writer.append(contentsOf: account.bytes)
        writer.uint64BigEndian(SnapshotChecksum.fnv1a64(writer.bytes))
        return writer.bytes
    }

    @Test("a format 2 snapshot is refused, unless read as the start of the kept history, then carried into 1.2")
    func carriedInto12() throws {
        let bytes = Self.formatTwo()
        #expect(throws: SnapshotError.self) { try Projection(snapshot: bytes) }
        var projection = try bytes.withUnsafeBytes { buffer in
            try Projection(snapshot: buffer, configuration: .init(), checksumVerified: false, readingFormerFormats: true)
        }
        projection.checkAllInvariants()
        let account = try #require(projection.account("a"))
        #expect(account.clock == 100)
        #expect(account.unread == UnreadCounts(unread: 2, badge: 0, unreadMentions: 1))
        #expect(account.chats.first?.mutedUntil == Event.ChatSettings.mutedForever && account.chats.first?.muted == true)
        #expect(account.groups.map(\.totalCount) == [1] && account.groups.first?.notifications.map(\.id) == [2])
        // Under 1.2 a history read leaves the mention shown and unread as a mention.
        _ = projection.apply(Event(account: "a", .read(chat: "c", maxId: 10)), seq: 11)
        projection.checkAllInvariants()
        let after = try #require(projection.account("a"))
        #expect(after.unread == UnreadCounts(unread: 0, badge: 0, unreadMentions: 1))
        #expect(after.groups.first?.notifications.map(\.id) == [2])
        // Its own snapshot is format 3 and restores it.
        #expect(try Projection(snapshot: projection.snapshot()) == projection)
    }
}

@Suite struct LargestIdTests {
    @Test("ids and marks at Int64.max: reads, readAll and cleared histories forget what they pass, and snapshots restore")
    func largestIds() throws {
        var projection = Projection()
        let events: [Event] = [
            Event(account: "a", .notify(.init(chat: "c", kind: .message, id: 5, date: 100))),
            Event(account: "a", .notify(.init(chat: "c", kind: .mention, id: .max, date: 101))),
            Event(account: "a", .read(chat: "c", maxId: .max)),
            Event(account: "a", .readAll(chat: "c")),
            Event(account: "a", .notify(.init(chat: "d", kind: .mention, id: .max, date: 102))),
            Event(account: "a", .clearHistory(chat: "d", maxId: .max)),
        ]
        for (index, event) in events.enumerated() {
            _ = projection.apply(event, seq: UInt64(index + 1))
            projection.checkAllInvariants()
            #expect(try Projection(snapshot: projection.snapshot()) == projection, "after \(event.jsonString)")
        }
        #expect(projection.account("a")?.unread == UnreadCounts(unread: 0, badge: 0, unreadMentions: 0))
    }
}
