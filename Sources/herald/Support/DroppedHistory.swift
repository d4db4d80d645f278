import HeraldStore

extension Store {
    /// How the history before ``HistoryBounds/droppedThrough`` went, for a note: "compacted
    /// without an archive", or the export files archive retention wrote it to before removing
    /// it.
    func droppedHistoryExplanation() throws -> String {
        let exported = try exportedRanges()
        guard !exported.isEmpty else { return "was compacted without an archive" }
        let files = exported.map { "seqs \($0.first)…\($0.last) in \($0.directory)/\($0.file)" }
        return "expired under archive retention and was exported before removal (" + files.joined(separator: ", ") + ")"
    }
}
