import HeraldEvents

/// A lifecycle fact behind the updates, for `herald audit` ("why did this notification
/// disappear?"). Reported only when ``Projection/Configuration/recordsChanges`` is set.
public enum Change: Hashable, Sendable {
    /// A notification was created (SEMANTICS §4 rule 5).
    case created(notificationId: Int64, groupId: Int64, chat: String, kind: NotificationKind, objectId: Int64)
    /// A partial notification got its full content (§4 rule 1).
    case upgraded(notificationId: Int64)
    /// An `edit` replaced a notification's content.
    case edited(notificationId: Int64)
    /// The user dismissed a notification.
    case dismissed(notificationId: Int64)
    /// A notification was cleared for good.
    case cleared(notificationId: Int64, reason: ClearReason)
    /// A message became unread (§4 rule 3).
    case becameUnread(chat: String, objectId: Int64)
    /// A `notify` created nothing, and why.
    case ignored(chat: String, kind: NotificationKind, objectId: Int64, reason: IgnoredReason)
    /// A group was created (it gets the account's next group id).
    case groupCreated(groupId: Int64, type: GroupType, chat: String)
    /// A `revoke` wiped the account.
    case accountReset
}

/// Why a `notify` created no notification.
public enum IgnoredReason: String, CaseIterable, Hashable, Sendable {
    /// An earlier `notify` already named the object (§4 rule 1).
    case duplicate
    /// The message is at or below the chat's `readMaxId` (§4 rule 2).
    case alreadyRead
    /// The message was deleted (§4 rule 2).
    case deleted
    /// The chat was muted at the message's date and the notification would go to its
    /// messages group (§4 rule 6).
    case muted
    /// The chat already has a secret chat notification (§4 rule 8).
    case secretChatExists
    /// The message is at or below the chat's cleared-history mark (§4 rule 2; 1.2).
    case historyCleared
    /// The `notify` was `unreadOnly`: the message counts but never notifies (§4 rule 5; 1.2).
    case unreadOnly
    /// The message is at or below its group's dismissal mark (§4 rule 7; 1.2).
    case belowDismissalMark
}
