// HeraldEvents owns Herald's canonical events (SEMANTICS §1): the Swift values, their
// validation, their JSON (JSONL) form and the compact binary encoding the log stores.
// It performs no I/O and imports neither LMDB nor the projection.

/// One canonical event: something that happened to one account.
///
/// Build events directly or decode them from JSON with ``Event/init(json:)-(DataProtocol)``;
/// either way, call ``validate()`` (the store does) before trusting one.
public struct Event: Hashable, Sendable {
    /// The account the event belongs to: one logged-in user of one service. Never empty.
    public var account: String
    /// What happened.
    public var payload: Payload

    /// Creates an event for `account`.
    public init(account: String, _ payload: Payload) {
        self.account = account
        self.payload = payload
    }

    /// The type name used in the JSON form (`"notify"`, `"read"`, …).
    public var type: EventType { payload.type }

    /// The chat the event names, if any.
    public var chat: String? {
        switch payload {
        case .notify(let n): n.chat
        case .edit(let e): e.chat
        case .read(let chat, _), .readReactions(let chat, _), .endCall(let chat, _): chat
        case .readMentions(let chat, _), .clearHistory(let chat, _): chat
        case .delete(_, let chat), .readAll(let chat): chat
        case .chatSettings(let s): s.chat
        case .dismiss, .dismissGroup, .options, .tick, .revoke, .note: nil
        }
    }
}

extension Event {
    /// What happened, with the fields of each type of SEMANTICS §1.
    public enum Payload: Hashable, Sendable {
        /// An incoming object that may notify.
        case notify(Notify)
        /// New content for an object already notified.
        case edit(Edit)
        /// The user read the chat's history up to message id `maxId`.
        case read(chat: String, maxId: Int64)
        /// The user read everything in `chat` (in every chat of the account when `nil`), for
        /// services whose message ids carry no order (SEMANTICS 1.2). JSON type `readAll`.
        case readAll(chat: String?)
        /// The user saw the mentions `ids` of `chat` (every unread mention of the chat when
        /// `nil`); a history `read` leaves mentions unread (SEMANTICS 1.2).
        case readMentions(chat: String, ids: [Int64]?)
        /// Messages deleted; without `chat`, the ids match in every chat of the account.
        case delete(ids: [Int64], chat: String?)
        /// The chat's history up to `maxId` was cleared (SEMANTICS 1.2): JSON type `delete`
        /// with `chat` and `maxId` instead of `ids`.
        case clearHistory(chat: String, maxId: Int64)
        /// Reactions on those messages were seen.
        case readReactions(chat: String, ids: [Int64])
        /// The call ended or was answered elsewhere.
        case endCall(chat: String, id: Int64)
        /// The user swiped one notification away.
        case dismiss(notificationId: Int64)
        /// The user dismissed a group, up to `maxNotificationId` (all when `nil`).
        case dismissGroup(groupId: Int64, maxNotificationId: Int64?)
        /// View settings; `nil` fields keep their value.
        case options(groupCountMax: Int?, groupSizeMax: Int?)
        /// Per-chat settings; `nil` fields keep their value.
        case chatSettings(ChatSettings)
        /// The time is now `now` (Unix seconds): advances the account's clock (SEMANTICS 1.2 §2).
        case tick(now: Int64)
        /// The session was revoked: the account's state is wiped.
        case revoke
        /// A received payload that changes no state, kept for audit.
        case note(source: String?, reason: String?)

        /// The type name of this payload.
        public var type: EventType {
            switch self {
            case .notify: .notify
            case .edit: .edit
            case .read: .read
            case .readAll: .readAll
            case .readMentions: .readMentions
            case .delete, .clearHistory: .delete
            case .readReactions: .readReactions
            case .endCall: .endCall
            case .dismiss: .dismiss
            case .dismissGroup: .dismissGroup
            case .options: .options
            case .chatSettings: .chatSettings
            case .tick: .tick
            case .revoke: .revoke
            case .note: .note
            }
        }
    }

    /// The fields of a `notify` event.
    public struct Notify: Hashable, Sendable {
        public var chat: String
        public var kind: NotificationKind
        /// The object's id inside its chat and class (a message id, a call id, …).
        public var id: Int64
        /// Unix seconds.
        public var date: Int64
        public var silent: Bool
        /// The content came from a push payload only and may be upgraded later.
        public var partial: Bool
        /// The message counts as unread but never notifies: one pulled on reconnect that the
        /// app does not notify about, or dated before the session logged in (SEMANTICS 1.2).
        public var unreadOnly: Bool = false
        public var title: String?
        /// Body, sender and thread, packed as the notification the event creates keeps them
        /// (it shares them); read and set them through ``body``, ``sender`` and ``thread``.
        package var texts: PackedTexts

        public var body: String? { get { texts[.body] } set { texts[.body] = newValue } }
        public var sender: String? { get { texts[.sender] } set { texts[.sender] = newValue } }
        public var thread: String? { get { texts[.thread] } set { texts[.thread] = newValue } }

        /// Creates the fields of a `notify` event.
        public init(
            chat: String, kind: NotificationKind, id: Int64, date: Int64,
            silent: Bool = false, partial: Bool = false, unreadOnly: Bool = false,
            title: String? = nil, body: String? = nil, sender: String? = nil, thread: String? = nil
        ) {
            self.init(
                chat: chat, kind: kind, id: id, date: date, silent: silent, partial: partial, title: title,
                texts: PackedTexts(body: body, sender: sender, thread: thread))
            self.unreadOnly = unreadOnly
        }

        /// Creates the fields of a `notify` event with its texts already packed.
        package init(
            chat: String, kind: NotificationKind, id: Int64, date: Int64, silent: Bool, partial: Bool,
            title: String?, texts: PackedTexts
        ) {
            self.chat = chat
            self.kind = kind
            self.id = id
            self.date = date
            self.silent = silent
            self.partial = partial
            self.title = title
            self.texts = texts
        }
    }

    /// The fields of an `edit` event.
    public struct Edit: Hashable, Sendable {
        public var chat: String
        public var kind: NotificationKind
        public var id: Int64
        public var title: String?
        public var body: String?
        public var partial: Bool

        /// Creates the fields of an `edit` event.
        public init(
            chat: String, kind: NotificationKind, id: Int64,
            title: String? = nil, body: String? = nil, partial: Bool = false
        ) {
            self.chat = chat
            self.kind = kind
            self.id = id
            self.title = title
            self.body = body
            self.partial = partial
        }
    }

    /// The fields of a `chatSettings` event; `nil` keeps the current value.
    public struct ChatSettings: Hashable, Sendable {
        /// `mutedUntil` of `muted: true`: muted for good (SEMANTICS 1.2 §1).
        public static let mutedForever: Int64 = 2_147_483_647

        public var chat: String
        /// The Unix time the chat's mute runs to (0: not muted), compared with each message's
        /// date (SEMANTICS 1.2 §4 rule 6).
        public var mutedUntil: Int64?
        public var disableMentions: Bool?
        public var disablePinned: Bool?

        /// Creates the fields of a `chatSettings` event.
        public init(chat: String, mutedUntil: Int64? = nil, disableMentions: Bool? = nil, disablePinned: Bool? = nil) {
            self.chat = chat
            self.mutedUntil = mutedUntil
            self.disableMentions = disableMentions
            self.disablePinned = disablePinned
        }

        /// Creates the fields of a `chatSettings` event with the `muted` alias: `true` is
        /// ``mutedForever``, `false` is 0.
        public init(chat: String, muted: Bool?, disableMentions: Bool? = nil, disablePinned: Bool? = nil) {
            self.init(
                chat: chat, mutedUntil: muted.map { $0 ? Self.mutedForever : 0 }, disableMentions: disableMentions,
                disablePinned: disablePinned)
        }

        /// The `muted` alias of ``mutedUntil``: `true` for ``mutedForever``, `false` for 0, `nil`
        /// for any other date or none; setting it sets ``mutedUntil`` to the date it stands for.
        public var muted: Bool? {
            get {
                switch mutedUntil {
                case Self.mutedForever: true
                case 0: false
                default: nil
                }
            }
            set { mutedUntil = newValue.map { $0 ? Self.mutedForever : 0 } }
        }
    }
}

/// The `type` of a canonical event, as written in its JSON form.
public enum EventType: String, CaseIterable, Hashable, Sendable {
    case notify, edit, read, delete, readReactions, endCall, dismiss, dismissGroup
    case options, chatSettings, revoke, note
    case readAll, readMentions, tick
}
