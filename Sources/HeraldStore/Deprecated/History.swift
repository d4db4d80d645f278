// The history readers and "last seq" accessors `Store` had before ``StoreHistory``: each
// forwards to it and answers as before.

extension Store {
    @available(*, deprecated, message: "use history.bounds().lastSeqInLog, or lastSeq for the applied state")
    public func committedLastSeq() throws -> UInt64 { try history.bounds().lastSeqInLog }

    @available(*, deprecated, message: "use history.bounds().firstSeqInLog")
    public func firstSeq() throws -> UInt64? { try history.bounds().firstSeqInLog }

    @available(*, deprecated, message: "use history.bounds().highWaterSeq")
    public func highWaterSeq() throws -> UInt64 { try history.bounds().highWaterSeq }

    @available(*, deprecated, message: "use history.bounds().droppedThrough")
    public func historyDroppedThrough() throws -> UInt64? { try history.bounds().droppedThrough }

    @available(*, deprecated, message: "use history.bounds().purgedRanges")
    public func purgedRanges() throws -> [ClosedRange<UInt64>] { try history.bounds().purgedRanges }

    @available(*, deprecated, message: "use history.bounds().hasArchive")
    public var hasArchive: Bool { (try? history.archive()) != nil }

    @available(*, deprecated, message: "use history.bounds().recordCountInLog")
    public func recordCount() throws -> Int { try history.bounds().recordCountInLog }

    @available(*, deprecated, renamed: "history.missingArchiveThrough()")
    public func missingArchiveThrough() throws -> UInt64? { try history.missingArchiveThrough() }

    @available(*, deprecated, renamed: "history.lastSeq(recordedAtOrBefore:)")
    public func lastSeq(recordedAtOrBefore time: Int64) throws -> UInt64? { try history.lastSeq(recordedAtOrBefore: time) }

    @available(*, deprecated, message: "use history.records(from:limit:), which reads the archive too")
    public func records(from: UInt64 = 1, through: UInt64 = .max) throws -> [LogRecord] {
        try history.logRecords(from: from, through: through)
    }

    @available(*, deprecated, renamed: "history.records(from:limit:)")
    public func records(from: UInt64, limit: Int) throws -> [LogRecord] { try history.records(from: from, limit: limit) }

    @available(*, deprecated, renamed: "history.records(from:limit:)")
    public func records(from: UInt64, limit: Int) async throws -> [LogRecord] { try await history.records(from: from, limit: limit) }

    @available(*, deprecated, message: "use history.forEach(from:through:_:), which reads the archive too")
    public func forEachRecord(from: UInt64 = 1, through: UInt64 = .max, _ body: (LogRecord) throws -> Bool) throws {
        try history.forEachLogRecord(from: from, through: through, body)
    }

    @available(*, deprecated, message: "use history.forEach(from:through:_:)")
    public func forEachRecord(
        includingArchive: Bool, from: UInt64 = 1, through: UInt64 = .max, _ body: (LogRecord) throws -> Bool
    ) throws {
        try history.forEachRecord(includingArchive: includingArchive, from: from, through: through, account: nil, body)
    }

    @available(*, deprecated, message: "use history.forEach(from:through:account:_:)")
    public func forEachRecord(
        includingArchive: Bool, from: UInt64 = 1, through: UInt64 = .max, account: String,
        _ body: (LogRecord) throws -> Bool
    ) throws {
        try history.forEachRecord(includingArchive: includingArchive, from: from, through: through, account: account, body)
    }

    @available(*, deprecated, message: "read records with history.forEach(from:through:_:)")
    public func forEachRawRecord(
        from: UInt64 = 1, through: UInt64 = .max, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try history.forEachRawLogRecord(from: from, through: through, body)
    }
}
