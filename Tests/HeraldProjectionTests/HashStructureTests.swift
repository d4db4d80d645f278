@testable import HeraldProjection
import Testing
import HeraldTestSupport

/// The hand-written hash structures checked against `Dictionary` and `Set` on random operations
/// (swift-collections tests its types against reference models the same way).
@Suite struct HashStructureTests {
    @Test(arguments: [UInt64(1), 2, 3, 4])
    func notificationIndexMatchesDictionary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var index = NotificationIndex()
        var model: [Int64: Int32] = [:]
        let range = seed % 2 == 0 ? 64 : 5_000
        for step in 0..<30_000 {
            let id = Int64(1 + random.below(range))
            if random.chance(55) {
                let group = Int32(random.below(100))
                index[id] = group
                model[id] = group
            } else {
                index[id] = nil
                model[id] = nil
            }
            #expect(index[id] == model[id])
            if step % 1_000 == 0 {
                #expect(index.count == model.count)
                for (key, value) in model { #expect(index[key] == value) }
                #expect(index.pairs.count == model.count)
            }
        }
        var copy = NotificationIndex()
        for (key, value) in model.shuffled(using: &random) { copy[key] = value }
        #expect(copy == index)
    }

    @Test(arguments: [UInt64(5), 6, 7])
    func idSetMatchesSet(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var set = IdSet()
        var model: Set<Int64> = []
        let range = seed == 5 ? 40 : 20_000
        for step in 0..<20_000 {
            let id = Int64(1 + random.below(range))
            #expect(set.contains(id) == model.contains(id))
            if random.chance(90) {
                set.insert(id)
                model.insert(id)
            } else {
                // Remove everything at or below `id`, as a `read` does.
                set.removeAll { $0 <= id }
                model = model.filter { $0 > id }
            }
            if step % 500 == 0 {
                #expect(set.count == model.count && set.isEmpty == model.isEmpty)
                #expect(Set(set) == model)
            }
        }
        var copy = IdSet()
        for id in model.shuffled(using: &random) { copy.insert(id) }
        #expect(copy == set)
        copy.insert(Int64(range) + 1)
        #expect(copy != set)
    }

    @Test func nameTableInternsByBytes() {
        var table = NameTable()
        var model: [[UInt8]: Int] = [:]
        var random = SplitMix64(seed: 11)
        let alphabet = ["a", "b", "é", "e\u{301}", ":", "0", "\u{1F600}", "\0"]
        for _ in 0..<20_000 {
            let name = (0..<(1 + random.below(20))).map { _ in alphabet[random.below(alphabet.count)] }.joined()
            let key = Array(name.utf8)
            let (index, isNew) = table.intern(name)
            if let expected = model[key] {
                #expect(!isNew && index == expected)
            } else {
                #expect(isNew && index == model.count)
                model[key] = index
            }
            #expect(table.index(of: name) == index)
        }
        #expect(table.count == model.count)
        let removed = table.names[3]
        table.swapRemove(at: 3)
        #expect(table.index(of: removed) == nil)
        for (i, name) in table.names.enumerated() { #expect(table.index(of: name) == i) }
    }
}
