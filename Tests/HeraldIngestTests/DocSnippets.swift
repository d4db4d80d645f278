// Every Swift snippet of the README, the DocC articles and the doc comments of HeraldStore and
// HeraldIngest, verbatim (`DocSnippetTests` checks that each one is here), so that building
// the tests type-checks them with the README's imports. Never called: each function only
// gives its snippet the names it uses. A snippet's `import` lines are among this file's. The
// README's embedding example is `ReadmeExampleTests`', which runs it.

import Dispatch
import HeraldEvents
import HeraldIngest
import HeraldProjection
import HeraldStore

// MARK: HeraldStore.docc

private func heraldStoreOverview() async throws {
    let store = try Store(path: "/path/to/herald.db")
    let applied = try await store.append(Event(account: "tg:1", .notify(.init(
        chat: "user:5", kind: .message, id: 42, date: 1_754_385_290, title: "Alice", body: "hi"))))
    let view = store.activeNotifications(account: "tg:1")
    store.close()
    _ = (applied, view)
}

private func gettingStartedOpen(appGroupDirectory: String) throws {
    let store = try Store(path: appGroupDirectory + "/herald.db")
    _ = store
}

func openStore(at path: String) async throws -> Store {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try Store(path: path) })
        }
    }
}

private func gettingStartedAppend(store: Store) async throws {
    let applied = try await store.append(Event(account: "tg:1", .read(chat: "user:5", maxId: 42)))
    for update in applied.updates { print(update) }
}

private func gettingStartedFollow(store: Store, render: ([Update]) -> Void) async throws {
    var lastHandledSeq: UInt64 = 0
    for try await applied in store.appliedEvents(after: lastHandledSeq) {
        render(applied.updates)
        lastHandledSeq = applied.seq
    }
}

// MARK: HeraldIngest.docc

private func pushesAndTheIMConnection(store: Store) throws {
    let message = RongCloudMessage(
        conversationType: 1, targetId: "u-ada", senderUserId: "u-ada",
        messageUId: "BPJK-E8N4-OAS4-O3RR", objectName: "RC:TxtMsg", sentTime: 1_754_390_000_123,
        content: "lunch at noon?", senderName: "Ada", offline: true)
    for event in try message.events(account: "rc:8luwapkvucoil|u-me") {
        try store.append(event)  // HeraldStore's Store
    }
}

// MARK: Doc comments of HeraldStore

private func storeErrorDoc(store: Store, event: Event) throws {
    do {
        try store.append(event)
    } catch let error as StoreError where error.code == .invalid {
        print("rejected:", error.underlying.map { "\($0)" } ?? error.message)
    }
}

private func storeHistoryDoc() throws {
    let store = try Store(path: "/path/to/herald.db")
    var from = try store.history.bounds().firstReadableSeq
    while case let page = try store.history.records(from: from, limit: 500), let last = page.last {
        for record in page { print(record.seq, record.event.account) }
        from = last.seq + 1
    }
}

private func storeMaintenanceDoc() throws {
    let maintenance = StoreMaintenance(path: "herald.db")
    let plan = try maintenance.compact(dryRun: true)
    print("compaction would archive \(plan.recordsArchived) records")
    try maintenance.compact()
    guard try maintenance.verify().isClean else { fatalError("run `herald salvage`") }
}

private func quarantineDoc(payload: String) throws {
    let store = try Store(path: "/path/to/herald.db")
    let ids = try store.quarantine.add([
        QuarantinedPayload(receivedAt: 1_754_385_290_000, format: "fcm", input: "-", line: 1,
                           reason: "missing field `title`", raw: Array(payload.utf8))
    ])
    for entry in try store.quarantine.all() { print(entry.id, entry.reason) }
    try store.quarantine.remove(id: ids[0])
}

private func keyringDoc(key: [UInt8]) throws {
    let store = try Store(path: "/path/to/herald.db")
    try store.keyring.add(StoredKey(id: 7, account: "tg:1", bytes: key), rebind: false)
    let keys = try store.keyring.all()
    try store.keyring.remove(id: 7)
    _ = keys
}

private func auditIndexDoc() throws {
    let store = try Store(path: "/path/to/herald.db")
    try store.auditIndex.catchUp(starting: true)
    let report = try store.auditReport(account: "tg:1", target: .notification(42), listingUnchanged: false)
    print(try store.auditIndex.statistics().through)
    _ = report
}

private func snapshotsDoc(events: [(Event, Source)]) throws {
    let store = try Store(path: "/path/to/herald.db")
    try store.append(contentsOf: events)
    store.snapshots.waitUntilIdle()
    print(try store.snapshots.seqs())  // oldest first, e.g. [50_000, 100_000]
}

// MARK: Doc comments of HeraldIngest

private func payloadDecoderDoc(store: Store, now: Int64, line: String) throws {
    let decoder = PayloadDecoder(format: nil, context: IngestContext(receivedAt: now))
    let decoded = try decoder.decode(ArraySlice(line.utf8))
    try store.append(contentsOf: decoded.events.map { ($0, decoded.source) })
}

private func ingestSessionDoc(store: Store, now: Int64, lines: [String]) throws {
    let decoder = PayloadDecoder(format: .telegram, context: IngestContext(account: "tg:1", receivedAt: now))
    var session = IngestSession(store: store, configuration: .init(decoder: decoder, input: "pushes.jsonl"))
    for (index, line) in lines.enumerated() {
        if case .rejected(let rejection) = session.add(ArraySlice(line.utf8), line: index + 1) {
            print("line \(index + 1): \(rejection.reason)")
        }
        if session.isBatchFull { try session.commit() }
    }
    let summary = try session.finish()
    _ = summary
}

private func payloadFramerDoc(lines: [ArraySlice<UInt8>], handle: (ArraySlice<UInt8>, Int) -> Void) {
    var framer = PayloadFramer()
    for (number, line) in lines.enumerated() {
        switch framer.feed(line, number: number + 1) {
        case .payload(let payload, let line): handle(payload, line)
        case .payloads(let framed): for (payload, line) in framed { handle(payload, line) }
        case .gathering: break
        }
    }
    for (payload, line) in framer.finish() { handle(payload, line) }
}
