import Foundation

/// A producer on a thread of its own handing what it produces to the calling thread in
/// batches, in order: the two halves of a long replay (reading, checking and decoding records;
/// applying them) run on two cores.
///
/// Buffers circulate between the two threads: the producer fills one and queues it, the
/// consumer drains it and gives it back, and the producer empties it before filling it again.
/// At most `bufferCount` batches exist at once, so memory stays flat however long the run, and
/// the elements are released on the producer's thread, off the consumer's path.
final class BatchPipeline<Element: Sendable>: @unchecked Sendable {
    // @unchecked: `filled`, `drained`, `stopped` and `outcome` are only touched with
    // `condition` locked, and a buffer belongs to one thread at a time, handed over under it;
    // `producer` is set before the producer's thread starts and touched only by it after.
    private let condition = NSCondition()
    /// What the producer's thread runs. That thread releases it (and whatever it captured,
    /// such as the store) before it reports its outcome, so nothing of the caller's outlives
    /// ``run(batchSize:bufferCount:produce:consume:)`` on that thread: a store dropped right
    /// after a replay closes at once, on the caller's thread.
    private var producer: Producer?
    /// Batches the producer filled, oldest first, waiting for the consumer.
    private var filled: [[Element]] = []
    /// Buffers the consumer drained, waiting for the producer.
    private var drained: [[Element]]
    /// Set when the consumer is done (finished, stopped early or threw): the producer stops
    /// at its next hand-off.
    private var stopped = false
    /// How the producer ended; set once, after its last batch is queued, when it no longer
    /// touches anything the caller owns.
    private var outcome: Result<Void, any Error>?

    /// A producer: emits elements until `emit` returns false or it is done.
    typealias Producer = @Sendable (_ emit: (consuming Element) -> Bool) throws -> Void

    private init(bufferCount: Int, producer: @escaping Producer) {
        drained = Array(repeating: [], count: bufferCount - 1)
        self.producer = producer
    }

    /// Runs `produce` on a new thread and calls `consume` on the calling thread with each
    /// element it emits (lent in place: `consume` should not change it), in order, until
    /// `consume` returns false or every element is consumed; then rethrows what `produce`
    /// threw, after consuming every element emitted before. Returns once the producer has
    /// returned.
    ///
    /// `produce` gets an `emit` function that returns false once the consumer has stopped:
    /// `produce` should then return. Elements reach the consumer `batchSize` at a time (the
    /// last batch may be shorter); the producer runs ahead by at most `bufferCount - 1` batches.
    static func run(
        batchSize: Int, bufferCount: Int,
        produce: @escaping Producer,
        consume: (inout Element) throws -> Bool
    ) throws {
        precondition(batchSize > 0 && bufferCount >= 2, "a pipeline needs a batch and two buffers")
        let pipeline = BatchPipeline(bufferCount: bufferCount, producer: produce)
        let thread = Thread { pipeline.produce(batchSize: batchSize) }
        thread.name = "herald.pipeline"
        thread.start()
        defer { pipeline.stopAndWait() }
        while var batch = pipeline.nextBatch() {
            let going = try batch.withUnsafeMutableBufferPointer { elements in
                // In place (`inout`), so each element is lent to `consume` rather than copied:
                // a copy retains, on cache lines the producer's core wrote.
                for index in elements.indices {
                    guard try consume(&elements[index]) else { return false }
                }
                return true
            }
            guard going else { return }
            pipeline.giveBack(consume batch)
        }
        try pipeline.producerOutcome()
    }

    /// The producer's thread: fills buffers with what `producer` emits and queues each full one.
    private func produce(batchSize: Int) {
        var buffer: [Element] = []
        buffer.reserveCapacity(batchSize)
        let result: Result<Void, any Error>
        do {
            let produce = producer!
            producer = nil
            result = Result {
                try produce { element in
                    buffer.append(consume element)
                    return buffer.count < batchSize || handOff(&buffer, capacity: batchSize)
                }
            }
        }
        condition.lock()
        if !buffer.isEmpty && !stopped { filled.append(buffer) }
        outcome = result
        condition.broadcast()
        condition.unlock()
    }

    /// Queues the full `buffer` and replaces it with an emptied drained one, waiting for the
    /// consumer to give one back; false (and `buffer` left empty) once the consumer stopped.
    private func handOff(_ buffer: inout [Element], capacity: Int) -> Bool {
        condition.lock()
        filled.append(buffer)
        buffer = []
        condition.broadcast()
        while drained.isEmpty && !stopped { condition.wait() }
        guard !stopped else {
            condition.unlock()
            return false
        }
        buffer = drained.removeLast()
        condition.unlock()
        // Releases the consumed elements here, on the producer's thread.
        buffer.removeAll(keepingCapacity: true)
        buffer.reserveCapacity(capacity)
        return true
    }

    /// The next filled batch, waiting for one; `nil` when the producer has ended and every
    /// batch it queued was taken.
    private func nextBatch() -> [Element]? {
        condition.lock()
        defer { condition.unlock() }
        while filled.isEmpty && outcome == nil { condition.wait() }
        return filled.isEmpty ? nil : filled.removeFirst()
    }

    /// Returns a consumed batch to the producer, which empties and refills it.
    private func giveBack(_ batch: consuming [Element]) {
        condition.lock()
        drained.append(batch)
        condition.broadcast()
        condition.unlock()
    }

    /// Rethrows what the producer threw; called once `nextBatch()` returned `nil`.
    private func producerOutcome() throws {
        condition.lock()
        defer { condition.unlock() }
        try outcome!.get()
    }

    /// Tells the producer to stop and waits until it has returned.
    private func stopAndWait() {
        condition.lock()
        stopped = true
        condition.broadcast()
        while outcome == nil { condition.wait() }
        condition.unlock()
    }
}
