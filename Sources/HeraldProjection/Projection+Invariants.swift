import HeraldEvents

extension Account {
    /// Checks, in debug builds, the invariants the fast paths rely on. Cheap: it looks at the
    /// account's totals and visible view, not at every chat and group (see
    /// ``checkAllInvariants()`` for the full check).
    func checkInvariants() {
        #if DEBUG
        precondition(unread >= 0 && badge >= 0 && unreadMentions >= 0, "negative count")
        precondition(badge <= unread, "inconsistent totals")
        precondition(nextNotificationId >= 1)
        guard !viewIsStale else { return }
        precondition(visible.count <= groupCountMax, "too many visible groups")
        precondition(
            visible.count == min(groupCountMax, candidates.count - candidateList.stale),
            "visible groups are not the first candidates")
        precondition(candidates.last.map(isLive) ?? true, "stale key at the top of the candidates")
        var previous: CandidateKey?
        for g in visible {
            let group = groups[Int(g)]
            precondition(group.isVisible && group.dirtyIndex == -1)
            precondition(!group.active.isEmpty, "visible group without active notification")
            let key = CandidateKey(date: group.candidateDate!, group: g)
            if let previous { precondition(key < previous, "visible groups out of order") }
            previous = key
            precondition(group.active.last!.id < nextNotificationId)
            precondition(group.newestDate == group.active.map(\.date).max(), "newest date out of step")
            let shown = group.active.suffix(groupSizeMax)
            precondition(zip(shown, shown.dropFirst()).allSatisfy { $0.id < $1.id }, "visible ids not increasing")
        }
        #endif
    }

    /// Checks every invariant of the account; O(size of the state). Used by tests.
    func checkAllInvariants() {
        var total = 0
        var totalBadge = 0
        var totalMentions = 0
        for (index, chat) in chats.enumerated() {
            precondition(chatIndex.index(of: chat.name) == index && chatIndex.count == chats.count)
            precondition(zip(chat.unread, chat.unread.dropFirst()).allSatisfy { $0.id < $1.id }, "unread not ascending")
            precondition(
                chat.unread.allSatisfy { !isForgettable($0, below: chat.forgottenBelow) },
                "a message no rule needs is remembered")
            precondition(chat.unread.allSatisfy { !$0.isUnread || $0.id > chat.forgottenBelow }, "unread at or below readMaxId")
            precondition(chat.deleted.allSatisfy { $0 > chat.forgottenBelow })
            precondition(chat.unreadMentions == chat.unread.count { $0.isUnreadMention })
            precondition(chat.unreadCount == chat.unread.count { $0.isUnread })
            precondition(chat.unread.allSatisfy { !$0.isUnreadMention || $0.isMention })
            precondition((chat.mutedUntil != 0) == mutedChats.contains(Int32(index)), "muted chats out of step")
            total += chat.unreadCount
            if !chat.isMuted(at: clock) { totalBadge += chat.unreadCount }
            totalMentions += chat.unreadMentions
            for type in GroupType.allCases {
                if let g = chat.group(type) {
                    precondition(groups[Int(g)].chat == Int32(index) && groups[Int(g)].type == type)
                }
            }
        }
        precondition(zip(mutedChats, mutedChats.dropFirst()).allSatisfy { $0 < $1 }, "muted chats not ascending")
        precondition(total == unread && totalBadge == badge && totalMentions == unreadMentions, "totals out of step")
        var liveCount = 0
        var candidateCount = 0
        var slots = Set<UInt32>()
        for (index, group) in groups.enumerated() {
            precondition(group.id == Int64(index) + 1)
            precondition(chats[Int(group.chat)].group(group.type) == Int32(index))
            for list in [group.active, group.dismissed] {
                precondition(zip(list, list.dropFirst()).allSatisfy { $0.id < $1.id }, "notifications not ascending")
                for notification in list {
                    precondition(live[notification.id] == Int32(index))
                    precondition(notification.id >= 1 && notification.id < nextNotificationId)
                    let packed = self.texts.texts(notification.textSlot)
                    let unpacked = packed.unpacked()
                    precondition(
                        PackedTexts(body: unpacked.body, sender: unpacked.sender, thread: unpacked.thread) == packed,
                        "packed texts do not round-trip")
                    precondition(slots.insert(notification.textSlot).inserted, "two notifications share a text slot")
                }
                liveCount += list.count
            }
            precondition(group.newestDate == group.active.map(\.date).max() ?? .min, "newest date out of step")
            precondition(group.candidateDate == group.lastDate)
            if group.type == .messages && !group.active.isEmpty {
                precondition(!chats[Int(group.chat)].isMuted(at: clock), "a muted chat's messages group has active notifications")
            }
            if group.candidateDate != nil { candidateCount += 1 }
            precondition(group.isVisible == visible.contains(Int32(index)))
        }
        precondition(liveCount == live.count, "live index out of step")
        precondition(texts.count == liveCount, "text slots out of step with the live notifications")
        precondition(candidateCount == candidates.count - candidateList.stale)
        precondition(candidateList.stale == candidates.count { !isLive($0) }, "stale candidate count out of step")
        precondition(zip(candidates, candidates.dropFirst()).allSatisfy { $0 < $1 }, "candidates not ascending")
    }
}

extension Projection {
    /// Checks every invariant of every account; O(size of the state). Traps on a violation.
    /// Tests call it; ``apply(_:seq:)`` runs a cheaper check after each event in debug builds.
    public func checkAllInvariants() {
        for account in settled.accountsByName.values { account.checkAllInvariants() }
    }
}
