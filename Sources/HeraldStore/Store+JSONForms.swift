import HeraldEvents
import HeraldProjection

// The JSON forms of statistics and audits (schema/stats.schema.json,
// schema/audit-line.schema.json), written here once for `herald` and `herald serve` alike.

extension Store.Statistics {
    /// The three count tables (type, account, format), each a list of names (byte-exact,
    /// SEMANTICS 1.1 §2) and record counts, unordered.
    package var countTables: [(title: String, counts: [(name: String, count: Int)])] {
        [
            ("type", byType.map { (name: $0.key, count: $0.value) }),
            ("account", byAccount.map { (name: $0.name, count: $0.records) }),
            ("format", byFormat.map { (name: $0.key, count: $0.value) }),
        ]
    }

    /// The object of `herald stats --json`; count tables in byte order of their names.
    package var jsonString: String {
        var writer = JSONWriter()
        writer.objectStart()
        writer.key("records"); writer.int(records)
        if let firstSeq { writer.key("firstSeq"); writer.int(firstSeq) }
        writer.key("lastSeq"); writer.int(lastSeq)
        writer.key("logBytes"); writer.int(logBytes)
        writer.key("fileBytes"); writer.int(fileBytes)
        writer.key("mapBytes"); writer.int(mapBytes)
        writer.key("usedBytes"); writer.int(usedBytes)
        writer.key("snapshotSeqs"); writer.ints(snapshotSeqs)
        writer.key("quarantined"); writer.int(quarantined)
        writer.key("quarantineBytes"); writer.int(quarantineBytes)
        if let auditIndex {
            writer.key("auditIndex")
            writer.objectStart()
            auditIndex.writeJSONFields(to: &writer)
            writer.objectEnd()
        }
        for ((_, counts), name) in zip(countTables, ["byType", "byAccount", "byFormat"]) {
            writer.key(name)
            writer.objectStart()
            for (key, count) in counts.sorted(by: { NameKey($0.name) < NameKey($1.name) }) { writer.key(key); writer.int(count) }
            writer.objectEnd()
        }
        writer.objectEnd()
        return writer.string
    }
}

extension AuditIndex.Statistics {
    /// Its fields (`through`, `buckets`, `seqChunks`, `bytes`) into the object `writer` has
    /// open: `stats --json`'s `auditIndex` and `herald index --json` (which adds its time).
    package func writeJSONFields(to writer: inout JSONWriter) {
        writer.key("through"); writer.int(through)
        writer.key("buckets"); writer.int(buckets)
        writer.key("seqChunks"); writer.int(seqChunks)
        writer.key("bytes"); writer.int(bytes)
    }
}

extension Store.AuditReport {
    /// The lines of `herald audit --json`: first, when the history starts at a snapshot that
    /// holds the target, `{"seq":…,"atBase":true,"effects":[…]}`; then one object per event
    /// that changed the target (with `all`, per event that named it too).
    package func jsonLines(all: Bool = false) -> [String] {
        var lines: [String] = []
        if !atBase.isEmpty {
            var writer = JSONWriter()
            writer.objectStart()
            writer.key("seq"); writer.int(baseSeq)
            writer.key("atBase"); writer.bool(true)
            Self.writeEffects(atBase, to: &writer)
            writer.objectEnd()
            lines.append(writer.string)
        }
        for line in self.lines where all || line.changesTarget {
            var writer = JSONWriter()
            writer.objectStart()
            writer.key("seq"); writer.int(line.record.seq)
            writer.key("recorded"); writer.string(ISO8601.string(milliseconds: line.record.recordedAt))
            writer.key("format"); writer.string(line.record.source.format)
            writer.key("event"); line.record.event.writeJSON(to: &writer)
            Self.writeEffects(line.effects, to: &writer)
            writer.objectEnd()
            lines.append(writer.string)
        }
        return lines
    }

    static func writeEffects(_ effects: [AuditTrail.Effect], to writer: inout JSONWriter) {
        writer.key("effects")
        writer.arrayStart()
        for effect in effects {
            writer.objectStart()
            writer.key("kind"); writer.string(effect.kind)
            if let id = effect.notificationId { writer.key("notificationId"); writer.int(id) }
            if let id = effect.groupId { writer.key("groupId"); writer.int(id) }
            writer.key("text"); writer.string(effect.text)
            writer.objectEnd()
        }
        writer.arrayEnd()
    }
}

extension Store.AuditLine {
    /// Whether the event changed the target, rather than only naming it (`noEffect`).
    public var changesTarget: Bool { effects.contains { $0.kind != "noEffect" } }
}
