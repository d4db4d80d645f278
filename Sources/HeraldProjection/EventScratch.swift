import HeraldEvents

/// A group touched by the current event, with what the client saw of it before the event.
struct DirtyGroup: Sendable {
    /// The group's index.
    var group: Int32
    /// Its `totalCount` before the event.
    var totalBefore: Int32
    /// Its visible ids before the event: `EventScratch.savedShown[shownStart..<shownEnd]`.
    var shownStart: Int32
    var shownEnd: Int32
}

/// What applying one event to an account works with besides the account's state: the groups
/// the event touched and what they showed before it, the visible list being computed, the
/// notification it created or changed, and its lifecycle changes.
///
/// It is not state. The projection owns one and lends it (`inout`) to each event of any
/// account; it is empty again when the event ends (``isClear``), and no comparison of
/// projections or accounts looks at it.
struct EventScratch: Sendable {
    /// Groups touched by the event.
    var dirty = ScratchList<DirtyGroup>()
    /// The ids each dirty group showed before the event.
    var savedShown = ScratchList<Int64>()
    /// Whether the event's updates are computed: ``Account/touch(_:_:)`` then saves what a
    /// group showed. Replays without updates skip that, and leave the view stale.
    var savesShownBefore = true
    /// The visible groups being computed.
    var nextVisible: [Int32] = []
    /// Groups whose updates are being computed.
    var reported = ScratchList<Int32>()
    /// The notification the event created, or 0.
    var createdId: Int64 = 0
    /// Whether that notification is silent.
    var createdSilent = false
    /// Its title and texts, kept while updates are computed so that reporting it does not
    /// copy them back out of the account's ``TextArena``.
    var createdTitle: String?
    var createdTexts: PackedTexts?
    /// The notification whose content the event changed, or 0.
    var contentChangedId: Int64 = 0
    /// Whether the event changed the view options in effect.
    var optionsChanged = false
    /// The `groupSizeMax` in effect before the event, when the event changed it.
    var previousGroupSizeMax: Int?
    /// The lifecycle changes of the event, when recorded.
    var changes: [Change] = []

    /// Creates an empty scratch.
    init() {}

    /// Whether nothing of an event is left (``savesShownBefore`` is back to its default).
    var isClear: Bool {
        dirty.isEmpty && savedShown.isEmpty && savesShownBefore && nextVisible.isEmpty && reported.isEmpty
            && createdId == 0 && !createdSilent && createdTitle == nil && createdTexts == nil
            && contentChangedId == 0 && !optionsChanged && previousGroupSizeMax == nil && changes.isEmpty
    }
}
