/// A list of plain values in an ``EventScratch`` (what one event touched), emptied
/// after every event: emptying keeps the storage and costs one store, where
/// `Array.removeAll(keepingCapacity:)` ran the general range replacement (55–85
/// instructions) several times per applied event.
///
/// Only the first ``count`` elements of the storage are in the list.
struct ScratchList<Element: BitwiseCopyable & Sendable>: Sendable, RandomAccessCollection {
    /// The elements, then whatever earlier events left behind.
    private var storage: [Element] = []
    /// The number of elements in the list.
    private(set) var count = 0

    /// Creates an empty list.
    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    /// The element at `position` (`0..<count`).
    subscript(position: Int) -> Element {
        @inline(__always) get {
            precondition(position < count, "index out of range")
            return storage[position]
        }
    }

    /// Appends `element`, reusing storage left by earlier events.
    @inline(__always)
    mutating func append(_ element: Element) {
        if count < storage.count { storage[count] = element } else { storage.append(element) }
        count += 1
    }

    /// Empties the list, keeping its storage.
    @inline(__always)
    mutating func removeAll() { count = 0 }

    /// The elements at `range` as an array.
    func array(_ range: Range<Int>) -> [Element] {
        precondition(range.upperBound <= count, "range out of bounds")
        return Array(storage[range])
    }
}

extension ScratchList where Element: Comparable {
    /// Sorts the list in place: by insertion when short (an event reports one to three
    /// groups), which costs a fraction of the general sort.
    mutating func sort() {
        let count = self.count
        storage.withUnsafeMutableBufferPointer { list in
            guard count > 8 else {
                for i in 1..<Swift.max(1, count) {
                    let element = list[i]
                    var j = i
                    while j > 0 && element < list[j - 1] {
                        list[j] = list[j - 1]
                        j -= 1
                    }
                    list[j] = element
                }
                return
            }
            list[0..<count].sort()
        }
    }
}
