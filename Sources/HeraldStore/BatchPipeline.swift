import Foundation

/// A producer on a thread of its own handing what it produces to the calling thread in
/// batches, in order: the two halves of a long replay (reading, checking and decoding records;
/// applying them) run on two cores.
///
/// Buffers circulate between the two threads: the producer fills one and queues it, the
/// consumer drains it and gives it back, and the producer empties it before filling it again.
/// At most `bufferCount` batches exist at once, so memory stays flat however long the run, and
/// the elements are released on the producer's thread, off the consumer's path.
///
/// A batch is an array of elements, or any ``PipelineBatch`` (one that also owns the bytes
/// its elements refer to, say), which the producer fills in place.
final class BatchPipeline<Batch: PipelineBatch & Sendable>: @unchecked Sendable {
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
    private var filled: [Batch] = []
    /// Buffers the consumer drained, waiting for the producer.
    private var drained: [Batch]
    /// Set when the consumer is done (finished, stopped early or threw): the producer stops
    /// at its next hand-off.
    private var stopped = false
    /// How the producer ended; set once, after its last batch is queued, when it no longer
    /// touches anything the caller owns.
    private var outcome: Result<Void, any Error>?

    /// A producer: adds to the batch being filled through `emit` (one element per call, by
    /// `add`; what `add` throws, `emit` rethrows, and the producer should then throw it) until
    /// `emit` returns false or it is done.
    typealias Producer = @Sendable (_ emit: (_ add: (inout Batch) throws -> Void) throws -> Bool) throws -> Void

    private init(bufferCount: Int, producer: @escaping Producer) {
        drained = (1..<bufferCount).map { _ in Batch() }
        self.producer = producer
    }

    /// Runs `produce` on a new thread and calls `consume` on the calling thread with each
    /// batch it fills (lent in place: `consume` should not change its elements), in order,
    /// until `consume` returns false or every batch is consumed; then rethrows what `produce`
    /// threw, after consuming every batch filled before (the last one may be partly filled).
    /// Returns once the producer has returned.
    ///
    /// `produce` gets an `emit` function that returns false once the consumer has stopped:
    /// `produce` should then return. Batches reach the consumer when they hold `batchSize`
    /// elements (the last may hold fewer); the producer runs ahead by at most
    /// `bufferCount - 1` batches.
    static func run(
        batchSize: Int, bufferCount: Int,
        produce: @escaping Producer,
        consumeBatch consume: (inout Batch) throws -> Bool
    ) throws {
        precondition(batchSize > 0 && bufferCount >= 2, "a pipeline needs a batch and two buffers")
        let pipeline = BatchPipeline(bufferCount: bufferCount, producer: produce)
        let thread = Thread { pipeline.produce(batchSize: batchSize) }
        thread.name = "herald.pipeline"
        thread.start()
        defer { pipeline.stopAndWait() }
        while var batch = pipeline.nextBatch() {
            guard try consume(&batch) else { return }
            pipeline.giveBack(consume batch)
        }
        try pipeline.producerOutcome()
    }

    /// The producer's thread: fills buffers with what `producer` emits and queues each full one.
    private func produce(batchSize: Int) {
        var buffer = Batch()
        buffer.empty(reservingCapacity: batchSize)
        let result: Result<Void, any Error>
        do {
            let produce = producer!
            producer = nil
            result = Result {
                try produce { add in
                    try add(&buffer)
                    return buffer.count < batchSize || handOff(&buffer, capacity: batchSize)
                }
            }
        }
        condition.lock()
        if buffer.count > 0 && !stopped { filled.append(buffer) }
        outcome = result
        condition.broadcast()
        condition.unlock()
    }

    /// Queues the full `buffer` and replaces it with an emptied drained one, waiting for the
    /// consumer to give one back; false (and `buffer` left empty) once the consumer stopped.
    private func handOff(_ buffer: inout Batch, capacity: Int) -> Bool {
        condition.lock()
        filled.append(buffer)
        buffer = Batch()
        condition.broadcast()
        while drained.isEmpty && !stopped { condition.wait() }
        guard !stopped else {
            condition.unlock()
            return false
        }
        buffer = drained.removeLast()
        condition.unlock()
        // Releases the consumed elements here, on the producer's thread.
        buffer.empty(reservingCapacity: capacity)
        return true
    }

    /// The next filled batch, waiting for one; `nil` when the producer has ended and every
    /// batch it queued was taken.
    private func nextBatch() -> Batch? {
        condition.lock()
        defer { condition.unlock() }
        while filled.isEmpty && outcome == nil { condition.wait() }
        return filled.isEmpty ? nil : filled.removeFirst()
    }

    /// Returns a consumed batch to the producer, which empties and refills it.
    private func giveBack(_ batch: consuming Batch) {
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

/// What a ``BatchPipeline`` hands over: elements the producer adds, emptied for reuse.
protocol PipelineBatch {
    /// An empty batch.
    init()
    /// How many elements it holds.
    var count: Int { get }
    /// Removes every element, keeping (at least) room for `capacity` of them.
    mutating func empty(reservingCapacity capacity: Int)
}

extension Array: PipelineBatch {
    mutating func empty(reservingCapacity capacity: Int) {
        removeAll(keepingCapacity: true)
        reserveCapacity(capacity)
    }
}
