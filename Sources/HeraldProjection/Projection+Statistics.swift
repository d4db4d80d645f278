import HeraldEvents

extension Projection {
    /// Sizes of the projection's state, for `herald stats` and memory budgets.
    public struct Statistics: Hashable, Sendable {
        /// Accounts listed.
        public var accounts = 0
        /// Chats over all accounts.
        public var chats = 0
        /// Groups over all accounts (groups are never deleted before a `revoke`).
        public var groups = 0
        /// Notifications still active or dismissed (cleared ones are not kept).
        public var liveNotifications = 0
        /// Unread messages over all accounts.
        public var unreadMessages = 0
        /// Reaction, call and secret chat identities remembered for duplicate detection.
        public var rememberedObjects = 0
        /// Deleted message ids remembered (above each chat's `readMaxId`, or account-wide).
        public var rememberedDeletions = 0

        /// Creates empty statistics.
        public init() {}
    }

    /// Sizes of the current state; O(chats + groups).
    public var statistics: Statistics {
        var result = Statistics()
        for account in accountsByName.values {
            result.accounts += 1
            result.chats += account.chats.count
            result.groups += account.groups.count
            result.liveNotifications += account.live.count
            result.unreadMessages += account.unread
            result.rememberedDeletions += account.deletedEverywhere.count
            for chat in account.chats {
                result.rememberedObjects += chat.objects.count
                result.rememberedDeletions += chat.deleted.count
            }
        }
        return result
    }
}
