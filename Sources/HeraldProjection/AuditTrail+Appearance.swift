extension AuditTrail {
    /// What the trail knows of a notification's past when it comes into view after the
    /// event that created it: whether it was shown before decides the effect and its words.
    enum Appearance: Hashable, Sendable {
        /// Created out of view (`notShown`) and not shown since: `shown`.
        case firstTime
        /// Shown earlier in the trail, then hidden: `shownAgain`.
        case again
        /// Out of view at the base snapshot at `seq` the trail started from, and not shown
        /// since: compaction dropped the log before it without an archive, so whether it
        /// was shown then is not known, `shownAfterBase`.
        case afterBase(seq: UInt64)

        /// The effect's kind.
        var kind: String {
            switch self {
            case .firstTime: "shown"
            case .again: "shownAgain"
            case .afterBase: "shownAfterBase"
            }
        }

        /// What happened to the notification, after "notification N".
        var verb: String {
            switch self {
            case .firstTime: "shown for the first time"
            case .again: "shown again"
            case .afterBase: "came into view"
            }
        }

        /// How its group entered the top `groupCountMax`: only a notification shown before
        /// knows its group was there before.
        var groupArrival: String {
            switch self {
            case .again: "came back into"
            case .firstTime, .afterBase: "came into"
            }
        }

        /// What the log cannot tell, closing the sentence; empty when it tells everything.
        var caveat: String {
            guard case .afterBase(let seq) = self else { return "" }
            return "; whether it was shown before the base snapshot at seq \(seq) is not in the log"
        }
    }

    /// How notification `id` comes into view now; forgets what made this a first
    /// appearance (or one after the base), so that the next one is `shownAgain`.
    mutating func appearance(of id: Int64) -> Appearance {
        if neverShown.remove(id) != nil { return .firstTime }
        if outOfViewAtBase.remove(id) != nil { return .afterBase(seq: baseSeq) }
        return .again
    }
}
